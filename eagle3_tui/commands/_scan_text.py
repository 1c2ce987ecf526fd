"""What `scan` says of the bytes it reads (engines/scan/budget.py counts them): the progress
line, with the rate measured so far and the time the rest takes at it, and how many rows of the
samples a quick scan read (NaN/Inf were looked for in those only)."""

from __future__ import annotations

from typing import Any


def progress_line(p: dict[str, Any]) -> str:
    """The progress line: files, and the bytes the scan read (counted by it) with the time the rest
    takes at the rate measured so far (the files read this run, not those from the cache)."""
    secs = max(p.get("seconds") or 0, 1e-6)
    line = (f"scanning: {p['files_done']}/{p['files_total']}{'' if p.get('listing_done') else '+'} files, "
            f"{p['files_done'] / secs:.0f} files/s, read {_mib(p.get('bytes_read') or 0)}")
    fresh = p.get("files_read") or 0
    if fresh:
        line += f" ({_mib(p['bytes_read'] / fresh)} a file, {_mib(p['bytes_read'] / secs)}/s)"
    if p.get("listing_done") and fresh:
        eta = (p["files_total"] - p["files_done"]) * secs / fresh
        line += f", ETA {eta:.0f} s"
    return line


def _mib(n: float) -> str:
    return f"{n / 2**20:.2f} MiB" if n < 10 * 2**20 else f"{n / 2**20:.0f} MiB"


def rows_read(fresh, options) -> dict[str, Any]:
    """How much of the samples a quick scan read: its rows (NaN/Inf were looked for there only)."""
    samples = [r for r in fresh if "error" not in r and r.get("rows_read") is not None]
    if options.full or not samples:
        return {}
    return {"budget": options.budget, "rows_read": sum(r["rows_read"] for r in samples),
            "rows_total": sum(r["tokens"] for r in samples)}
