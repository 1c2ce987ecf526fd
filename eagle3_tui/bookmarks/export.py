"""Bookmarks as text for scripts: json (everything), csv (one row each), paths (one file per line)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from eagle3_tui.bookmarks.model import Bookmark, BookmarkError, iso_time

FORMATS = ("json", "csv", "paths")

CSV_COLUMNS = (
    "target", "host", "user", "port", "path", "note", "tags", "created", "updated",
    "schema", "tokens", "valid_tokens", "hidden", "dtype", "norm_means", "final_norm_mean", "headline",
)  # fmt: skip


def export(bookmarks: Sequence[Bookmark], fmt: str, *, null: bool = False) -> str:
    if fmt == "json":
        return json.dumps([b.to_json() for b in bookmarks], indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":
        return _csv(bookmarks)
    if fmt == "paths":
        return _paths(bookmarks, null=null)
    raise BookmarkError(f"unknown export format {fmt!r} (choose from {', '.join(FORMATS)})")


def _csv(bookmarks: Sequence[Bookmark]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for b in bookmarks:
        h = b.headline or {}
        final = h.get("final")
        writer.writerow([
            b.target, b.host or "", b.user or "", "" if b.port is None else b.port, b.path, b.note,
            ";".join(b.tags), iso_time(b.created), iso_time(b.updated),
            h.get("schema") or "", _blank(h.get("tokens")), _blank(h.get("valid_tokens")),
            _blank(h.get("hidden")), h.get("dtype") or "",
            " ".join(_number(s.get("norm_mean")) for s in h.get("slots") or []),
            _number(final.get("norm_mean")) if final else "",
            b.headline_text,
        ])  # fmt: skip
    return out.getvalue()


def _paths(bookmarks: Sequence[Bookmark], *, null: bool) -> str:
    """The path on its own machine, for a training filter that runs there."""
    if null:
        return "".join(b.path + "\0" for b in bookmarks)
    for b in bookmarks:
        if "\n" in b.path or "\r" in b.path:
            raise BookmarkError(
                f"{b.target!r} has a line break in its path; export it with --null or --format json"
            )
    return "".join(b.path + "\n" for b in bookmarks)


def _blank(value: object) -> object:
    return "" if value is None else value


def _number(value: float | None) -> str:
    return "nan" if value is None else repr(float(value))
