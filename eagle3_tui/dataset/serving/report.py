"""serve-check's text: the verdict and the fix first, the data, the drafter and the releases read,
one row per engine and range of releases (its reason wrapped in its column), the findings; every
line at most 100 columns, the values from the files escaped."""

from __future__ import annotations

import re
import textwrap

from eagle3_tui.dataset.serving.capture import NESTED, TOP, bset, captured, show
from eagle3_tui.dataset.serving.check import in_force_bad
from eagle3_tui.dataset.serving.fix import CONFIG_LINE, TRT_LINE
from eagle3_tui.dataset.serving.result import ServingCheck
from eagle3_tui.dataset.serving.table import OWN_OPTION, EngineCapture
from eagle3_tui.dataset.serving.versions import NAMES, label
from eagle3_tui.names import printable

WIDTH = 100
#: the why column is at least this wide; narrower, the reason goes under its row
MIN_WHY = 32


def verdict(result: ServingCheck) -> str:
    """One line: which engines in force will not serve the drafter right, that all will, or that
    some do only by their own default."""
    held = bset(result["data"]["boundaries"], result["data"]["layers"])
    bad = in_force_bad(result)
    parts = []
    failing = [e for e in bad if e.get("fails")]
    differing = [e for e in bad if not e.get("fails")]
    if failing:
        parts.append(f"{', '.join(map(label, failing))} will fail on this drafter")
    if differing:
        parts.append(f"{', '.join(map(label, differing))} will not capture the data's b {held}")
    errors = [f for f in result["findings"] if f["severity"] == "error"]
    if errors and not parts:
        parts.append(f"error: {errors[0]['message']}")
    if parts:
        return printable("serve-check: " + "; ".join(parts), message=True)
    who = "every engine asked" if result.get("asked") else "every current engine"
    guessing = [e for e in result["engines"] if e.get("in_force") and e["serves"] and e["guessed"]
                and e["engine"] not in OWN_OPTION]
    if guessing:
        lines = (result.get("fix") or {}).get("lines") or []
        pins = "; no config.json line pins it (see the fix line)"
        if any(line.startswith(CONFIG_LINE) for line in lines):
            trt = any(line.startswith(TRT_LINE) for line in lines)
            pins = ": the fixes below pin it (TensorRT-LLM by its own option)" if trt else ": the fix below pins it"
        return (f"serve-check: {who} captures the data's b {held}, but {', '.join(map(label, guessing))} only by "
                f"its default (the drafter does not pin it){pins}")
    warned = any(f["severity"] == "warning" for f in result["findings"])
    return f"serve-check: {who} captures the data's b {held}" + (" (see the warnings)" if warned else "; nothing to fix")


def mark(e: EngineCapture) -> str:
    """The row's verdict: "ok", "ok, guess", "differs", "fails"."""
    if e.get("fails"):
        return "fails"
    if e["matches"]:
        return "ok, guess" if e["guessed"] else "ok"
    return "differs"


def _why(e: EngineCapture) -> str:
    why = e["why"]
    if e.get("fails"):
        why = f"fails at {e.get('fails_at') or 'start-up'}: {e['fails']}" + ("" if why == e["fails"] else f"; {why}")
    if e.get("asked") and e.get("read_as"):
        why = f"{e['asked']} was not read: the rules of {e['read_as']} assumed; {why}"
    return why


def table_rows(result: ServingCheck) -> list[tuple[str, str, str, str]]:
    """(verdict, engine and versions, what it captures, why) per engine row, each cell one line
    (its values escaped: a config.json string cannot break the table)."""
    L = result["data"]["layers"]
    rows: list[tuple[str, str, str, str]] = []
    for e in result["engines"]:
        got = "nothing" if e.get("fails_at") == "start-up" else captured(e["boundaries"], L) if e["boundaries"] \
            else "nothing"
        if e.get("graph_states") and not e.get("fails"):
            got += f" (graphs: b {bset(e['graph_states'] or [], L)})"
        rows.append((mark(e), label(e), got, printable(_why(e), message=True)))
    return rows


class _Wrapper(textwrap.TextWrapper):
    """textwrap's, but a word longer than a line (a config key path) is cut after a "." or a "/"
    before it is cut anywhere."""

    def _split(self, text: str) -> list[str]:
        out = []
        for chunk in super()._split(text):
            if len(chunk) > self.width and not chunk.isspace():
                out += [piece for piece in re.split(r"(?<=[./])", chunk) if piece]
            else:
                out.append(chunk)
        return out


def _lines(text: str, width: int, first: str = "", indent: int = 0) -> list[str]:
    wrapper = _Wrapper(width, initial_indent=first, subsequent_indent=" " * indent, break_long_words=True,
                       break_on_hyphens=False)
    return wrapper.wrap(text)


def _wrap(text: str, indent: int = 0, first: str = "") -> list[str]:
    """A line of at most WIDTH columns per piece: `first` opens it, the rest indented."""
    return _lines(text, WIDTH, first, indent) or [first.rstrip()]


def _table(rows: list[tuple[str, str, str, str]]) -> list[str]:
    head = ("verdict", "engine and versions", "captures", "why")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(3)]
    left = sum(widths) + 6
    out = []
    for row in [head, *rows]:
        cells = "  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths, strict=True)) + "  "
        if WIDTH - left >= MIN_WHY:
            why = _lines(row[3], WIDTH - left) or [""]
            out.append((cells + why[0]).rstrip())
            out += [" " * left + piece for piece in why[1:]]
        else:
            out.append(cells.rstrip() if row is not head else cells.rstrip())
            out += _wrap(row[3], 4, "    ") if row is not head else []
    return out


def _read(result: ServingCheck) -> list[str]:
    read = result.get("read") or {}
    said = ", ".join(f"{NAMES[k]} {v['oldest']} to {v['newest']}" for k, v in read.items())
    lines = _wrap(f"read:    {said}; a later release is read with the newest's rules, unverified", 9)
    asked = []
    for engine, version in (result.get("asked") or {}).items():
        note = next((e.get("read_as") for e in result["engines"] if e["engine"] == engine), None)
        newest = read.get(engine, {}).get("newest")
        said = f"{NAMES[engine]} {version}" if version else f"{NAMES[engine]} (every release)"
        if note:
            said += f": not read, the rules of {note} assumed" + (" (the newest read)" if note == newest else "")
        asked.append(said)
    return lines + (_wrap("asked:   " + "; ".join(asked), 9) if asked else [])


def format_check(result: ServingCheck) -> str:
    """The report: the verdict and the fix first, the data, the drafter and the releases read, one
    row per engine and range of releases, the findings. Real lines; only the values are escaped."""
    d = result["data"]
    L = d["layers"]
    arch = d.get("arch")
    lines = _wrap(verdict(result), 2)
    fix = result["fix"]
    if fix is not None:  # no lines: why no config.json line helps, said as such
        for line in fix["lines"] or [fix["message"]]:
            lines += _wrap(printable(f"{'fix' if fix['lines'] else 'no fix'}: {line}", message=True), 5)
    lines.append("")
    files = f", {d['files']} files" if d.get("files") else ""
    lines += _wrap(printable(f"data:    b {bset(d['boundaries'], L)} (majority{files}, L = {L}"
                             f"{', ' + arch if arch else ''})", message=True), 9)
    for g in d.get("groups") or []:
        lines += _wrap(printable(f"         {g['label']}: b {bset(g['boundaries'], L)}", message=True), 9)
    dr = result["drafter"]
    lines += _wrap(f"drafter: {NESTED} {_value(dr['ids'])}; top-level {TOP} {_value(dr['top_level_ids'])}"
                   + ("; norm_before_fc" if dr["norm_before_fc"] else ""), 9)
    lines += _read(result)
    lines.append("")
    lines += _table(table_rows(result))
    lines.append("")
    if result["findings"]:
        lines.append("findings:")
        for f in result["findings"]:
            lines += _wrap(printable(f"{f['severity'].upper():7} {f['code']}: {f['message']}", message=True), 10,
                           "  ")
    else:
        lines.append("findings: none")
    return "\n".join(lines)


def _value(v: object) -> str:
    """A config.json value on one line, as JSON writes it (so a string shows its quotes)."""
    return printable(show(v), message=True) if v is not None else "none"
