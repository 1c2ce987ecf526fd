"""Where a report goes: DATA_DIR/exports/<UTC time>_<view>_<subject>.md and .json.

The data folder is the user's (userdirs.data_dir(), --data-dir, EAGLE3_TUI_DATA_DIR), never
the inspected dataset: `write` refuses a folder inside the data being looked at. Names hold
only letters, digits, '.', '-' and '_' (whatever the sample is called), and an existing
report is never overwritten.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from eagle3_tui.names import json_for_terminal, terminal_text
from eagle3_tui.reports.model import Report
from eagle3_tui.userdirs import data_dir as default

EXPORTS = "exports"
#: the subject's share of a file name (sample names can be long)
SUBJECT_CHARS = 80
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class ExportError(Exception):
    """The report could not be written; one line for the user."""


def exports_dir(data_dir: str | os.PathLike | None = None) -> Path:
    if data_dir is None:
        data_dir = default()
    return Path(data_dir) / EXPORTS


def safe_name(text: str, limit: int = SUBJECT_CHARS) -> str:
    """`text` as a file name part: unsafe runs become '_', no leading dots, at most `limit` chars."""
    name = _UNSAFE.sub("_", text).strip("._") or "report"
    return name[:limit].rstrip("._") or "report"


def stem(report: Report, now: datetime | None = None) -> str:
    when = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return f"{when:%Y%m%d-%H%M%S}_{report.view}_{safe_name(report.subject)}"


def write(report: Report, folder: str | os.PathLike, *,
          inspected: str | os.PathLike | Sequence[str | os.PathLike | None] | None = None,
          now: datetime | None = None) -> tuple[Path, Path]:
    """Write the Markdown and the JSON; (md path, json path). `inspected`: the local folder(s)
    being looked at (None for a remote one: the view's and the one the TUI started on); a
    `folder` inside one is refused."""
    folder = Path(folder)
    roots = [inspected] if isinstance(inspected, str | os.PathLike) else list(inspected or [])
    if any(root is not None and _inside(folder, Path(root)) for root in roots):
        raise ExportError(f"not exported: {folder} is inside the dataset (start with --data-dir elsewhere)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        base = stem(report, now)
        for n in range(1, 1000):
            name = base if n == 1 else f"{base}-{n}"
            md, js = folder / f"{name}.md", folder / f"{name}.json"
            if not md.exists() and not js.exists():
                break
        # what a file name holds (ESC sequences, bytes that are not UTF-8) is written escaped, as
        # the CLI prints it: `cat` on a report must not steer the terminal, nor writing it fail
        _create(js, json_for_terminal(json.dumps(finite(report.data), indent=2, ensure_ascii=False, allow_nan=False,
                                                 default=str)) + "\n")
        _create(md, terminal_text(report.markdown))
    except (OSError, ValueError) as err:
        raise ExportError(f"cannot write the report into {folder}: {getattr(err, 'strerror', None) or err}") from None
    return md, js


def finite(value):
    """The JSON standard has no NaN nor Infinity: a non-finite number is written as null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def _create(path: Path, text: str) -> None:
    with open(path, "x", encoding="utf-8") as fh:  # "x": never over another file
        fh.write(text)


def _inside(folder: Path, root: Path) -> bool:
    try:
        folder.resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return False
    return True
