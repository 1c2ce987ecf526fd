"""`scan --ray [ADDRESS]`: the options, and the Source that runs the scan's per-file work on a Ray
cluster (dataset/ray_runner.py). Ray is imported only when --ray is given."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def add_ray_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ray", nargs="?", const="auto", metavar="ADDRESS",
                   help="read the files as Ray tasks on an existing cluster (ADDRESS host:port, default auto: "
                        'the cluster of this machine); needs pip install "eagle3-tui[ray]"')
    p.add_argument("--ray-local-roots", action="store_true",
                   help="with --ray: each node holds its own files under TARGET on its own disk; each node "
                        "lists and reads its own (default: TARGET is on a file system every node sees)")
    p.add_argument("--ray-batch", type=int, metavar="N",
                   help="with --ray: files per Ray task (default: 4 tasks per cluster CPU, 16 to 256 files)")


def scan_source(args: argparse.Namespace, target, open_source: Callable[[], Any]):
    """The Source `scan` reads through: open_source()'s without --ray; with it, a RaySource
    here, or for an SSH target its source told to scan on the box's own Ray cluster (the agent
    connects there: ADDRESS as the box sees it, auto the cluster the box belongs to); or the
    exit code of a problem (said in one line on stderr)."""
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.commands._targets import say

    if args.ray is None:
        if args.ray_local_roots or args.ray_batch is not None:
            say("scan: --ray-local-roots and --ray-batch go with --ray")
            return 2
        return open_source()
    if args.ray_batch is not None and args.ray_batch < 1:
        say(f"scan: --ray-batch {args.ray_batch}: expected 1 or more")
        return 2
    from eagle3_tui.engines.scan.ray_tasks import address_problem

    if (problem := address_problem(args.ray)) is not None:  # refused, not tried (a box's too)
        say(f"scan: {problem}")
        return 2
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.dataset.ray_choice import ray_source
    from eagle3_tui.dataset.ray_runner import RayMissing, import_ray

    if not target.is_remote:
        try:
            import_ray()
        except RayMissing as err:
            say(f"scan: --ray: {err}")
            return 2
    return ray_source(open_source() if target.is_remote else None, args.ray,
                      local_roots=args.ray_local_roots, batch=args.ray_batch, quiet=True)
