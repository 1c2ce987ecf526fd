"""Every `eagle3-tui ...` command that README.md and docs/*.md show on the demo runs as written.

The demo is written once per session by the documented `eagle3-tui demo --write-only` (a real
process, in a fresh folder: ./eagle3-demo); each other command line then runs in that folder
through the CLI's entry point, in this process (one torch and transformers import for them all;
identify keeps its model loaded). A command passes when it raises nothing, prints no traceback,
exits with a status its docs allow (compare, identify and scan: 1 on a finding), and prints
every finding code the docs show under it. Commands that open the TUI run headless (Pilot).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from eagle3_tui.cli import COMMANDS
from tests.helpers.tui import screen_text, wait_until

# the documented demo is written once: the module's tests share one xdist worker
pytestmark = pytest.mark.xdist_group("documented-commands")

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: exit statuses the docs give for a run that worked: 1 is "a warning or error finding"
ALLOWED_EXIT = {"compare": {0, 1}, "identify": {0, 1}, "scan": {0, 1}}
FINDING = re.compile(r"^\s*(?:ERROR|WARNING|INFO)\s+([a-z_]+)\b", re.M)


def _demo_line(line: str) -> str | None:
    """The command of a documented line that runs on the demo, else None (synopses with [OPTIONS]
    or placeholders, commands on other paths)."""
    line = line.strip().removeprefix("$ ")
    if not line.startswith("eagle3-tui "):
        return None
    line = line.split(" #", 1)[0].strip()  # a trailing shell comment
    words = shlex.split(line)
    if "[" in line or any(w.isupper() and len(w) > 1 for w in words):  # a synopsis: DIR, TARGET
        return None
    if words[1] == "demo" or any("eagle3-demo" in w for w in words[1:]):
        return line
    return None


def documented_commands() -> list[tuple[str, str, str]]:
    """(where, command, the output the docs show under it) for every demo command in the docs."""
    found: dict[str, tuple[str, str, str]] = {}
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for block in re.finditer(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M):
            lines = block.group(1).splitlines()
            start = text[: block.start()].count("\n") + 2
            for n, raw in enumerate(lines):
                cmd = _demo_line(raw)
                if cmd is None:
                    continue
                shown = []
                if raw.lstrip().startswith("$ "):  # output follows until the next prompt
                    for more in lines[n + 1:]:
                        if more.lstrip().startswith("$ "):
                            break
                        shown.append(more)
                found.setdefault(cmd, (f"{doc.name}:{start + n}", cmd, "\n".join(shown)))
        for span in re.finditer(r"`(eagle3-tui [^`]+)`", text):
            cmd = _demo_line(span.group(1))
            if cmd is not None:
                found.setdefault(cmd, (f"{doc.name}:{text[: span.start()].count(chr(10)) + 1}", cmd, ""))
    return list(found.values())


COMMANDS_IN_DOCS = documented_commands()


def test_the_docs_show_the_demo_commands_worth_trying():
    """The extraction finds the playground's commands (a guard against an empty parametrization)."""
    words = {shlex.split(cmd)[1] for _w, cmd, _o in COMMANDS_IN_DOCS}
    assert {"demo", "summary", "compare", "identify", "accept", "scan"} <= words
    assert any("--model eagle3-demo/model" in cmd for _w, cmd, _o in COMMANDS_IN_DOCS)


@pytest.fixture(scope="session")
def played(tmp_path_factory) -> tuple[Path, str]:
    """(the folder holding ./eagle3-demo, the command's stderr), written by the documented
    `eagle3-tui demo --write-only`."""
    where = tmp_path_factory.mktemp("playground")
    out = subprocess.run([sys.executable, "-m", "eagle3_tui", "demo", "--write-only"], cwd=where,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert (where / "eagle3-demo" / "model" / "model.safetensors").is_file()
    assert (where / "eagle3-demo" / "drafter" / "model.safetensors").is_file()
    return where, out.stderr


@pytest.fixture(scope="session")
def played_demo(played) -> Path:
    return played[0]


def test_writing_the_demo_says_each_step_on_its_own_line_in_a_log(played):
    """stderr not a terminal (a log, CI): one plain line per step, no carriage returns."""
    _where, err = played
    lines = err.strip().splitlines()
    assert "\r" not in err and "\x1b" not in err
    steps = [line.split(" (")[0] for line in lines[:-1]]
    assert steps[0] == "demo: loading torch" and "demo: training the drafter" in steps
    assert "demo: writing training samples" in steps and len(steps) == len(set(steps))
    assert lines[-1].startswith("demo: wrote eagle3-demo in ") and "`eagle3-tui demo` opens it again" in lines[-1]


def readme_commands(demo: Path) -> list[str]:
    """Every command of the demo's README.txt (a line indented by four, `eagle3-tui ...`)."""
    text = (demo / "README.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.startswith("    eagle3-tui ")]


def test_every_command_in_the_demos_readme_runs_from_where_the_demo_was_written(played_demo, monkeypatch,
                                                                               capsys, tmp_path):
    """README.txt's commands name the demo as it was given (./eagle3-demo here), so each runs as
    written from the folder `eagle3-tui demo` ran in, the TUI's headless."""
    pytest.importorskip("transformers")
    from eagle3_tui.cli import main

    commands = readme_commands(played_demo / "eagle3-demo")
    words = {shlex.split(c)[1] for c in commands}
    assert {"identify", "accept", "compare"} <= words and len(commands) >= 5
    monkeypatch.chdir(played_demo)
    for cmd in commands:
        argv = shlex.split(cmd)[1:]
        assert all(not a.startswith(("train/", "infer/", "model", "drafter")) for a in argv), cmd
        if argv[0] not in COMMANDS:
            _open_headless(argv, tmp_path)
            continue
        rc = main(argv)
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err and "no such file" not in (out + err).lower(), f"{cmd}\n{err}"
        assert rc in ALLOWED_EXIT.get(argv[0], {0}), f"README.txt: {cmd} exited {rc}\n{out}\n{err}"
        assert out.strip(), cmd


@pytest.mark.parametrize("where, cmd, shown", COMMANDS_IN_DOCS, ids=[w for w, _c, _o in COMMANDS_IN_DOCS])
def test_documented_command_runs_on_the_demo(where, cmd, shown, played_demo, monkeypatch, capsys, tmp_path):
    pytest.importorskip("transformers")
    words = shlex.split(cmd)[1:]
    monkeypatch.chdir(played_demo)
    if words[0] == "demo":
        # the session's demo was written by `eagle3-tui demo --write-only`; without --write-only the
        # same demo opens the TUI with tui_argv, run headless below
        if "--write-only" not in words:
            _open_headless(_demo_tui_argv(played_demo), tmp_path)
        return
    if words[0] not in COMMANDS:
        _open_headless(words, tmp_path)
        return
    from eagle3_tui.cli import main

    rc = main(words)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, f"{where}: {cmd}\n{err}"
    assert rc in ALLOWED_EXIT.get(words[0], {0}), f"{where}: {cmd} exited {rc}\n{out}\n{err}"
    assert out.strip(), f"{where}: {cmd} printed nothing"
    for code in FINDING.findall(shown):  # the findings the docs show under the command
        assert code in out, f"{where}: {cmd}: the docs show {code}, the run does not\n{out}"


def _demo_tui_argv(where: Path) -> list[str]:
    from eagle3_tui.commands.demo import tui_argv

    d = "eagle3-demo"
    return tui_argv({"dir": d, "tokenizer": "model/tokenizer.json", "target_model": "model",
                     "drafter": "drafter" if (where / d / "drafter").is_dir() else None})


def _open_headless(argv: list[str], data_dir: Path) -> None:
    """The TUI as `eagle3-tui ARGV` starts it (commands/tui.run_app), driven by Pilot: it opens
    the demo, lists it, and shows a training sample's view with the given options."""
    import asyncio

    from eagle3_tui.commands.tui import build_parser
    from eagle3_tui.ui.app import Eagle3App
    from eagle3_tui.ui.start.analysis import Analysis

    args = build_parser().parse_args(argv)
    app = Eagle3App(args.target, data_dir=str(data_dir),  # bookmarks in tmp, not the user's
                    analysis=Analysis.from_options(args.tokenizer, args.model, args.drafter, args.vocab_mapping))

    target = Path(args.target)

    def shown() -> bool:
        text = screen_text(app)
        if target.is_file():  # a sample: its folder listed, its name under the cursor
            return target.name in text
        return "train" in text and "infer" in text

    async def drive() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, shown, what=f"the TUI on {target}")

    asyncio.run(drive())
