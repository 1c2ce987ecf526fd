"""serve-check --live's text (the command's and the dataset view's): what the engine feeds the
drafter beside what the data holds, the numbers, the acceptance beside the prediction. The run
itself is engines/live/check.py, reached through the Source (here, or on the box).

    live: vLLM 0.32.0 (installed) feeds the drafter b 1, 14, 26; the data holds b 2, 15, 27: DIFFERS
"""

from __future__ import annotations

import textwrap
from typing import Any

from eagle3_tui.names import printable

#: the text's width
WIDTH = 100


def format_live(live: dict[str, Any]) -> str:
    """The live part of serve-check's text: what the engine feeds, the numbers, the acceptance."""
    name = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}.get(str(live.get("engine")),
                                                                            str(live.get("engine")))
    if "error" in live:
        return _wrap(f"live: {name} could not be run: {live['error']}")
    verdict = "the same" if live.get("match") else "DIFFERS"
    lines = [_wrap(f"live: {name} {live.get('version')} (installed) feeds the drafter b {_set(live.get('fed'))}; "
                   f"the data holds b {_set(live.get('data'))}: {verdict} (its aux layer ids {live.get('ids')}, "
                   f"{live.get('seconds')} s, about {live.get('memory_gib')} GiB)")]
    if live.get("explained"):
        lines.append(_wrap(f"      {live['explained']}", indent="      "))
    for c in live.get("cosines", []):
        lines.append(f"      slot {c['slot']}: fed b {_b(live['fed'], c['slot'])} (cosine {_f(c.get('fed'))}), "
                     f"data b {_b(live['data'], c['slot'])} (cosine {_f(c.get('data'))})")
    acc, off = live.get("acceptance"), live.get("offline")
    if acc:
        steps = len(acc.get("per_position") or [])
        lines.append(f"acceptance per draft position 1..{steps} (the chance that positions 1..k are all accepted):")
        lines.append(_rates(f"  measured by {name} ({acc.get('drafts')} drafts)", acc))
        if acc.get("measured_by"):
            lines.append(_wrap(f"  ({acc['measured_by']})", indent="   "))
        if off:
            lines.append(_rates(f"  predicted by accept ({off.get('drafts')} drafts)", off))
            lines.append(_wrap(f"  ({off.get('measured_by')})", indent="   "))
        same = live.get("greedy_same") or []
        lines.append(f"  the engine's greedy answers equal the data's on {sum(same)} of {len(same)} prompts")
    return "\n".join(lines)


def _rates(label: str, block: dict[str, Any]) -> str:
    rates = "  ".join(f"{r * 100:5.1f}%" if r is not None else "    -" for r in block.get("per_position") or [])
    mean = block.get("mean_length")
    return f"{label:<44} {rates}   mean length {mean:.2f}" if mean is not None else f"{label:<44} {rates}"


def _set(bounds: Any) -> str:
    return ", ".join("?" if b is None else str(b) for b in bounds or []) or "nothing"


def _b(bounds: list | None, i: int) -> str:
    return "?" if not bounds or i >= len(bounds) or bounds[i] is None else str(bounds[i])


def _f(x: Any) -> str:
    return f"{x:.4f}" if isinstance(x, float) else "-"


def _wrap(text: str, indent: str = "      ") -> str:
    return "\n".join(textwrap.wrap(printable(text, message=True), WIDTH, subsequent_indent=indent))
