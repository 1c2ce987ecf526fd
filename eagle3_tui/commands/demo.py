"""`eagle3-tui demo [DIR] [--write-only] [--seed N]`: write the demo dataset, then open the TUI on it
with the demo's tokenizer (tokens as text), its target model (the layers) and its drafter when it
has one."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from typing import TYPE_CHECKING

from eagle3_tui.commands import tui

if TYPE_CHECKING:
    from eagle3_tui.demo.manifest import DemoManifest

DEFAULT_DIR = "eagle3-demo"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", nargs="?", default=DEFAULT_DIR, metavar="DIR",
                        help=f"where to write the dataset (default: ./{DEFAULT_DIR}); "
                        "must be new, empty or an earlier demo")
    parser.add_argument("--write-only", action="store_true", help="write the dataset and exit, do not open the TUI")
    parser.add_argument("--seed", type=int, default=0, help="random seed (the same seed writes the same bytes)")
    parser.add_argument("--no-drafter", action="store_true",
                        help="do not train the demo's drafter (saves a few seconds; no acceptance figures)")
    parser.add_argument("--real", action="store_true",
                        help="build the demo from a real pretrained model (SmolLM2-135M-Instruct: its own answers, "
                        "its massive activations, a drafter trained on its states; needs the [real] extra, "
                        "a few minutes)")


def _tui_available() -> bool:
    try:
        return importlib.util.find_spec("eagle3_tui.commands.tui") is not None
    except ImportError:
        return False


def run(args: argparse.Namespace) -> int:
    # lazy: pulls torch in: loaded when used
    from eagle3_tui.demo.dataset import write_demo

    directory = args.dir
    try:
        if getattr(args, "real", False):
            manifest = _write_real(directory, args)
            if manifest is None:
                return 1
        else:
            manifest = write_demo(directory, seed=args.seed, drafter=not args.no_drafter)
    except (FileExistsError, OSError) as err:
        print(f"eagle3-tui demo: {err}", file=sys.stderr)
        return 1
    if not args.write_only and _tui_available():
        return int(tui.main(tui_argv(manifest)) or 0)
    _print_written(manifest)
    return 0


def _write_real(directory: str, args: argparse.Namespace) -> DemoManifest | None:
    """The real demo (demo/real_demo.py) with a progress line per step on stderr, or None after
    one line saying what to install when the [real] extra is missing."""
    # lazy: pulls torch in, kept off --help's imports
    from eagle3_tui.demo.real_model import missing

    lacking = missing()
    if lacking:
        print(f"eagle3-tui demo --real: {lacking}", file=sys.stderr)
        return None
    from eagle3_tui.demo.real_demo import write_real_demo

    return write_real_demo(directory, seed=args.seed, drafter=not args.no_drafter,
                           say=lambda line: print(f"demo --real {line}", file=sys.stderr, flush=True))


def tui_argv(manifest: DemoManifest) -> list[str]:
    """The TUI's arguments for the written demo: the folder, its tokenizer, its target model (the
    layers: `I`, the dataset view), its drafter if any."""
    d = manifest["dir"]
    argv = [d, "--tokenizer", os.path.join(d, os.path.dirname(manifest["tokenizer"]))]
    if manifest.get("target_model"):
        argv += ["--model", os.path.join(d, manifest["target_model"])]
    if drafter := manifest.get("drafter"):
        argv += ["--drafter", os.path.join(d, drafter)]
    return argv


def _print_written(manifest: DemoManifest) -> None:
    d = manifest["dir"]
    train, infer = manifest["train"], manifest["infer"]
    ok = [c for c in infer if not c["expect"]]
    faults = [c for c in infer if c["expect"]]
    size = manifest["bytes"] / 1e6
    print(f"Wrote the demo dataset to {os.path.abspath(d)} ({size:.1f} MB, seed {manifest['seed']}):")
    print(f"  train/     {len(train)} SpecForge samples (.ckpt, one .ckpt.gz), right-padded, some indices missing")
    print("  train_pt/  the same samples under .pt names")
    print(f"  {manifest['target_model']}/     the target model (config.json, model.safetensors): the layers with --model;")
    print("            tokenizer.json: the ids are chats, shown as text with --tokenizer")
    if manifest.get("drafter"):
        print(f"  {manifest['drafter']}/   an EAGLE-3 drafter trained on train/: acceptance with --drafter")
    print(f"  infer/     {len(ok)} correctly wired captures and {len(faults)} with a known fault")
    print("  README.txt says which capture belongs to which sample and what is wrong with it")
    print()
    print("Try:")
    tokenizer = os.path.join(d, os.path.dirname(manifest["tokenizer"]))
    print(f"  eagle3-tui summary {os.path.join(d, train[0])} --tokenizer {tokenizer}")
    for c in (ok[0], *faults[:2]):
        print(f"  eagle3-tui compare {os.path.join(d, c['train'])} {os.path.join(d, c['file'])}")
    model = os.path.join(d, manifest["target_model"])
    print(f"  eagle3-tui identify {os.path.join(d, train[0])} --model {model}")
    if drafter := manifest.get("drafter"):
        print(f"  eagle3-tui accept {os.path.join(d, train[0])} --drafter {os.path.join(d, drafter)}")
    print(f"  eagle3-tui scan {os.path.join(d, 'train')}")
    print(f"  eagle3-tui {' '.join(tui_argv(manifest))}")
