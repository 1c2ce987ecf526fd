"""Issue 44, items 1 and 2: every JSON file a command reads (a drafter's or model's config.json, a
tokenizer.json, a shard index) through one reader: a FIFO or a device refused without being opened,
a size cap, a depth limit, and one line for the user, never a hang or a traceback."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from eagle3_tui.engines.read.json_file import JsonFileError, nesting, parse_json, read_json_file
from tests.helpers.folder_world import run_cli, said_in_one_line

DEEP = "[" * 100_000 + "]" * 100_000


def _with_config(folders, src: Path, kind: str) -> Path:
    """A copy of folder `src` whose config.json is a FIFO, /dev/zero, a JSON list, not JSON, or deep."""
    folders._n += 1
    dst = folders.root / f"{src.name}-{kind}-{folders._n}"
    shutil.copytree(src, dst, copy_function=os.link)
    cfg = dst / "config.json"
    cfg.unlink()
    if kind == "fifo":
        os.mkfifo(cfg)
    elif kind == "zero":
        cfg.symlink_to("/dev/zero")
    else:
        cfg.write_text({"list": "[1, 2]", "text": "not json {", "deep": DEEP}[kind])
    return dst


SAID = {"fifo": "a FIFO (named pipe), not a regular file: not opened",
        "zero": "a character device, not a regular file: not opened",
        "deep": "JSON nested 100000 levels deep (more than 100): not read",
        "list": "is not a JSON object", "text": "is not JSON"}


@pytest.mark.parametrize("kind", ["fifo", "zero", "deep"])
def test_a_drafter_config_that_is_a_fifo_a_device_or_deep_is_one_line_in_accept_scan_and_identify(folders, kind):
    bad = _with_config(folders, folders.drafter, kind)
    for command in (["accept", folders.sample, "--drafter", bad, "--model", folders.model],
                    ["scan", folders.data, "--drafter", bad, "--workers", "1", "--no-cache"],
                    ["identify", folders.sample, "--model", folders.model, "--drafter", bad],
                    ["serve-check", bad, folders.data, "--model", folders.model]):
        p = run_cli(*command, timeout=60)
        assert "RecursionError" not in p.stdout + p.stderr, (command, p.stderr[-2000:])
        assert "Traceback" not in p.stderr and p.returncode == 2, (command, p.returncode, p.stderr[-2000:])
        assert SAID[kind] in p.stdout + p.stderr, (command, p.stdout[-500:], p.stderr[-2000:])


@pytest.mark.parametrize("kind", ["fifo", "zero", "deep", "list", "text"])
def test_a_model_config_that_is_not_a_json_object_is_one_line_exit_2(folders, kind):
    bad = _with_config(folders, folders.model, kind)
    for command in (["scan", folders.data, "--model", bad, "--workers", "1", "--no-cache"],
                    ["serve-check", folders.drafter, folders.data, "--model", bad],
                    ["identify", folders.sample, "--model", bad]):
        line = said_in_one_line(run_cli(*command, timeout=60))
        assert SAID[kind] in line and "RecursionError" not in line, (command, line)


@pytest.mark.parametrize("kind", ["fifo", "zero", "deep"])
def test_a_tokenizer_json_that_is_a_fifo_a_device_or_deep_is_said_not_waited_on(folders, tmp_path, kind):
    tok = tmp_path / "tokenizer.json"
    if kind == "fifo":
        os.mkfifo(tok)
    elif kind == "zero":
        tok.symlink_to("/dev/zero")
    else:
        tok.write_text(DEEP)
    p = run_cli("summary", folders.sample, "--tokenizer", tok, timeout=60)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert SAID[kind] in p.stdout + p.stderr, p.stdout[-1000:]


def test_the_reader_refuses_unopened_and_bounds_size_and_depth(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(JsonFileError, match="FIFO"):
        read_json_file(str(fifo))  # returns at once: a blocking open would wait here for a writer
    big = tmp_path / "big.json"
    big.write_text(json.dumps({"x": "y" * (5 << 20)}))
    with pytest.raises(JsonFileError, match="more than the 4 MiB"):
        read_json_file(str(big))
    with pytest.raises(JsonFileError, match="nested 101 levels"):
        parse_json(("[" * 101 + "]" * 101).encode(), "x.json")
    assert parse_json(("[" * 100 + "]" * 100).encode(), "x.json") is not None
    # brackets inside strings, escaped quotes included, are text, not nesting
    text = json.dumps({"merges": ["[" * 500, 'a\\"[[[' * 200], "n": [[1]]}).encode()
    assert nesting(text) == 3 and parse_json(text, "t.json")["n"] == [[1]]
