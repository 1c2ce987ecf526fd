"""serve-check's --live part: its options and the run through the Source (its text:
dataset/serving_live.py).

    live: vLLM 0.32.0 (installed) feeds the drafter b 1, 14, 26; the data holds b 2, 15, 27: differs
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from eagle3_tui.names import printable

if TYPE_CHECKING:
    from eagle3_tui.sources.base import Source


def add_live_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("running the engine you serve with (on the data's machine)")
    g.add_argument("--live", metavar="ENGINE", choices=["vllm", "sglang", "tokenspeed", "trtllm"],
                   help="run this engine on a training prompt with the drafter and name the layers it feeds the "
                        "drafter, identified by the target model (vllm; the others say they are not available live)")
    g.add_argument("--engine-python", metavar="PYTHON",
                   help="the Python of the environment the engine is installed in, on the data's machine "
                        "(default: the Python that computes there)")
    g.add_argument("--accept", type=int, default=0, metavar="N",
                   help="with --live: speculative decoding on N training prompts, the engine's measured "
                        "acceptance per draft position beside accept's offline prediction")
    g.add_argument("--live-timeout", type=float, default=900.0, metavar="SECONDS",
                   help="stop the engine after this long (default 900)")


async def run_live(args: argparse.Namespace, source: Source, root: str, model: str, drafter: str) -> dict[str, Any]:
    """The live report through the source (here, or on the box by its agent), or {"engine",
    "error"}; progress lines on stderr. Ctrl+C stops the engine (cancelling the call)."""

    def progress(text: str) -> None:
        sys.stderr.write(f"live: {printable(text, message=True)}\n")
        sys.stderr.flush()

    return dict(await source.serve_live(root, model=model, drafter=drafter, engine=args.live,
                                        python=args.engine_python, accept=max(0, args.accept),
                                        timeout=args.live_timeout, progress=progress))
