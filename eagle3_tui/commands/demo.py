"""`eagle3-tui demo [DIR] [--write-only] [--rewrite] [--seed N]`: write the demo dataset, then open the
TUI on it with the demo's tokenizer (tokens as text), its target model (the layers) and its drafter
when it has one.

A demo that this same demo code wrote with the same options is opened at once, without writing a
byte (demo/folder.py's stamp); --rewrite writes it anew, as a changed demo format or other options
do. While it writes, one line on stderr says what it is doing (WritingLine)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shlex
import shutil
import sys
import threading
import time
from typing import TYPE_CHECKING, TextIO

from eagle3_tui.commands import tui
from eagle3_tui.names import terminal_text, unfiltered

if TYPE_CHECKING:
    from eagle3_tui.demo.manifest import DemoManifest

DEFAULT_DIR = "eagle3-demo"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", nargs="?", default=DEFAULT_DIR, metavar="DIR",
                        help=f"where to write the dataset (default: ./{DEFAULT_DIR}); "
                        "must be new, empty or an earlier demo")
    parser.add_argument("--write-only", action="store_true", help="write the dataset and exit, do not open the TUI")
    parser.add_argument("--rewrite", action="store_true",
                        help="write the demo again even when DIR holds one this version wrote with these options "
                        "(which is otherwise opened as it is)")
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


class WritingLine:
    """What the demo is doing, on stderr. On a terminal, one line redrawn in place, with the seconds
    so far (a thread redraws it twice a second, so it moves while torch loads); otherwise a plain
    line per step, its counter ("12/24") left out."""

    COUNTER = re.compile(r"\s*\d+/\d+$")

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.start = time.monotonic()
        self.text: str | None = None
        self.printed: str | None = None  # the last plain line's step
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.ticker: threading.Thread | None = None

    def __call__(self, text: str) -> None:
        with self.lock:
            self.text = text
            if self.tty:
                self._draw()
            elif (step := self.COUNTER.sub("", text)) != self.printed:
                self.printed = step
                print(f"demo: {step} ({self.seconds():.0f} s)", file=self.stream, flush=True)
        if self.tty and self.ticker is None:
            self.ticker = threading.Thread(target=self._tick, name="demo-progress", daemon=True)
            self.ticker.start()

    def seconds(self) -> float:
        return time.monotonic() - self.start

    def _draw(self) -> None:
        width = max(20, shutil.get_terminal_size((80, 24)).columns - 1)
        line = terminal_text(f"demo: {self.text} … {self.seconds():.0f} s")
        unfiltered(self.stream).write("\r\033[K" + line[:width])  # the CR and erase on purpose, the line escaped
        self.stream.flush()

    def _tick(self) -> None:
        while not self.stopped.wait(0.5):
            with self.lock:
                self._draw()

    def finish(self, line: str | None = None) -> None:
        """Stop redrawing, clear the line, and print `line` (if any) in its place."""
        self.stopped.set()
        if self.ticker is not None:
            self.ticker.join()
        with self.lock:
            if self.tty and self.text is not None:
                unfiltered(self.stream).write("\r\033[K")
            if line:
                print(f"demo: {line}", file=self.stream, flush=True)


def run(args: argparse.Namespace) -> int:
    # stdlib only: reopening a demo imports no torch
    from eagle3_tui.demo.folder import demo_options, reopenable

    directory, real = args.dir, bool(getattr(args, "real", False))
    options = demo_options(args.seed, not args.no_drafter, real)
    try:
        found, why = reopenable(directory, options)
    except FileExistsError as err:
        print(f"eagle3-tui demo: {err}", file=sys.stderr)
        return 1
    if found is not None and not getattr(args, "rewrite", False):
        manifest = found
        print(f"demo: opened {directory} as it is, {why}; --rewrite writes it anew", file=sys.stderr)
    else:
        if found is not None:
            why = "--rewrite"
        written = _write(directory, args, real, why)
        if written is None:
            return 1
        manifest = written
    if not args.write_only and _tui_available():
        return int(tui.main(tui_argv(manifest)) or 0)
    _print_written(manifest, reopen_command(args))
    return 0


def _write(directory: str, args: argparse.Namespace, real: bool, why: str) -> DemoManifest | None:
    """Write the demo with a progress line; None after saying why it could not."""
    if real:
        # lazy: pulls torch in, kept off --help's imports
        from eagle3_tui.demo.real_model import missing

        if lacking := missing():
            print(f"eagle3-tui demo --real: {lacking}", file=sys.stderr)
            return None
    progress = WritingLine(sys.stderr)
    progress("loading torch")
    try:
        if real:
            from eagle3_tui.demo.real_demo import write_real_demo

            manifest = write_real_demo(directory, seed=args.seed, drafter=not args.no_drafter, say=progress)
        else:
            # lazy: pulls torch in: loaded when used
            from eagle3_tui.demo.dataset import write_demo

            manifest = write_demo(directory, seed=args.seed, drafter=not args.no_drafter, say=progress)
    except (FileExistsError, OSError) as err:
        progress.finish()
        print(f"eagle3-tui demo: {err}", file=sys.stderr)
        return None
    from eagle3_tui.demo.folder import NEW  # stdlib only

    verb = "wrote" if why == NEW else "rewrote"
    progress.finish(f"{verb} {directory} in {progress.seconds():.1f} s ({why}); `{reopen_command(args)}` "
                    "opens it again as it is")
    return manifest


def reopen_command(args: argparse.Namespace) -> str:
    """The `eagle3-tui demo` line that opens this demo again without writing it."""
    words = ["eagle3-tui", "demo"]
    if args.dir != DEFAULT_DIR:
        words.append(shlex.quote(args.dir))
    if getattr(args, "real", False):
        words.append("--real")
    if args.seed:
        words += ["--seed", str(args.seed)]
    if args.no_drafter:
        words.append("--no-drafter")
    return " ".join(words)


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


def _print_written(manifest: DemoManifest, reopen: str) -> None:
    d = manifest["dir"]
    train, infer = manifest["train"], manifest["infer"]
    ok = [c for c in infer if not c["expect"]]
    faults = [c for c in infer if c["expect"]]
    size = manifest["bytes"] / 1e6
    print(f"The demo dataset in {os.path.abspath(d)} ({size:.1f} MB, seed {manifest['seed']}):")
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
    print(f"  eagle3-tui {' '.join(shlex.quote(w) for w in tui_argv(manifest))}")
    print(f"  {reopen}    (the same TUI; it writes nothing while the demo is there)")
