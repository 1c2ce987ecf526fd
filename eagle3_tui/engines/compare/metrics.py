"""The numbers of a comparison, made cheaply: the aligned rows are read once, in chunks of
rows, into a float32 buffer [rows, parts, H] holding every slot (and final state) of both sides;
one batched matmul gives, per token, all dot products between parts (a Gram matrix): row norms
on its diagonal, every B-slot x A-slot cosine off it. Everything per token (cosines, norm
ratios) and the cross-slot matrix comes from those small Gram matrices; only the element-wise
metrics of the paired slots (max abs error, bf16 tolerance, exact L2 error) look at the elements
again, while the chunk is still in cache.

Threads: the ops on one chunk are small, and OpenMP teams spend most of their time at barriers
on them (several times slower on a busy 2-core box). The comparison runs with one intra-op
thread, and the main pass spreads its chunks over plain threads instead (torch releases the GIL).

Runs on the remote box too (shipped by the agent): torch and the standard library only.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

from eagle3_tui.engines.compare.sides import FindingList, Sides
from eagle3_tui.engines.compare.thresholds import (
    BF16_ATOL,
    BF16_RTOL,
    CHUNK_ELEMENTS,
    FIRST_K,
    MATCH_COS,
    RATIO_CV,
    SCALE_TOL,
)
from eagle3_tui.engines.read.final_label import checked_label
from eagle3_tui.engines.read.sample import Sample
from eagle3_tui.engines.read.stats import Cancelled
from eagle3_tui.engines.results.compare import AlignmentInfo, PairMetrics

if TYPE_CHECKING:
    import torch


@dataclass
class Measures:
    """What the main pass measured on the aligned rows, for the judge: the tensors over the span
    of B rows b_start..b_end-1 ([n, ...]), with `real` marking the rows on A's valid part."""

    #: (b_start, b_end, offset): B row t is A row t + offset
    span: tuple[int, int, int]
    #: [n] rows on A's valid part (a prefix of the span): only they count
    real: torch.Tensor
    #: [n, parts] L2 norm of every row of every part, per side
    norm_a: torch.Tensor
    norm_b: torch.Tensor
    #: {"a", "b"}: [n, parts] squared row norms (NaN/Inf rows stay so)
    sq_norms: dict[str, torch.Tensor]
    #: {"a", "b"}: [n, parts] all-zero rows among the real ones
    zero_rows: dict[str, torch.Tensor]
    #: [n, nb, na] cosine of every B part with every A part, per row
    cos: torch.Tensor
    #: [nb, na] mean over the real rows (finals included at the end when both have one)
    matrix: torch.Tensor
    #: the matrix as JSON: mean cosine of B slot j against A slot i
    matrix_json: list[list[float | None]]
    #: per slot pair (slots 0..min(ka, kb)-1)
    slots: list[PairMetrics] = field(default_factory=list)
    #: the final states' pair, when both sides have one
    final: PairMetrics | None = None
    #: (A's, B's) final-state label as checked against their own norms (both sides have a final)
    final_labels: tuple[str | None, str | None] | None = None
    #: side -> the "?" label and the reason, when a side's own norms contradict its format's label
    doubts: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    #: rows B holds as real tokens that land on A's padding (0 once they proved to be more capture)
    pad_rows: int = 0

    def aligned_rows(self, a_part: torch.Tensor, b_part: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The compared rows of one A part and one B part (aligned, within A's valid rows)."""
        b0, _b1, off = self.span
        n = int(self.real.sum())  # the rows on A's valid part are a prefix of the span
        return a_part[b0 + off:b0 + off + n], b_part[b0:b0 + n]

    def constant_factor(self, ib: int, ia: int) -> float | None:
        """The per-token norm ratio B/A when it is one constant other than 1, else None."""
        # lazy: torch: loaded when used, never at start-up
        import torch

        ratio = self.norm_b[:, ib] / self.norm_a[:, ia]
        ratio = ratio[torch.isfinite(ratio) & self.real]
        if ratio.numel() == 0:
            return None
        med = float(ratio.median())
        if abs(med - 1.0) > SCALE_TOL and cv(ratio) < RATIO_CV:
            return med
        return None


class Measurer:
    """The main pass over the aligned rows (measure): Gram matrices, per-pair errors, and the
    per-pair metrics of the JSON; the padding it proves to be more capture goes to `findings`."""

    def __init__(self, sides: Sides, findings: FindingList, *, workers: int = 1,
                 cancel: threading.Event | None = None):
        self.sides, self.findings = sides, findings
        self.workers, self.cancel = workers, cancel

    def measure(self, al: AlignmentInfo) -> Measures:
        # lazy: torch: loaded when used, never at start-up
        import torch

        s = self.sides
        a_parts, b_parts = s.a_parts, s.b_parts
        na, nb = len(a_parts), len(b_parts)
        pairs = min(s.ka, s.kb)
        h = s.a.hidden
        b0, b1, off = al["b_start"], al["b_end"], al["offset"]
        n = b1 - b0
        step = max(1, CHUNK_ELEMENTS // ((na + nb) * h))
        gram = torch.empty(n, na + nb, na + nb)
        # per pair (slots 0..pairs-1, then final): L2 norm of B - A, max |B - A|, elements beyond bf16 tol
        npair = pairs + (1 if s.both_final else 0)
        errn = torch.empty(n, npair)
        maxabs = torch.empty(n, npair)
        beyond = torch.empty(n, npair)
        chunks = list(range(0, n, step))
        segments = [(0, na, pairs, 0)]  # (first A part, first B part, how many pairs, output column)
        if s.both_final:
            segments.append((na - 1, na + nb - 1, 1, pairs))
        cancel = self.cancel

        def work(mine: list[int]) -> None:
            buf = torch.empty(step, na + nb, h)
            dbuf = torch.empty(step, max(pairs, 1), h)
            tbuf = torch.empty(step, max(pairs, 1), h)
            for r in mine:
                if cancel is not None and cancel.is_set():
                    raise Cancelled()
                c = min(step, n - r)
                x = buf[:c]
                for i, t in enumerate(a_parts):
                    x[:, i].copy_(t[b0 + off + r:b0 + off + r + c])
                for j, t in enumerate(b_parts):
                    x[:, na + j].copy_(t[b0 + r:b0 + r + c])
                torch.bmm(x, x.transpose(1, 2), out=gram[r:r + c])
                for ia, ib, count, col in segments:
                    xa = x[:, ia:ia + count]
                    d = torch.sub(x[:, ib:ib + count], xa, out=dbuf[:c, :count])
                    torch.linalg.vector_norm(d, dim=-1, out=errn[r:r + c, col:col + count])
                    d.abs_()
                    torch.amax(d, dim=-1, out=maxabs[r:r + c, col:col + count])
                    # count elements beyond bf16 tolerance: |d| - rtol*|a| - atol > 0, as a float
                    # sum of signs (comparing to bool and summing is several times slower on CPU)
                    tol = torch.abs(xa, out=tbuf[:c, :count])
                    d.sub_(tol, alpha=BF16_RTOL).sub_(BF16_ATOL).clamp_(min=0).sign_()
                    torch.sum(d, dim=-1, out=beyond[r:r + c, col:col + count])

        in_workers(work, chunks, workers=self.workers)
        sq = gram.diagonal(dim1=1, dim2=2)  # [n, na+nb] squared row norms (NaN/Inf rows stay so)
        norms = sq.clamp(min=0).sqrt()
        norm_a, norm_b = norms[:, :na], norms[:, na:]
        rows = torch.arange(b0, b1)
        # rows of B that fall on A's padding are measured but do not count
        real = (rows + off) < s.a_valid
        cos = gram[:, na:, :na] / (norm_b[:, :, None] * norm_a[:, None, :])  # [n, nb, na]
        ok = torch.isfinite(cos) & real[:, None, None]
        mean = torch.where(ok, cos, 0).sum(0) / ok.sum(0).clamp(min=1)
        mean[ok.sum(0) == 0] = float("nan")
        m = Measures(
            span=(b0, b1, off), real=real, norm_a=norm_a, norm_b=norm_b,
            sq_norms={"a": sq[:, :na], "b": sq[:, na:]},
            # all-zero rows have no direction: every cosine on them is undefined (NaN, JSON null)
            zero_rows={"a": (norm_a == 0) & real[:, None], "b": (norm_b == 0) & real[:, None]},
            cos=cos, matrix=mean, matrix_json=[[num(mean[j, i]) for i in range(s.ka)] for j in range(s.kb)],
            pad_rows=al["on_padding"],
        )
        errors = _PairErrors(rows, errn, maxabs, beyond)
        m.slots = [self.pair_metrics(m, p, p, p, errors) for p in range(pairs)]
        if m.pad_rows and al["method"] != "ids" and pairs:
            self.check_pad_tail(m, pairs)
        if s.both_final:
            m.final_labels = self.check_final_labels(m)
            m.final = self.pair_metrics(m, na - 1, nb - 1, pairs, errors)
            m.final["a_norm"], m.final["b_norm"] = m.final_labels
        return m

    def check_final_labels(self, m: Measures) -> tuple[str | None, str | None]:
        """Each side's pre/post label as its format gives it, unless its own norms contradict it
        (engines/read/final_label.py): then "?" in the header, with the reason among its assumptions
        (m.doubts)."""
        labels = []
        for side, sample, norms in (("a", self.sides.a, m.norm_a), ("b", self.sides.b, m.norm_b)):
            rows = norms[m.real]
            label, doubt = checked_label(sample.final_norm, rows[:, -1].tolist(),
                                         [rows[:, p].tolist() for p in range(len(sample.slots))])
            labels.append(label)
            if doubt:
                m.doubts[side] = (label, doubt)
        return labels[0], labels[1]

    def check_pad_tail(self, m: Measures, pairs: int) -> None:
        """Without ids, B rows past A's valid length are padding only if they equal A's pad rows."""
        # lazy: torch: loaded when used, never at start-up
        import torch

        tail = float(torch.nanmean(m.cos[~m.real][:, torch.arange(pairs), torch.arange(pairs)]))
        if math.isnan(tail):  # zero or non-finite rows: nothing can be told (zero_states says why)
            m.pad_rows = 0
        elif tail < MATCH_COS:
            self.findings.add("padding", "info",
                              f"B has {m.pad_rows} rows past A's {self.sides.a_valid} valid rows that differ "
                              "from A's padding rows (a longer capture); they were not compared",
                              rows=m.pad_rows, taken_as_real=False)
            m.pad_rows = 0

    def pair_metrics(self, m: Measures, ia: int, ib: int, col: int, e: _PairErrors) -> PairMetrics:
        # lazy: torch: loaded when used, never at start-up
        import torch

        s = self.sides
        h = s.a.hidden
        rows, off = e.rows, m.span[2]
        cos = m.cos[:, ib, ia]
        na_, nb_ = m.norm_a[:, ia], m.norm_b[:, ib]
        ok = torch.isfinite(cos) & torch.isfinite(e.errn[:, col]) & m.real
        count = int(ok.sum())
        label_a: int | str = "final" if ia >= s.ka else ia
        out: PairMetrics = {"a": label_a, "b": "final" if ib >= s.kb else ib, "tokens": count}
        if ia < s.ka:
            out["a_boundary"] = s.a.slots[ia].boundary
            out["b_boundary"] = s.b.slots[ib].boundary
        if count == 0:
            out.update({"cos_mean": None, "cos_min": None, "per_token_cos": [num(c, 5) for c in cos.tolist()]})
            out.update(self.per_token_values(m, ia, ib))
            return out
        c, ra, rb = cos[ok], na_[ok], nb_[ok]
        ratio = rb / ra
        e2 = e.errn[ok, col].pow(2)
        rel_tok = e2.sqrt() / ra
        worst = _first_near(rel_tok.nan_to_num(0), largest=True)
        worst_b = int(rows[ok][worst])
        cmin = _first_near(c, largest=False)
        out.update({
            "cos_mean": num(c.mean()), "cos_min": num(c[cmin]), "cos_min_b_row": int(rows[ok][cmin]),
            "norm_ratio_mean": num(ratio.mean()), "norm_ratio_median": num(ratio.median()),
            "norm_ratio_std": num(ratio.std() if count > 1 else 0.0),
            "a_norm_mean": num(ra.mean()), "b_norm_mean": num(rb.mean()),
            "a_norm_cv": num(cv(ra)), "b_norm_cv": num(cv(rb)),
            "max_abs_err": num(e.maxabs[ok, col].max()),
            "rel_l2_err": num(e2.sum().sqrt() / ra.pow(2).sum().sqrt()),
            "within_bf16_tol": num(1.0 - e.beyond[ok, col].sum() / (count * h)),
            "worst_b_row": worst_b, "worst_a_row": worst_b + off, "worst_rel_err": num(rel_tok[worst]),
            "excluded_rows": int((~ok & m.real).sum()),
            "per_token_cos": [num(v, 5) for v in cos.tolist()],
        })
        out.update(self.per_token_values(m, ia, ib))
        return out

    def per_token_values(self, m: Measures, ia: int, ib: int) -> PairMetrics:
        """Per compared row (B row b_start + i): both sides' L2 norms and first FIRST_K values,
        rounded to 5 significant digits (the UI shows them side by side)."""
        b0, b1, off = m.span
        a_part, b_part = self.sides.a_parts[ia], self.sides.b_parts[ib]
        return {
            "a_norms": short(m.norm_a[:, ia]), "b_norms": short(m.norm_b[:, ib]),
            "a_first": short(a_part[b0 + off:b1 + off, :FIRST_K]),
            "b_first": short(b_part[b0:b1, :FIRST_K]),
        }


@dataclass
class _PairErrors:
    """The main pass's per-row errors of each pair ([n, pairs + final]) and the B rows they are of."""

    rows: torch.Tensor
    errn: torch.Tensor  # L2 norm of B - A
    maxabs: torch.Tensor  # max |B - A|
    beyond: torch.Tensor  # elements beyond bf16 tolerance


def norm_fit(post, pre) -> tuple[float, str]:
    """How well `post` [n, H] is `pre` [n, H] passed through a norm with unknown per-channel gain:
    least squares per channel for y = g * rmsnorm(x) and for y = g * layernorm(x) + bias.
    Returns (relative L2 residual of the better fit, "RMSNorm" | "LayerNorm"). Rows with NaN/Inf
    on either side are skipped; one pass over the rows, in chunks."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    h = pre.shape[1]
    step = max(1, CHUNK_ELEMENTS // (4 * h))
    z = lambda: torch.zeros(h, dtype=torch.float64)  # noqa: E731
    s_yy, s_y, s_yu, s_uu, s_yv, s_vv, s_v = z(), z(), z(), z(), z(), z(), z()
    n = 0
    for r in range(0, pre.shape[0], step):
        x, y = pre[r:r + step].float(), post[r:r + step].float()
        ok = torch.isfinite(x).all(-1) & torch.isfinite(y).all(-1)
        if not bool(ok.all()):
            x, y = x[ok], y[ok]
        if not x.shape[0]:
            continue
        n += x.shape[0]
        u = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True).clamp(min=1e-30))
        xc = x - x.mean(-1, keepdim=True)
        v = xc * torch.rsqrt(xc.pow(2).mean(-1, keepdim=True).clamp(min=1e-30))
        s_yy += y.pow(2).sum(0).double()
        s_y += y.sum(0).double()
        s_yu += (y * u).sum(0).double()
        s_uu += u.pow(2).sum(0).double()
        s_yv += (y * v).sum(0).double()
        s_vv += v.pow(2).sum(0).double()
        s_v += v.sum(0).double()
    total = float(s_yy.sum())
    if n < 2 or total <= 0:
        return float("inf"), "RMSNorm"
    rms_res = float((s_yy - s_yu.pow(2) / s_uu.clamp(min=1e-30)).clamp(min=0).sum())
    # with an intercept per channel: residual = Syy - Sy^2/n - (Syv - Sy Sv/n)^2 / (Svv - Sv^2/n)
    syy_c = s_yy - s_y.pow(2) / n
    syv_c = s_yv - s_y * s_v / n
    svv_c = (s_vv - s_v.pow(2) / n).clamp(min=1e-30)
    ln_res = float((syy_c - syv_c.pow(2) / svv_c).clamp(min=0).sum())
    if rms_res <= ln_res:
        return math.sqrt(rms_res / total), "RMSNorm"
    return math.sqrt(ln_res / total), "LayerNorm"


def in_workers(work, chunks: list[int], *, workers: int, force_thread: bool = False) -> None:
    """Run work(chunks[w::k]) in k = min(workers, len(chunks)) Python threads, each with one
    intra-op thread. The ops on a chunk are small: one OpenMP team per op spends its time at
    barriers, and on a busy machine spinning team threads slow everything down several times.
    Threads of one process share the tensors; each writes its own rows of the outputs.
    Errors (Cancelled too) are raised again in the caller's thread."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    k = max(1, min(workers, len(chunks)))
    if k == 1 and not force_thread:
        work(chunks)
        return
    errors: list[BaseException] = []

    def run(mine: list[int]) -> None:
        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            work(mine)
        except BaseException as err:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(err)
        finally:
            torch.set_num_threads(before)

    threads = [threading.Thread(target=run, args=(chunks[w::k],), daemon=True) for w in range(k)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


class PartNonfinite(TypedDict):
    nan: int
    inf: int
    first_row: int  # the first row that has one


class NonfiniteCounts(TypedDict):
    """NaN/Inf counts of a sample (nonfinite_counts): the nonfinite finding's details per side."""

    nan: int
    inf: int
    first_row: int | None
    first_part: str | None  # the label of the part of the first row
    parts: dict[str, PartNonfinite]  # by part label, those that have one


def nonfinite_counts(sample: Sample, known=None) -> NonfiniteCounts:
    """NaN/Inf counts of every part of `sample`, with the first row that has one.

    known = (first row, squared row norms [n, parts]) for rows already reduced by the main pass:
    only those with a non-finite squared norm are looked at again. Other rows are screened by
    their float32 row sums (one cheap reduction; isfinite on bf16 is slow on CPU), and only
    rows that fail the screen are counted element by element.
    """
    # lazy: torch: loaded when used, never at start-up
    import torch

    nan = inf = 0
    first_row, first_part = None, None
    parts = [(s.label, s.tensor) for s in sample.slots]
    if sample.final is not None:
        parts.append(("final", sample.final.tensor))
    per: dict[str, PartNonfinite] = {}
    for p, (label, t) in enumerate(parts):
        rows = t.shape[0]
        suspects: list[int] = []
        lo = hi = 0
        if known is not None and p < known[1].shape[1]:  # a final only one side has is not in it
            start, sq = known
            lo, hi = start, start + sq.shape[0]
            suspects += (start + (~torch.isfinite(sq[:, p])).nonzero().flatten()).tolist()
        step = max(1, CHUNK_ELEMENTS // max(1, t.shape[1]))
        for a, b in ((0, lo), (hi, rows)):
            for r in range(a, b, step):
                sums = t[r:min(b, r + step)].float().sum(-1)
                suspects += (r + (~torch.isfinite(sums)).nonzero().flatten()).tolist()
        pn = pi = 0
        first: int | None = None
        for r in sorted(suspects):
            row = t[r].float()
            rn, ri = int(torch.isnan(row).sum()), int(torch.isinf(row).sum())
            if rn or ri:
                pn, pi = pn + rn, pi + ri
                first = r if first is None else first
        if first is not None:  # pn or pi: the first row that has one is set
            per[label] = {"nan": pn, "inf": pi, "first_row": first}
            nan, inf = nan + pn, inf + pi
            if first_row is None or first < first_row:
                first_row, first_part = first, label
    return {"nan": nan, "inf": inf, "first_row": first_row, "first_part": first_part, "parts": per}


def cv(x) -> float:
    if x.numel() < 2:
        return 0.0
    mean = float(x.mean())
    return float(x.std()) / mean if mean else float("inf")


def num(x, digits: int | None = None) -> float | None:
    """x as a JSON number; None for NaN, Inf and no value at all."""
    if x is None:
        return None
    v = float(x)
    if math.isnan(v) or math.isinf(v):
        return None
    return round(v, digits) if digits is not None else v


def factor_text(x: float) -> str:
    """A scale factor as a person reads it: 3 significant digits, no trailing zeros ("4", "1.05",
    "0.5"). A factor measured through bf16 noise (4 x A reads 3.9994 on one CPU and 4.0003 on
    another) must print the same everywhere; the exact value stays in the JSON."""
    return f"{x:.3g}"


def short(x, digits: int = 5) -> list:
    """x as nested lists of floats rounded to `digits` significant digits (short JSON);
    NaN/Inf become None. Rounded in float64 so that each value prints as its short decimal."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    x = x.detach().double()
    finite = torch.isfinite(x)
    mag = torch.where(finite & (x != 0), x.abs(), torch.ones_like(x))
    scale = torch.pow(10.0, (digits - 1) - torch.floor(torch.log10(mag)))
    out = torch.where(finite, torch.round(x * scale) / scale, x).tolist()
    if bool(finite.all()):
        return out

    def clean(v):
        if isinstance(v, list):
            return [clean(u) for u in v]
        return None if math.isnan(v) or math.isinf(v) else v

    return clean(out)


def _first_near(values, *, largest: bool, rel: float = 1e-4) -> int:
    """The first row whose value is within `rel` of the extreme: rows that tie up to float noise
    (a scaled capture has the same error on every row) give the same row on every CPU, where
    argmax would pick whichever the last bit favoured."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    top = values.max() if largest else values.min()
    band = rel * max(float(top.abs()), 1e-30)
    near = values >= top - band if largest else values <= top + band
    return int(torch.nonzero(near)[0, 0])
