"""`scan --drafter`: the drafter's top-1 agreement per file, and the files far below the rest.

Per file (in the scan worker, next to the data; the drafter is loaded once per process by
accept.cached_drafter, and a forked worker inherits the parent's copy):

- full mode: every row that carries loss (all valid rows without a loss mask), exactly
  `accept_file(path, drafter, steps=1)["top1"]`;
- quick mode: the prefix of the sample that holds its first `rows` scored rows (loss rows, or
  valid rows without a mask). The draft layer's attention is causal, so each row in the prefix
  gets the same guess as on the whole file: the quick figure is the exact top-1 over those rows,
  and only the prefix is read from a memory-mapped file.

The record carries {"accept": {"top1", "rows", "prefix", "shape"}} ("prefix": rows read, None in
full mode; "shape": the drafter's, "SpecForge, 1 layer, 3 aux states, draft vocab 320") or {"accept": {"error"}} when this file cannot be scored (no ids, another width).

torch and stdlib only: shipped to the remote box with engines/scan/records.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from eagle3_tui.engines.model.accept_words import SHORT
from eagle3_tui.engines.read.sample import SampleError
from eagle3_tui.engines.results.findings import Finding, finding
from eagle3_tui.engines.results.scan import ScanAccept, ScanRecord
from eagle3_tui.engines.scan.options import DEFAULT_ROWS

#: a file is flagged when its top-1 is below median - max(MAD_FACTOR * 1.4826 * MAD, MIN_GAP)
MAD_FACTOR = 3.0
MIN_GAP = 0.15
#: fewer scored files than this: no dataset figure to compare against
MIN_FILES = 5
SHOW = 5


def check_drafter(drafter: str, model: str | None = None) -> str | None:
    """None when the folder loads as a drafter, else the one-line reason (checked once, up front)."""
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.engines.model.accept import cached_drafter

    try:
        cached_drafter(drafter, model)
    except SampleError as err:
        return str(err)
    except OSError as err:
        return f"{drafter}: {err.strerror or err}"
    except MemoryError:
        return f"{drafter}: out of memory while loading the drafter"
    except Exception as err:  # noqa: BLE001 - a folder no check foresaw: one line, never a dead worker
        text = str(err).strip().splitlines()[0][:200] if str(err).strip() else ""
        return f"{drafter}: cannot load the drafter ({type(err).__name__}{': ' + text if text else ''})"
    return None


def quick_prefix(sample, rows: int) -> int | None:
    """Rows to read so that `rows` scored rows have their step-1 target inside; None: all."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    n = sample.valid_len
    if sample.loss_mask is None:
        return None if rows + 2 >= n else rows + 2
    on = torch.nonzero(sample.loss_mask[:n]).flatten()
    # row t is scored where loss_mask[t] is 1 and its target ids[t+2] exists
    on = on[on < n - 2]
    if on.numel() <= rows:
        return None
    return int(on[rows - 1]) + 3


def record_acceptance(sample, drafter: str, *, model: str | None = None, full: bool = False,
                      rows: int = DEFAULT_ROWS) -> ScanAccept:
    # lazy: kept off --help's imports (it loads every command module)
    from eagle3_tui.engines.model.accept import accept, cached_drafter

    try:
        d = cached_drafter(drafter, model)
        prefix = None if full else quick_prefix(sample, rows)
        r = accept(sample, d, model=model, steps=1, limit=prefix)
    except SampleError as err:
        return {"error": str(err)}
    top1 = r["top1"]
    return {"top1": None if top1 is None or not math.isfinite(top1) else round(top1, 6), "rows": r["rows"],
            "prefix": prefix, "shape": d.words, "targets": r["target_source"]}


def _top1(r: ScanRecord) -> float | None:
    """A record's drafter top-1, None when the drafter did not score it (or it holds no "accept")."""
    a = r.get("accept")
    return a.get("top1") if isinstance(a, dict) else None


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2


def low_acceptance(samples: Sequence[ScanRecord]) -> list[Finding]:
    """Finding `low_acceptance`: files whose drafter top-1 is far below the dataset's median
    (median and MAD: a few broken files do not move the yardstick they are measured with)."""
    scored = [(r["path"], top1) for r in samples if (top1 := _top1(r)) is not None]
    if len(scored) < MIN_FILES:
        return []
    values = [v for _, v in scored]
    med = _median(values)
    mad = _median([abs(v - med) for v in values])
    limit = med - max(MAD_FACTOR * 1.4826 * mad, MIN_GAP)
    low = sorted(((p, v) for p, v in scored if v < limit), key=lambda pv: pv[1])
    if not low:
        return []
    shown = ", ".join(f"{p} {100 * v:.0f}%" for p, v in low[:SHOW])
    more = f" and {len(low) - SHOW} more" if len(low) > SHOW else ""
    message = (f"{len(low)} of {len(scored)} files get a drafter top-1 far below the dataset's "
               f"(median {100 * med:.1f}%, MAD {100 * mad:.1f}%, flagged below {100 * limit:.1f}%): "
               f"{shown}{more}; compare one with a good file (slots permuted, another layer, another model?)")
    return [finding("low_acceptance", "warning", message,
                    paths=[p for p, _ in low], median=med, mad=mad, limit=limit)]


def summary_line(records: Sequence[ScanRecord]) -> str | None:
    """One line for the scan report: the dataset's drafter top-1, or None without --drafter."""
    results = [r["accept"] for r in records if isinstance(r.get("accept"), dict)]
    if not results:
        return None
    values = [top1 for a in results if (top1 := a.get("top1")) is not None]
    errors = [a["error"] for a in results if a.get("error")]
    shape = next((a["shape"] for a in results if a.get("shape")), None)
    kinds = sorted({a["targets"] for a in results if a.get("targets")})
    against = " and ".join(SHORT.get(k, k) for k in kinds)
    text = f"drafter top-1{f' ({shape})' if shape else ''}{f' {against}' if against else ''}: "
    if values:
        text += (f"median {100 * _median(values):.1f}% over {len(values)} files "
                 f"(min {100 * min(values):.1f}%, max {100 * max(values):.1f}%)")
    else:
        text += "no file could be scored"
    if errors:
        text += f"; {len(errors)} files not scored (e.g. {errors[0]})"
    return text
