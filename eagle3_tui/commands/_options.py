"""Options and output helpers shared by the subcommands (one home, not borrowed from one command)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from eagle3_tui.engines.read import torch_gate
from eagle3_tui.names import json_for_terminal, printable

TOKENIZER_ENV = "EAGLE3_TUI_TOKENIZER"


def say(message: str) -> None:
    """One line for the user on stderr, "eagle3-tui: " first (every command's errors and notes).
    One line whatever it quotes: a newline in a path or a config value shows as \\n (printable)."""
    print(f"eagle3-tui: {printable(message, message=True)}", file=sys.stderr, flush=True)


TRUST_HELP = ("load .pt/.ckpt files even with a torch below 2.10 (known weights_only escapes: "
              "CVE-2025-32434, CVE-2026-24747), here or on the box; only for files you made yourself. "
              "Never a default: results say the loads were unsafe")


def add_trust_argument(p: argparse.ArgumentParser) -> None:
    """--trust-data (engines/read/torch_gate.py): cli.main hands it to the gate for this run only."""
    p.add_argument("--trust-data", action="store_true", help=TRUST_HELP)


def abbreviated_safety_flag(argv: list[str]) -> str | None:
    """One line when argv abbreviates --trust-data (`--trust`, `--tr`): argparse would take it for
    the flag, and a flag that turns safety off is spelled out in full. None otherwise."""
    full = "--trust-data"
    for token in argv:
        if token == "--":
            break
        flag = token.split("=", 1)[0]
        if len(flag) > 2 and flag != full and full.startswith(flag):
            return f"{token}: not an option (a flag that turns safety off is spelled out in full: {full})"
    return None


def add_connection_arguments(p: argparse.ArgumentParser, loads: bool = True) -> None:
    """SSH options shared by every command that takes targets (ignored for local paths), and
    --trust-data for the commands that load files (`loads`)."""
    if loads:
        add_trust_argument(p)
    p.add_argument(
        "--remote-python",
        default="python3",
        metavar="PYTHON",
        help="Python with torch on the remote box (default: python3)",
    )
    p.add_argument(
        "--accept-new-host-key",
        action="store_true",
        help="trust an SSH host key seen for the first time (a changed key is always refused)",
    )


def add_tokenizer_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--tokenizer",
        metavar="PATH",
        default=os.environ.get(TOKENIZER_ENV) or None,
        help=f"tokenizer.json or a model folder holding one: a plain path is on this machine (it "
        f"decodes a box's data here too), host:/path on the data's host; show tokens as text "
        f"(default: ${TOKENIZER_ENV})",
    )


def below_one(args: argparse.Namespace, command: str, *names: str) -> int | None:
    """Exit status 2 with one line on stderr when an option among `names` is given below 1 (a usage
    error: nothing is read), else None."""
    for name in names:
        value = getattr(args, name)
        if value is not None and value < 1:
            print(f"eagle3-tui {command}: error: --{name.replace('_', '-')} must be at least 1", file=sys.stderr)
            return 2
    return None


def json_line(result: Any) -> str:
    """One result as one line of strict JSON (NaN and Inf as null): what --json prints. With
    --trust-data it says the loads were unsafe ("unsafe_loads")."""
    return json_for_terminal(json.dumps(to_json_ready(with_trust_note(result)), allow_nan=False))


def with_trust_note(result: Any, torch: str | None = None) -> Any:
    """`result` with "unsafe_loads" when --trust-data was given (every JSON result says so)."""
    if not torch_gate.trusted() or not isinstance(result, dict):
        return result
    torch = torch or (result.get("runtime") or {}).get("torch")
    return {**result, "unsafe_loads": torch_gate.unsafe_note(torch)}


def refused_by_gate(result: Any) -> bool:
    """Whether a result failed because its torch may not unpickle (exit 2 for a single file)."""
    if isinstance(result, dict):
        return torch_gate.refused(result.get("error")) or any(
            refused_by_gate(result.get(k)) for k in ("a", "b", "identify"))
    return False


def to_json_ready(obj: Any) -> Any:
    """Replace NaN/Inf floats with None so the output is strict JSON."""
    if isinstance(obj, float):
        return obj if obj == obj and obj not in (float("inf"), float("-inf")) else None
    if isinstance(obj, dict):
        return {k: to_json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_json_ready(v) for v in obj]
    return obj
