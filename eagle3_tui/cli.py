"""Command line entry point: `eagle3-tui [TARGET]` opens the TUI; subcommands work headless.

Every subcommand lives in its own module under eagle3_tui/commands/ and is imported only
when chosen, so `eagle3-tui --help` stays fast and never imports torch.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
import textwrap

from eagle3_tui import __version__
from eagle3_tui.commands._options import abbreviated_safety_flag
from eagle3_tui.engines.read import torch_gate
from eagle3_tui.names import TerminalSafe

# subcommand -> (module under eagle3_tui.commands, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "summary": ("summary", "per-slot statistics of hidden-state files"),
    "demo": ("demo", "write a demo dataset and open the TUI on it"),
    "ls": ("ls", "list a local or remote folder in natural order"),
    "compare": ("compare", "compare a training sample with an inference capture"),
    "bookmarks": ("bookmarks", "list, add, remove and export bookmarked samples"),
    "identify": ("identify", "which layer of the target model each slot holds (runs the model)"),
    "accept": ("accept", "run an EAGLE-3 drafter on a sample: top-1, per-step acceptance, tau"),
    "scan": ("scan", "check every sample of a dataset folder and name its problems"),
    "pair": ("pair", "find the training samples that hold an inference capture's prompt"),
    "serve-check": ("serve_check", "which layers each serving engine will feed a drafter, against its data"),
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage errors exit 2 with one line, as argparse does
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    description = textwrap.fill(
        "Inspect EAGLE-3 hidden-state captures and find where training and inference disagree. "
        "Without a subcommand, opens the TUI on TARGET.", 78)
    parser = _Parser(
        prog="eagle3-tui",
        description=description,
        epilog=_tui_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"eagle3-tui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (_module, help_text) in COMMANDS.items():
        if importlib.util.find_spec(f"eagle3_tui.commands.{_module}") is None:
            continue  # a subcommand whose module is not part of this build
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=_module)
        _command_module(_module).add_arguments(p)
    return parser


def _tui_help() -> str:
    """The TUI's own usage and arguments (TARGET, --remote-python, --data-dir...) for --help."""
    text = _command_module("tui").build_parser().format_help()
    usage, _description, *sections = text.split("\n\n")
    return "\n\n".join(["the TUI (no subcommand):", usage.replace("usage: ", "  ", 1), *sections]).rstrip()


def _command_module(name: str):
    return importlib.import_module(f"eagle3_tui.commands.{name}")


def trust_data(on: bool) -> None:
    """--trust-data, for this run only: the gate in front of every torch.load (torch_gate)."""
    torch_gate.trust_data(on)


def main(argv: list[str] | None = None) -> int:
    # Every line a command prints (argparse's errors too) is escaped for the terminal: a note,
    # a file name or a config value can hold ESC ] 0 ; ... BEL (issue 34.2).
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = TerminalSafe(sys.stdout), TerminalSafe(sys.stderr)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = saved


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if (problem := abbreviated_safety_flag(argv)) is not None:
        print(f"eagle3-tui: {problem}", file=sys.stderr)
        return 2
    try:
        if argv and (argv[0] in COMMANDS or argv[0] in ("-h", "--help", "--version")):
            args = build_parser().parse_args(argv)
            trust_data(getattr(args, "trust_data", False))
            return int(_command_module(args._module).run(args) or 0)
        return _command_module("tui").main(argv)
    except BrokenPipeError:
        # `eagle3-tui ls box:/data | head`: the reader left; stop quietly, as ls would
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        print("eagle3-tui: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
