"""`eagle3-tui [TARGET]`: open the TUI. Imports Textual only when the app starts; never torch."""

from __future__ import annotations

import argparse
import gc
import os
import sys

from eagle3_tui.commands._options import add_trust_argument
from eagle3_tui.commands._ray import add_ray_arguments
from eagle3_tui.engines.read import torch_gate
from eagle3_tui.userdirs import writes_inside


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="eagle3-tui",
        description="Browse EAGLE-3 hidden-state files locally or over SSH. "
        "Subcommands (summary, ls, compare, demo, bookmarks) run without the TUI; "
        "see `eagle3-tui --help`.",
    )
    parser.add_argument("target", nargs="?", default=".", metavar="TARGET",
                        help="folder or file: /data/x, host:/data/x, user@host:2222:/data/x (default: .)")
    parser.add_argument("--remote-python", metavar="P",
                        help="Python on the remote host that has torch (default: python3)")
    parser.add_argument("--accept-new-host-key", action="store_true",
                        help="trust an SSH host key seen for the first time without asking")

    add_trust_argument(parser)
    parser.add_argument("--data-dir", metavar="D",
                        help="where bookmarks and settings live (default: the user data folder)")
    parser.add_argument("--tokenizer", metavar="PATH",
                        help="tokenizer.json or a model folder with one: a plain path is on this "
                        "machine (it decodes a box's data here too), host:/path on the data's host; "
                        "tokens as text (default: $EAGLE3_TUI_TOKENIZER, else --model's)")
    parser.add_argument("--model", metavar="DIR",
                        help="the target model's Hugging Face folder, on the data's host: which layer "
                        "each slot holds")
    parser.add_argument("--drafter", metavar="DIR",
                        help="the trained EAGLE-3 drafter's folder, on the data's host: acceptance")
    parser.add_argument("--vocab-mapping", metavar="FILE",
                        help="the drafter's vocab_mapping.pt, on the data's host: per sample, the share of loss tokens in the "
                        "draft vocabulary (default: DATASET/vocab_mapping/vocab_mapping.pt above the folder)")

    parser.add_argument("--engine-python", metavar="PYTHON",
                        help="the Python your serving engine (vLLM) is installed in: v in the dataset view's "
                        "serve-check rows runs it live (default: this one)")
    add_ray_arguments(parser)  # D (the dataset view) scans on the cluster, as `scan --ray` does
    return parser


def run_app(target: str = ".", *, remote_python: str | None = None,
            accept_new_host_key: bool = False, data_dir: str | None = None,
            tokenizer: str | None = None, model: str | None = None, drafter: str | None = None,
            vocab_mapping: str | None = None, ray=None, engine_python: str | None = None) -> int:
    # Start-up makes ~85,000 objects that live as long as the app (modules, classes, widgets):
    # with the collector on, 150 collections walked them before the first frame (~50 ms, one
    # full one 30-40 ms). The collector is off until the app has drawn its first frame; then
    # it collects once, freezes what is left and turns back on (Eagle3App.on_mount).
    gc.disable()
    # lazy: pulls Textual in, kept off --help's imports
    from eagle3_tui.ui.app import Eagle3App
    from eagle3_tui.ui.start.analysis import Analysis

    gc.freeze()  # the modules and classes just imported: never garbage

    app = Eagle3App(target, remote_python=remote_python, accept_new_host_key=accept_new_host_key,
                    data_dir=data_dir, analysis=Analysis.from_options(tokenizer, model, drafter, vocab_mapping, engine_python),
                    ray=ray)
    app.run()
    return int(app.return_code or 0)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)

    torch_gate.trust_data(args.trust_data)
    data_dir = os.path.abspath(args.data_dir) if args.data_dir else None
    if (problem := _writes_inside(args.target, data_dir)) is not None:
        print(f"eagle3-tui: {problem}", file=sys.stderr)
        return 2
    ray = _ray_options(args)
    if isinstance(ray, int):
        return ray
    return run_app(args.target, remote_python=args.remote_python,
                   accept_new_host_key=args.accept_new_host_key, data_dir=data_dir,
                   tokenizer=args.tokenizer, model=args.model, drafter=args.drafter,
                   vocab_mapping=args.vocab_mapping, ray=ray, engine_python=args.engine_python)


def _writes_inside(target: str, data_dir: str | None) -> str | None:
    """Why the data dir or the cache dir the user chose cannot be used with a local TARGET (it is
    inside it: bookmarks.sqlite3 and exports would land in the dataset), else None."""
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.target import TargetError, parse_target

    try:
        parsed = parse_target(target)
    except TargetError:
        return None  # the app says what is wrong with the target
    return None if parsed.is_remote else writes_inside(parsed.path, data_dir)


def _ray_options(args: argparse.Namespace):
    """--ray's options for the dataset view, None without it, or the exit code of a problem
    (one line: Ray missing here for a local target, an option without --ray)."""
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.target import TargetError, parse_target

    if args.ray is None:
        if args.ray_local_roots or args.ray_batch is not None:
            print("eagle3-tui: --ray-local-roots and --ray-batch go with --ray", file=sys.stderr)
            return 2
        return None
    if args.ray_batch is not None and args.ray_batch < 1:
        print(f"eagle3-tui: --ray-batch {args.ray_batch}: expected 1 or more", file=sys.stderr)
        return 2
    from eagle3_tui.engines.scan.ray_tasks import address_problem

    if (problem := address_problem(args.ray)) is not None:
        print(f"eagle3-tui: {problem}", file=sys.stderr)
        return 2
    try:
        remote = parse_target(args.target).is_remote
    except TargetError:
        remote = False  # the app says what is wrong with the target
    if not remote:
        from eagle3_tui.dataset.ray_runner import RayMissing, import_ray

        try:
            import_ray()
        except RayMissing as err:
            print(f"eagle3-tui: --ray: {err}", file=sys.stderr)
            return 2
    from eagle3_tui.ui.dataset.source import RayOptions

    return RayOptions(args.ray, args.ray_local_roots, args.ray_batch)
