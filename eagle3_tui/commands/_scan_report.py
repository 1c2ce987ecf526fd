"""The text report of `scan`: the findings, the sections of --model and --accept, one row per
shard folder (files, tokens, k, H, dtype, the slots' mean norms, NaN/Inf), the drafter's line,
and the totals (commands/scan.py builds the summary it is given)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from eagle3_tui.commands.ls import printable
from eagle3_tui.engines.scan.agreement import summary_line  # scan --drafter
from eagle3_tui.sources.base import natural_key


def _num(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.3g}"


def _mean(rows: list[dict[str, Any]], key: str) -> float | None:
    return sum(r[key] for r in rows) / len(rows) if rows else None


def _count(v: float | None) -> str:
    """A (mean) token count as a whole number: 100000, never 1e+05."""
    return "-" if v is None else str(round(v))


def format_report(records, findings, summary, layers: str | None = None, acceptance: str | None = None) -> str:
    lines = []
    if findings:
        lines.append("findings:")
        for f in findings:
            lines.append(f"  {f['severity'].upper():7} {f['code']}: {printable(f['message'])}")
    else:
        lines.append("findings: none")
    for section in (layers, acceptance):
        if section:
            lines += ["", *map(printable, section.splitlines())]
    shards: dict[str, list] = defaultdict(list)
    for r in records:
        shards[r.get("shard", "")].append(r)
    head = f"{'shard':<24} {'files':>6} {'ok':>6} {'err':>4} {'T':>7} {'valid':>7} {'k':>2} {'H':>6} {'dtype':<9} {'slot norms':<22} {'final':>7} {'NaN/Inf':>7}"
    lines += ["", head]

    for shard in sorted(shards, key=natural_key):
        rs = shards[shard]
        ok = [r for r in rs if "error" not in r]
        err = sum("error" in r and not r.get("not_sample") for r in rs)
        k = sorted({r["k"] for r in ok})
        h = sorted({r["hidden"] for r in ok})
        dt = sorted({r["dtype"] for r in ok})
        slot_norms = "-"
        final = None
        if ok and len(k) == 1:
            per = [[r["slots"][i]["norm_mean"] for r in ok if r["slots"][i]["norm_mean"] is not None] for i in range(k[0])]
            slot_norms = "/".join(_num(sum(v) / len(v)) if v else "-" for v in per)
            finals = [r["final"]["norm_mean"] for r in ok if r.get("final") and r["final"]["norm_mean"] is not None]
            final = sum(finals) / len(finals) if finals else None
        bad = sum(any(p["nan"] or p["inf"] for p in [*r["slots"], *([r["final"]] if r.get("final") else [])]) for r in ok)
        lines.append(
            f"{printable(shard or '.')[:24]:<24} {len(rs):>6} {len(ok):>6} {err:>4} {_count(_mean(ok, 'tokens')):>7} "
            f"{_count(_mean(ok, 'valid_tokens')):>7} {','.join(map(str, k)) or '-':>2} {','.join(map(str, h)) or '-':>6} "
            f"{','.join(dt) or '-':<9} {slot_norms:<22} {_num(final):>7} {bad:>7}"
        )

    drafter_line = summary_line(records)
    if drafter_line:
        lines += ["", drafter_line]
    s = summary
    lines.append("")
    lines.append(
        f"{s['files']} files ({s['samples']} samples, {s['errors']} unreadable, {s['not_samples']} not samples, "
        f"{s['cached']} from cache), {s['mode']}, read {s['bytes_read'] / 2**20:.1f} of {s['bytes_total'] / 2**20:.1f} MiB "
        f"in {s['seconds']:.1f} s" + (" (interrupted)" if s["interrupted"] else "")
    )
    if s.get("refused"):
        lines.append(s["refused"])
    if s.get("rows_read") is not None and s["rows_read"] < s["rows_total"]:
        lines.append(f"read {s['rows_read']:,} of {s['rows_total']:,} rows: NaN/Inf elsewhere shows with --full")
    return "\n".join(lines)
