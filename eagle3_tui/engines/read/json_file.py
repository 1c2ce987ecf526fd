"""The one way the package reads a JSON file it is given (a model's or drafter's config.json, a
shard index, a tokenizer.json): never a hang, never memory that grows with the file, never a
traceback.

    data = read_json_file("/models/llama/config.json")        # any JSON value; JsonFileError
    data = parse_json(raw_bytes, "box:/m/config.json")         # bytes read by a Source

- A FIFO, socket or device is refused after a stat, before it is opened; the open itself is
  non-blocking and the opened descriptor is checked again, so a FIFO swapped in between cannot
  block the reading thread (a blocked thread keeps a TUI's process alive after `q`).
- At most `limit` bytes are read: a config.json linked to /dev/zero or a 10 GB file is refused
  by its size, not read until memory runs out.
- Nesting deeper than MAX_DEPTH is refused before json.loads recurses into it (100,000 `[`
  raise RecursionError there, and a value a few hundred deep breaks later code that walks it).

Standard library only: shipped to the box with the engines.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import stat
from typing import Any, BinaryIO

#: a config.json, a shard index: a few KB in every real model (4 MiB as serve-check always allowed)
CONFIG_LIMIT = 4 << 20
#: a tokenizer.json: Gemma 3's is 33 MB, the largest of the common ones
TOKENIZER_LIMIT = 128 << 20
#: nesting of arrays and objects; real configs and tokenizers stay below 10
MAX_DEPTH = 100

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)
#: a JSON string with its escapes (unrolled: no backtracking on long strings)
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


class JsonFileError(ValueError):
    """A JSON file that is not read or does not parse; the message is one line with its path."""


class NoJsonFile(JsonFileError):
    """No file at that path (or a dead link)."""


def kind_problem(mode: int) -> str | None:
    """Why a file of this st_mode is not opened (a FIFO blocks, a device never ends), or None."""
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return f"{kind}, not a regular file: not opened"


def open_regular(path: str) -> BinaryIO:
    """`path` opened for reading in binary, when it is a regular file (JsonFileError if not)."""
    try:
        problem = kind_problem(os.stat(path).st_mode)
        if problem is not None:
            raise JsonFileError(f"{path}: {problem}")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise NoJsonFile(f"{path}: {'dead symbolic link' if os.path.islink(path) else 'no such file'}") from None
    except OSError as err:
        raise JsonFileError(f"{path}: cannot read ({err.strerror or type(err).__name__})") from None
    fh = os.fdopen(fd, "rb")
    problem = kind_problem(os.fstat(fd).st_mode)
    if problem is not None:  # swapped for a FIFO or device after the stat
        fh.close()
        raise JsonFileError(f"{path}: {problem}")
    return fh


def read_bytes(path: str, limit: int = CONFIG_LIMIT) -> bytes:
    """The whole of regular file `path`, refused past `limit` bytes."""
    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise JsonFileError(f"{path}: {_size(size)}, more than the {_size(limit)} such a file ever holds")
        try:
            raw = fh.read(limit + 1)
        except OSError as err:
            raise JsonFileError(f"{path}: cannot read ({err.strerror or type(err).__name__})") from None
    if len(raw) > limit:  # a file that grew while read (procfs and the like report size 0)
        raise JsonFileError(f"{path}: more than the {_size(limit)} such a file ever holds")
    return raw


def parse_json(raw: bytes, where: str, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value in `raw`, its nesting checked before parsing; JsonFileError in one line."""
    depth = nesting(raw)
    if depth > max_depth:
        raise JsonFileError(f"{where} is JSON nested {depth} levels deep (more than {max_depth}): not read")
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as err:
        raise JsonFileError(f"{where} is not JSON (not UTF-8 text at byte {err.start})") from None
    except ValueError as err:
        raise JsonFileError(f"{where} is not JSON ({str(err).splitlines()[0][:120]})") from None
    except RecursionError:  # MAX_DEPTH above the interpreter's own limit
        raise JsonFileError(f"{where} is JSON nested too deep to read") from None


def read_json_file(path: str, limit: int = CONFIG_LIMIT) -> Any:
    """read_bytes, then parse_json."""
    return parse_json(read_bytes(path, limit), path)


def nesting(raw: bytes) -> int:
    """How deep arrays and objects nest in `raw` (brackets inside strings do not count); for
    text that is not JSON, a number json.loads then refuses anyway. No recursion."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return 0  # cannot nest deeper: the common case of every config.json costs two counts
    brackets = _NOT_BRACKET.sub(b"", _STRING.sub(b"", raw))
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)


def _size(n: int) -> str:
    return f"{n / (1 << 20):.0f} MiB" if n >= 1 << 20 else f"{n} bytes"
