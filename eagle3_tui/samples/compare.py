"""Compare a training sample (A) with an inference capture (B): align, measure, name the mismatch.

Runs on the remote box too (shipped by the agent): torch and the standard library only.

How the numbers are made, cheaply: the aligned rows are read once, in chunks of rows, into a
float32 buffer [rows, parts, H] holding every slot (and final state) of both sides; one batched
matmul gives, per token, all dot products between parts (a Gram matrix): row norms on its
diagonal, every B-slot x A-slot cosine off it. Everything per token (cosines, norm ratios) and the
cross-slot matrix comes from those small Gram matrices; only the element-wise metrics of the
paired slots (max abs error, bf16 tolerance, exact L2 error) look at the elements again, while
the chunk is still in cache.

Thresholds, from measured noise. The demo transformer (samples/model.py; seeds 0, 1, 2; 8 demo
prompts each, boundaries 1..L) run in bf16 against float32, same weights:
  - per-slot cosine: mean >= 0.9993, minimum over tokens >= 0.98;
  - per-token norm ratio: median within 1 +- 0.0015, spread (std) <= 0.011;
  - relative L2 error <= 0.035.
The faults sit well away from that noise:
  - a slot one layer off: mean cosine 0.61..0.91 (adjacent boundaries);
  - another prompt's states: median cosine over tokens -0.01..0.22 (the mean reaches 0.31 when
    the prompts share a system prompt); rows shifted by one token: 0.01..0.21;
  - the final state before vs after the norm: cosine 0.93..0.95, per-token ratio spread
    0.17..0.27, and a per-channel gain maps one onto the other (see NORM_FIT_RESIDUAL).
Real engines add other noise (fused kernels, fp8 KV cache), so the margins are wide: "same
part" needs a mean cosine of 0.99 (14x the measured 1 - cosine), "unrelated" is a median below
0.35, a scale is reported beyond 2% (13x the measured drift of the ratio).

Threads: the ops on one chunk are small, and OpenMP teams spend most of their time at barriers
on them (several times slower on a busy 2-core box). The comparison runs with one intra-op
thread, and the main pass spreads its chunks over plain threads instead (torch releases the GIL).
"""

from __future__ import annotations

import math
import threading
from typing import Any

from eagle3_tui.samples.sample import NotASample, Sample, SampleError

#: mean cosine at or above which two parts hold the same states (noise: >= 0.9993)
MATCH_COS = 0.99
#: median cosine below which nothing is related (other prompt: <= 0.22; one layer off: >= 0.61)
UNRELATED_COS = 0.35
#: |median norm ratio - 1| beyond which a matched pair differs by a scale (noise: <= 0.0015)
SCALE_TOL = 0.02
#: coefficient of variation of the per-token norm ratio above which it is not one constant
#: factor (noise: <= 0.011; before vs after a norm: >= 0.17)
RATIO_CV = 0.05
#: one side is the other passed through a norm when a per-channel gain (RMSNorm, or LayerNorm
#: with bias) fitted by least squares leaves at most this relative L2 residual. Measured on 30
#: prompts x 3 seeds: 0.0003 (float32 both sides), 0.027..0.038 (bf16 vs float32) for the true
#: pre/post pair; 0.40..0.52 for the post-norm state vs boundary L-1, 0.40..0.89 for adjacent
#: boundaries either way round, 0.79..0.96 for another prompt
NORM_FIT_RESIDUAL = 0.15
#: hidden-state alignment tries B row t against A row t + lag for lag in [-MAX_LAG, MAX_LAG]
MAX_LAG = 8
#: a lag must beat the same position by this much mean cosine to count as a shift
SHIFT_GAIN = 0.1
#: rows sampled for the lag search
LAG_ROWS = 128
#: torch.testing's defaults for bfloat16: what "equal up to bf16 rounding" means per element
BF16_RTOL, BF16_ATOL = 1.6e-2, 1e-5
#: float32 elements per chunk of the main pass (all parts of both sides)
CHUNK_ELEMENTS = 1 << 20
#: leading values per token of each compared part that the result carries (the UI's side-by-side)
FIRST_K = 5


def compare_files(a_path: str, b_path: str, *, slots: int | None = None, hidden: int | None = None,
                  cancel: threading.Event | None = None) -> dict[str, Any]:
    """Comparison JSON object of two files. `slots`/`hidden` settle an ambiguous capture (B);
    without them, a bare B tensor is split by A's hidden size. A file that cannot be loaded
    gives {"a": {...}, "b": {...}, "error": "..."} with the failing side's {"path", "error"}."""
    from eagle3_tui.samples.load import load_sample

    sides: dict[str, Any] = {}
    loaded: dict[str, Sample] = {}
    for key, path, kw in (("a", a_path, {}), ("b", b_path, {"slots": slots, "hidden": hidden})):
        try:
            loaded[key] = load_sample(path, **kw)
            sides[key] = {"path": path}
        except NotASample as err:
            sides[key] = {"path": path, "error": str(err), "not_sample": True}
        except SampleError as err:
            sides[key] = {"path": path, "error": str(err)}
        except MemoryError:
            sides[key] = {"path": path, "error": "out of memory while loading the file"}
    if len(loaded) < 2:
        failed = [k for k in ("a", "b") if "error" in sides[k]]
        msg = "; ".join(f"{k.upper()} {sides[k]['path']}: {sides[k]['error']}" for k in failed)
        return {"a": sides["a"], "b": sides["b"], "error": msg}
    a, b = loaded["a"], loaded["b"]
    if slots is None and hidden is None:
        b = _split_like(b, a)
    return compare(a, b, cancel=cancel)


def _split_like(b: Sample, a: Sample) -> Sample:
    """A bare capture whose width was split by guesswork is re-split with A's hidden size."""
    import torch

    from eagle3_tui.samples.sample import Slot

    # the loader says what it guessed; slots cut from one tensor can be cut again
    guessed = bool(b.assumptions) and "split into" in b.source_keys.get("slots", "")
    if not guessed or not b.slots or not a.hidden or b.hidden == a.hidden:
        return b
    width = sum(s.tensor.shape[1] for s in b.slots)
    if width % a.hidden:
        return b
    whole = torch.cat([s.tensor for s in b.slots], dim=1) if len(b.slots) > 1 else b.slots[0].tensor
    k = width // a.hidden
    b.slots = [Slot(whole[:, i * a.hidden:(i + 1) * a.hidden], f"aux{i}") for i in range(k)]
    b.assumptions = [f"k = {k} slots of H = {a.hidden} (width {width}), H taken from the training sample"]
    return b


# ------------------------------------------------------------------------------------ compare


def compare(a: Sample, b: Sample, *, cancel: threading.Event | None = None) -> dict[str, Any]:
    """Compare training sample `a` with inference capture `b` (see the module docstring)."""
    import torch

    workers = torch.get_num_threads()

    def run() -> dict[str, Any]:
        with torch.no_grad():
            return _Comparison(a, b, cancel, workers).run()

    if workers <= 1:
        return run()
    # everything outside the main pass is many small ops: one intra-op thread each is fastest
    # (see _in_workers); the main pass spreads its chunks over `workers` plain threads
    out: list[dict[str, Any]] = []
    _in_workers(lambda _: out.append(run()), [0], workers=1, force_thread=True)
    return out[0]


class _Comparison:
    def __init__(self, a: Sample, b: Sample, cancel, workers: int = 1):
        self.a, self.b, self.cancel, self.workers = a, b, cancel, workers
        self.findings: list[dict[str, Any]] = []
        self.a_parts = [s.tensor for s in a.slots]
        self.b_parts = [s.tensor for s in b.slots]
        self.both_final = a.final is not None and b.final is not None
        if self.both_final:
            self.a_parts.append(a.final.tensor)
            self.b_parts.append(b.final.tensor)
        self.ka, self.kb = len(a.slots), len(b.slots)
        self.same_h = a.hidden == b.hidden and a.hidden > 0
        self.a_valid = a.valid_len

    # -- the whole thing ------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        alignment = self.align()
        result: dict[str, Any] = {
            "a": _header(self.a), "b": _header(self.b), "alignment": alignment,
            "slots": [], "matrix": [], "final": None, "findings": self.findings,
            "rows": self.aligned_rows_ids(alignment),
        }
        self.check_width()
        if self.same_h and alignment["length"] > 0:
            self.measure(alignment, result)
        self.check_nonfinite()
        self.check_padding_flags()
        order = {"error": 0, "warning": 1, "info": 2}
        self.findings.sort(key=lambda f: order[f["severity"]])
        return result

    def add(self, code: str, severity: str, message: str, **details: Any) -> None:
        self.findings.append({"code": code, "severity": severity, "message": message, **details})

    # -- alignment ------------------------------------------------------------------------------
    def align(self) -> dict[str, Any]:
        a, b = self.a, self.b
        ids_off, diverges = None, None
        # B's own padding (SpecForge pads B too when it is a rerun of the batch) is not a token
        b_valid = self.b_valid = b.valid_len
        if a.ids is not None and b.ids is not None:
            ids_off, diverges = _align_ids(a.ids, b.ids.reshape(-1)[:b_valid])
        method, offset = ("ids", ids_off) if ids_off is not None else ("position", 0)
        end = diverges if diverges is not None else b_valid
        scores = self.search_lags(offset, end, ids_known=ids_off is not None)
        lag = _best_lag(scores) if scores else None
        if lag is not None:
            base = scores.get(0) or -1.0
            if ids_off is None and scores[lag] >= UNRELATED_COS:
                method, offset = "hidden", lag
                if lag:
                    self.report_lag_without_ids(lag, scores[lag], base)
            elif lag != 0 and scores[lag] >= max(UNRELATED_COS, base + SHIFT_GAIN):
                method, offset = "hidden", ids_off + lag
                self.add("token_shift", "error",
                         f"B's row t holds A's row t{lag:+d}: mean cosine {scores[lag]:.4f} at that lag vs "
                         f"{base:.4f} at the same position; hidden rows are shifted against the token ids",
                         offset=lag, cosine=_num(scores[lag]), cosine_same_position=_num(base))
        b0 = max(0, -offset)
        b1 = min(b_valid, a.tokens - offset)
        if diverges is not None:
            b1 = min(b1, diverges)
        # rows B holds as real tokens that land on A's padding: shown, never compared
        self.pad_rows = max(0, min(b1 - b0, b1 + offset - self.a_valid))
        out = {"method": method, "offset": offset, "length": max(0, b1 - b0 - self.pad_rows),
               "diverges_at": diverges, "a_start": b0 + offset, "b_start": b0, "b_end": b1,
               "on_padding": self.pad_rows}
        if ids_off is not None and offset != ids_off:
            out["ids_offset"] = ids_off
        if scores:
            out["lag_scores"] = {str(k): _num(v) for k, v in scores.items()}
        if diverges is not None:
            self.report_divergence(ids_off, diverges)
        elif a.ids is not None and b.ids is not None and ids_off is None:
            self.add("token_divergence", "error", "token ids of A and B do not line up at any offset: "
                     "different tokenisation or a different prompt", position=0)
        return out

    def report_lag_without_ids(self, lag: int, score: float, base: float) -> None:
        """Without ids on both sides, rows that line up only at a lag mean B's row 0 is not the
        prompt's first token: a truncated or shifted capture, or one that starts later unsaid."""
        side = "B has" if self.b.ids is None else "A has" if self.a.ids is None else "the sides have"
        self.add("token_shift", "warning",
                 f"{side} no token ids, and B's row t lines up with A's row t{lag:+d} (mean cosine {score:.4f} "
                 f"at that lag vs {base:.4f} at the same position): B's first row is not the prompt's first "
                 "token; a capture that really starts later should carry its token ids",
                 offset=lag, cosine=_num(score), cosine_same_position=_num(base), ids=False)

    def search_lags(self, offset: int, end: int, *, ids_known: bool) -> dict[int, float | None] | None:
        """Similarity per lag in [-MAX_LAG, MAX_LAG], or None when not needed: the ids already
        line the rows up and they agree at lag 0 (the common, cheap case)."""
        if not (self.same_h and self.ka and self.kb):
            return None
        if ids_known:
            here = self.lag_scores(offset, end, lags=[0])[0]
            if here is None or here >= MATCH_COS:
                return None
        return self.lag_scores(offset, end, lags=range(-MAX_LAG, MAX_LAG + 1))

    def lag_scores(self, offset: int, end: int, lags) -> dict[int, float | None]:
        """Per lag: mean over B slots of the best mean cosine against any A slot, B row t vs A
        row t + offset + lag, on up to LAG_ROWS rows spread over the usable range."""
        import torch

        lags = list(lags)
        lo = max(0, -(offset + min(lags)), 1 if end > 2 else 0)  # row 0 (the sink) says little
        hi = min(end, self.b_valid, self.a_valid - offset - max(lags))
        if hi <= lo:
            return {l: None for l in lags}
        n = hi - lo
        idx = torch.linspace(lo, hi - 1, min(n, LAG_ROWS)).round().long().unique()
        bsub = _unit(torch.stack([s.tensor[idx].float() for s in self.b.slots], dim=1))  # [m, kb, H]
        out: dict[int, float | None] = {}
        for lag in lags:
            asub = _unit(torch.stack([s.tensor[idx + offset + lag].float() for s in self.a.slots], dim=1))
            cos = torch.bmm(bsub, asub.transpose(1, 2))  # [m, kb, ka]
            mean = torch.nanmean(cos, dim=0)  # rows with NaN/Inf drop out
            best = mean.nan_to_num(-1.0).amax(dim=1).mean().item()
            out[lag] = None if math.isnan(best) else best
        return out

    def report_divergence(self, ids_off: int, t: int) -> None:
        a, b = self.a, self.b
        a_row = t + ids_off
        in_response = a.loss_mask is not None and 0 <= a_row < len(a.loss_mask) and bool(a.loss_mask[a_row])
        a_id = int(a.ids[a_row]) if 0 <= a_row < len(a.ids) else None
        b_id = int(b.ids[t])
        ctx = {"a_ids": a.ids[max(0, a_row - 3):a_row + 3].tolist(), "b_ids": b.ids[max(0, t - 3):t + 3].tolist()}
        if in_response:
            self.add("token_divergence", "info",
                     f"token ids agree for {t} positions, then B continues with other tokens from position {t} "
                     f"(A {a_id}, B {b_id}) inside A's response: a generated continuation; compared up to there",
                     position=t, a_row=a_row, a_id=a_id, b_id=b_id, in_response=True, **ctx)
        else:
            where = "in the prompt (loss_mask 0)" if a.loss_mask is not None else "(A has no loss mask)"
            shift = _realign(a.ids, b.ids, a_row, t)
            if shift is None:
                why = "and never line up again: B is another prompt that shares the first tokens"
            elif shift == 0:
                why = "then agree again: a token was replaced (chat-template drift?)"
            else:
                what = f"{abs(shift)} token(s) inserted" if shift < 0 else f"{shift} token(s) missing"
                why = f"and line up again after it ({what} in B): chat-template drift?"
            self.add("token_divergence", "error",
                     f"token ids agree for {t} positions, then differ at position {t} {where}: A {a_id}, B {b_id}, "
                     f"{why}; only the first {t} positions were compared",
                     position=t, a_row=a_row, a_id=a_id, b_id=b_id, in_response=False, realign_offset=shift, **ctx)

    # -- width ------------------------------------------------------------------------------------
    def check_width(self) -> None:
        a, b = self.a, self.b
        wa, wb = self.ka * a.hidden, self.kb * b.hidden
        if (wa == wb and self.same_h) or (not self.ka and not self.kb):
            return
        details = {"a_width": wa, "b_width": wb, "a_slots": self.ka, "b_slots": self.kb,
                   "a_hidden": a.hidden, "b_hidden": b.hidden}
        if not self.ka or not self.kb:
            missing = "B" if not self.kb else "A"
            self.add("width_mismatch", "error", f"{missing} has no auxiliary slots (only a final state)", **details)
            return
        why = ""
        if self.kb == 1 and b.hidden == a.hidden:
            why = ": auxiliary capture looks disabled (one state of width H instead of k*H)"
        self.add("width_mismatch", "error",
                 f"B has {self.kb} slot(s) of H={b.hidden} (width {wb}), "
                 f"A has {self.ka} of H={a.hidden} (width {wa}){why}", **details)

    # -- the main pass -----------------------------------------------------------------------------
    def measure(self, al: dict[str, Any], result: dict[str, Any]) -> None:
        import torch

        from eagle3_tui.samples.stats import Cancelled

        a_parts, b_parts = self.a_parts, self.b_parts
        na, nb = len(a_parts), len(b_parts)
        pairs = min(self.ka, self.kb)
        h = self.a.hidden
        b0, b1, off = al["b_start"], al["b_end"], al["offset"]
        n = b1 - b0
        step = max(1, CHUNK_ELEMENTS // ((na + nb) * h))
        gram = torch.empty(n, na + nb, na + nb)
        # per pair (slots 0..pairs-1, then final): L2 norm of B - A, max |B - A|, elements beyond bf16 tol
        npair = pairs + (1 if self.both_final else 0)
        errn = torch.empty(n, npair)
        maxabs = torch.empty(n, npair)
        beyond = torch.empty(n, npair)
        chunks = list(range(0, n, step))
        segments = [(0, na, pairs, 0)]  # (first A part, first B part, how many pairs, output column)
        if self.both_final:
            segments.append((na - 1, na + nb - 1, 1, pairs))

        def work(mine: list[int]) -> None:
            buf = torch.empty(step, na + nb, h)
            dbuf = torch.empty(step, max(pairs, 1), h)
            tbuf = torch.empty(step, max(pairs, 1), h)
            for r in mine:
                if self.cancel is not None and self.cancel.is_set():
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

        _in_workers(work, chunks, workers=self.workers)
        sq = gram.diagonal(dim1=1, dim2=2)  # [n, na+nb] squared row norms (NaN/Inf rows stay so)
        self.sq_norms = {"a": sq[:, :na], "b": sq[:, na:]}
        norms = sq.clamp(min=0).sqrt()
        self.norm_a, self.norm_b = norms[:, :na], norms[:, na:]
        rows = torch.arange(b0, b1)
        # rows of B that fall on A's padding are measured but do not count
        self.real = (rows + off) < self.a_valid
        self.span = (b0, b1, off)
        # all-zero rows have no direction: every cosine on them is undefined (NaN, JSON null)
        self.zero_rows = {"a": (self.norm_a == 0) & self.real[:, None], "b": (self.norm_b == 0) & self.real[:, None]}
        cos = gram[:, na:, :na] / (self.norm_b[:, :, None] * self.norm_a[:, None, :])  # [n, nb, na]
        self.cos = cos
        ok = torch.isfinite(cos) & self.real[:, None, None]
        mean = torch.where(ok, cos, 0).sum(0) / ok.sum(0).clamp(min=1)
        mean[ok.sum(0) == 0] = float("nan")
        self.matrix = mean  # [nb, na], finals included at the end when both have one
        result["matrix"] = [[_num(mean[j, i]) for i in range(self.ka)] for j in range(self.kb)]
        per_pair = []
        for p in range(pairs):
            per_pair.append(self.pair_metrics(p, p, p, rows, off, errn, maxabs, beyond))
        result["slots"] = per_pair
        if self.pad_rows and al["method"] != "ids" and pairs:
            # without ids, B rows past A's valid length are padding only if they equal A's pad rows
            tail = float(torch.nanmean(cos[~self.real][:, torch.arange(pairs), torch.arange(pairs)]))
            if math.isnan(tail):  # zero or non-finite rows: nothing can be told (zero_states says why)
                self.pad_rows = 0
            elif tail < MATCH_COS:
                self.add("padding", "info",
                         f"B has {self.pad_rows} rows past A's {self.a_valid} valid rows that differ from A's "
                         "padding rows (a longer capture); they were not compared",
                         rows=self.pad_rows, taken_as_real=False)
                self.pad_rows = 0
        if self.both_final:
            result["final"] = self.pair_metrics(na - 1, nb - 1, pairs, rows, off, errn, maxabs, beyond)
            result["final"].update({"a_norm": self.a.final_norm, "b_norm": self.b.final_norm})
        self.judge(result)

    def pair_metrics(self, ia: int, ib: int, col: int, rows, off: int, errn, maxabs, beyond) -> dict[str, Any]:
        import torch

        h = self.a.hidden
        cos = self.cos[:, ib, ia]
        na_, nb_ = self.norm_a[:, ia], self.norm_b[:, ib]
        ok = torch.isfinite(cos) & torch.isfinite(errn[:, col]) & self.real
        m = int(ok.sum())
        label_a = "final" if ia >= self.ka else ia
        out: dict[str, Any] = {"a": label_a, "b": "final" if ib >= self.kb else ib, "tokens": m}
        if ia < self.ka:
            out["a_boundary"] = self.a.slots[ia].boundary
            out["b_boundary"] = self.b.slots[ib].boundary
        if m == 0:
            out.update({"cos_mean": None, "cos_min": None, "per_token_cos": [_num(c, 5) for c in cos.tolist()]})
            out.update(self.per_token_values(ia, ib))
            return out
        c, ra, rb = cos[ok], na_[ok], nb_[ok]
        ratio = rb / ra
        e2 = errn[ok, col].pow(2)
        rel_tok = e2.sqrt() / ra
        worst = int(rel_tok.nan_to_num(0).argmax())
        worst_b = int(rows[ok][worst])
        cmin = int(c.argmin())
        out.update({
            "cos_mean": _num(c.mean()), "cos_min": _num(c[cmin]), "cos_min_b_row": int(rows[ok][cmin]),
            "norm_ratio_mean": _num(ratio.mean()), "norm_ratio_median": _num(ratio.median()),
            "norm_ratio_std": _num(ratio.std() if m > 1 else 0.0),
            "a_norm_mean": _num(ra.mean()), "b_norm_mean": _num(rb.mean()),
            "a_norm_cv": _num(_cv(ra)), "b_norm_cv": _num(_cv(rb)),
            "max_abs_err": _num(maxabs[ok, col].max()),
            "rel_l2_err": _num(e2.sum().sqrt() / ra.pow(2).sum().sqrt()),
            "within_bf16_tol": _num(1.0 - beyond[ok, col].sum() / (m * h)),
            "worst_b_row": worst_b, "worst_a_row": worst_b + off, "worst_rel_err": _num(rel_tok[worst]),
            "excluded_rows": int((~ok & self.real).sum()),
            "per_token_cos": [_num(v, 5) for v in cos.tolist()],
        })
        out.update(self.per_token_values(ia, ib))
        return out

    def per_token_values(self, ia: int, ib: int) -> dict[str, Any]:
        """Per compared row (B row b_start + i): both sides' L2 norms and first FIRST_K values,
        rounded to 5 significant digits (the UI shows them side by side)."""
        b0, b1, off = self.span
        a_part, b_part = self.a_parts[ia], self.b_parts[ib]
        return {
            "a_norms": _short(self.norm_a[:, ia]), "b_norms": _short(self.norm_b[:, ib]),
            "a_first": _short(a_part[b0 + off:b1 + off, :FIRST_K]),
            "b_first": _short(b_part[b0:b1, :FIRST_K]),
        }

    def aligned_rows_ids(self, al: dict[str, Any]) -> dict[str, Any]:
        """Token ids of both sides (and A's loss mask) for the aligned B rows b_start..b_end-1."""
        b0, b1, a0 = al["b_start"], al["b_end"], al["a_start"]
        n = max(0, b1 - b0)

        def cut(t, start):
            return None if t is None else t.reshape(-1)[start:start + n].tolist()

        return {"b_start": b0, "a_start": a0, "count": n, "a_ids": cut(self.a.ids, a0),
                "b_ids": cut(self.b.ids, b0), "a_loss_mask": cut(self.a.loss_mask, a0)}

    # -- findings from the numbers -------------------------------------------------------------------
    def judge(self, result: dict[str, Any]) -> None:
        import torch

        ka, kb = self.ka, self.kb
        if self.check_zero_states():
            return  # no direction to compare: every cosine of that side is undefined
        if not ka or not kb:
            self.judge_final(result)
            return
        slot_matrix = self.matrix[:kb, :ka]
        best_cos, best_a = slot_matrix.nan_to_num(-1.0).max(dim=1)
        # the median over tokens: prompts that share a system prompt agree on those first rows
        cos = self.cos[:, :kb, :ka][self.real]
        medians = torch.nanmedian(cos, dim=0).values if cos.shape[0] else slot_matrix
        top = float(medians.nan_to_num(-1.0).max())
        if top < UNRELATED_COS:
            agree = torch.isfinite(cos).all(-1).all(-1) & (cos.diagonal(dim1=1, dim2=2) >= MATCH_COS).all(-1)
            lead = int(agree.long().cumprod(0).sum()) if agree.numel() else 0
            shared = f"; only the first {lead} rows agree (a shared prefix)" if lead else ""
            self.add("unrelated_sample", "error",
                     f"the highest median cosine between any B slot and any A slot is {top:.3f} (mean "
                     f"{float(best_cos.max()):.3f}; the same prompt gives > {MATCH_COS}){shared}: "
                     "these are the hidden states of another prompt",
                     best_cosine=_num(top), best_mean_cosine=_num(best_cos.max()), shared_prefix=lead)
            return
        if kb != ka:  # width_mismatch already said what is wrong; the numbers stay in the matrix
            self.judge_final(result)
            return
        mismatched, mapping, scaled = [], [], []
        normed = False
        for j in range(kb):
            if bool(torch.isnan(slot_matrix[j]).any()):  # a part with no finite row: nonfinite says so
                mapping.append(None)
                continue
            i, cj = int(best_a[j]), float(best_cos[j])
            if cj >= MATCH_COS:
                mapping.append(i)
                factor = self.constant_factor(j, i)
                if factor is not None:
                    scaled.append((j, factor))
                continue
            mapping.append(None)
            norm = self.norm_pattern(result["slots"][j], j, j) if j < ka else None
            if norm is not None:
                normed = True
                self.add("norm_mismatch", "error",
                         f"slot {j}: {norm['message']}", slot=j, **norm["details"])
            else:
                mismatched.append({"slot": j, "nearest": i, "cosine": _num(cj)})
        self.judge_layers(slot_matrix, mapping, mismatched, normed)
        if scaled:
            factors = [f for _, f in scaled]
            med = sorted(factors)[len(factors) // 2]
            self.add("scale_mismatch", "warning",
                     f"B = {med:.4g} x A in slot(s) {', '.join(str(j) for j, _ in scaled)}: same direction "
                     f"(cosine >= {MATCH_COS}), constant per-token norm ratio", factor=_num(med),
                     slots=[j for j, _ in scaled], factors=[_num(f) for f in factors])
        self.judge_final(result)

    def check_zero_states(self) -> bool:
        """Parts that are exactly zero on compared rows: a capture that holds no states (a hook
        that never fired, a buffer never filled). Returns True when a whole side is zero, so that
        nothing else is judged from its undefined cosines."""
        zero = getattr(self, "zero_rows", None)
        n = int(self.real.sum()) if zero is not None else 0
        if not n:
            return False
        notes, details, whole_side = [], {}, False
        b0, _b1, off = self.span
        for side, sample in (("a", self.a), ("b", self.b)):
            labels = [s.label for s in sample.slots] + (["final"] if self.both_final else [])
            counts = zero[side].sum(0).tolist()
            whole = [labels[p] for p, c in enumerate(counts) if c == n]
            some = {labels[p]: c for p, c in enumerate(counts) if 0 < c < n}
            if not whole and not some:
                continue
            tag = side.upper()
            start = b0 + (off if side == "a" else 0)
            first = start + int(zero[side].any(1).nonzero()[0, 0])
            details[side] = {"all_zero": whole, "zero_rows": some, "first_row": first}
            if whole:
                notes.append(f"{tag}'s {', '.join(whole)} {'is' if len(whole) == 1 else 'are'} zero on every "
                             f"compared row ({n}): no states were written there (a capture hook that never fired, "
                             "a buffer never filled?)")
            if some:
                notes.append(f"{tag}'s " + ", ".join(f"{lab} is zero on {c} of {n} rows" for lab, c in some.items())
                             + f" (first {tag} row {first}): those rows hold no states and are left out")
            slot_labels = labels[:len(sample.slots)]
            whole_side |= bool(slot_labels) and all(lab in whole for lab in slot_labels)
        if notes:
            self.add("zero_states", "error", "; ".join(notes) + "; cosines with a zero vector are undefined",
                     **details)
        return whole_side

    def judge_layers(self, matrix, mapping: list[int | None], mismatched: list[dict[str, Any]],
                     normed: bool) -> None:
        """Name what the slot -> slot matches say: a reordering, a layer shift, or other layers.

        mapping[j] is the A slot B slot j holds (mean cosine >= MATCH_COS) or None; `mismatched`
        lists the B slots that hold no A slot. A shift (every B slot a boundary off, ids read
        under the other convention) keeps the slots ascending: some B slots may land exactly on a
        neighbouring A slot (B_j = A_{j-1} when B is shallower), all at one constant offset."""
        kb = len(mapping)
        matched = {j: i for j, i in enumerate(mapping) if i is not None}
        moved = {j: i for j, i in matched.items() if i != j}
        ascending = all(i1 < i2 for (_, i1), (_, i2) in zip(sorted(matched.items()), sorted(matched.items())[1:]))
        offsets = {i - j for j, i in matched.items()}
        text = ", ".join(f"B{j}=A{m}" if m is not None else f"B{j}=?" for j, m in enumerate(mapping))
        if len(matched) == kb and moved and len(set(matched.values())) == kb and not ascending:
            self.add("slot_permutation", "error",
                     f"B's slots are A's in another order: {text} (mean cosine >= {MATCH_COS}); "
                     "concatenated in list order instead of ascending layer order?", mapping=mapping)
            return
        shifted = bool(moved) and len(offsets) == 1 and not normed and len(matched) + len(mismatched) == kb
        if moved and not shifted:
            if not ascending:  # a reordering with other faults besides
                self.add("slot_permutation", "error",
                         f"B's slots are A's in another order: {text} (mean cosine >= {MATCH_COS}); "
                         "concatenated in list order instead of ascending layer order?", mapping=mapping)
            else:  # ascending, but not at one offset (e.g. two B slots hold the same A slot)
                mismatched = sorted(mismatched + [
                    {"slot": j, "nearest": i, "cosine": _num(matrix[j, i]), "holds": i} for j, i in moved.items()
                ], key=lambda m: m["slot"])
        if shifted:
            d = offsets.pop()
            listed = sorted(mismatched + [
                {"slot": j, "nearest": i, "cosine": _num(matrix[j, i]), "holds": i} for j, i in moved.items()
            ], key=lambda m: m["slot"])
            direction = "shallower" if d < 0 else "deeper"
            shift = {"direction": direction, "slots": d, "boundaries": self.boundary_shift(d),
                     "told_by": "exact matches"}
            holds = ", ".join(f"B{j} = A{i} ({matrix[j, i]:.3f})" for j, i in sorted(moved.items()))
            rest = ", ".join(f"B{m['slot']}~A{m['nearest']} {m['cosine']:.3f}" for m in mismatched)
            self.add("slot_mismatch", "error",
                     f"{len(listed)} of {kb} B slots are not at their A position: every B slot sits {direction} "
                     f"than A's, {holds} exactly" + (f", {rest} match nothing" if rest else "") +
                     " (ascending, not reordered): one boundary off: layer ids read under the other convention",
                     slots=listed, shift=shift, mapping=mapping)
            return
        if not mismatched:
            return
        parts = ", ".join(f"B{m['slot']}~A{m['nearest']} {m['cosine']:.3f}" for m in mismatched)
        details: dict[str, Any] = {"slots": mismatched}
        tail = "captured at other layers, e.g. layer ids read under the other convention"
        if len(mismatched) == kb and not matched:
            direction = _shift_direction(matrix)
            if direction is not None:
                details["shift"] = {"direction": direction, "slots": None, "boundaries": self.boundary_shift(None),
                                    "told_by": "adjacent-slot cosines"}
                tail = (f"every B slot sits {direction} than A's (the adjacent-slot cosines say so): a layer "
                        "shift, likely one boundary off: layer ids read under the other convention")
        self.add("slot_mismatch", "error",
                 f"{len(mismatched)} of {kb} B slots match no A slot (best mean cosine {parts}; "
                 f"the same layer gives > {MATCH_COS}): {tail}", **details)

    def boundary_shift(self, d: int | None) -> int | None:
        """B's boundary minus A's, when the files label their slots and it is one number."""
        a_b = [s.boundary for s in self.a.slots]
        b_b = [s.boundary for s in self.b.slots]
        if None not in a_b and None not in b_b:
            diffs = {y - x for x, y in zip(a_b, b_b)}
            return diffs.pop() if len(diffs) == 1 else None
        if d is not None and None not in a_b:  # B_j holds A_{j+d}: its boundary is A_{j+d}'s
            diffs = {a_b[j + d] - a_b[j] for j in range(len(a_b)) if 0 <= j + d < len(a_b)}
            return diffs.pop() if len(diffs) == 1 else None
        return None

    def judge_final(self, result: dict[str, Any]) -> None:
        fin = result.get("final")
        if not fin or fin.get("cos_mean") is None:
            return
        la, lb = self.a.final_norm, self.b.final_norm
        if la and lb and la != lb:
            self.add("norm_mismatch", "info",
                     f"final: A is {la}-norm and B {lb}-norm by their formats (cosine {fin['cos_mean']:.3f}); "
                     "expected, the final states are not compared as equals", slot="final", expected=True)
            return
        if fin["cos_mean"] >= MATCH_COS:
            factor = self.constant_factor(len(self.b_parts) - 1, len(self.a_parts) - 1)
            if factor is not None:
                self.add("scale_mismatch", "warning",
                         f"final: B = {factor:.4g} x A (same direction, constant per-token norm ratio)",
                         factor=_num(factor), slots=["final"], factors=[_num(factor)])
            return
        norm = self.norm_pattern(fin, len(self.a_parts) - 1, len(self.b_parts) - 1)
        if norm is not None:
            self.add("norm_mismatch", "warning", f"final: {norm['message']}", slot="final", **norm["details"])
        elif fin["cos_mean"] >= UNRELATED_COS:
            self.add("slot_mismatch", "error",
                     f"final: mean cosine {fin['cos_mean']:.3f} (same state gives > {MATCH_COS}): "
                     "the final states come from different layers",
                     slots=[{"slot": "final", "nearest": "final", "cosine": fin["cos_mean"]}])

    def constant_factor(self, ib: int, ia: int) -> float | None:
        """The per-token norm ratio B/A when it is one constant other than 1, else None."""
        import torch

        ratio = self.norm_b[:, ib] / self.norm_a[:, ia]
        ratio = ratio[torch.isfinite(ratio) & self.real]
        if ratio.numel() == 0:
            return None
        med = float(ratio.median())
        if abs(med - 1.0) > SCALE_TOL and _cv(ratio) < RATIO_CV:
            return med
        return None

    def norm_pattern(self, m: dict[str, Any], ia: int, ib: int) -> dict[str, Any] | None:
        """One side is the other passed through a norm: the per-token norm ratio varies, and a
        fitted per-channel gain maps the normalised other side onto it (see NORM_FIT_RESIDUAL)."""
        if m.get("cos_mean") is None or m["cos_mean"] < UNRELATED_COS:
            return None
        ratio_cv = (m["norm_ratio_std"] or 0.0) / max(m["norm_ratio_mean"] or 1e-30, 1e-30)
        if ratio_cv <= RATIO_CV:
            return None
        a_rows, b_rows = self.aligned_rows(self.a_parts[ia], self.b_parts[ib])
        fits = {"a": _norm_fit(a_rows, b_rows), "b": _norm_fit(b_rows, a_rows)}
        post = min(fits, key=lambda k: fits[k][0])
        residual, kind = fits[post]
        if residual > NORM_FIT_RESIDUAL:
            return None
        flat, other = post.upper(), ("B" if post == "a" else "A")
        return {
            "message": f"{flat} equals {other} passed through {kind} with per-channel gains (residual "
                       f"{100 * residual:.1f}%; cosine {m['cos_mean']:.3f}, per-token norm ratio spread "
                       f"{100 * ratio_cv:.0f}%, norm CV A {m['a_norm_cv']:.3f} / B {m['b_norm_cv']:.3f}): "
                       f"{flat} was taken after a norm, {other} before it",
            "details": {"after_norm": post, "norm_kind": kind, "fit_residual": _num(residual),
                        "ratio_cv": _num(ratio_cv), "a_norm_cv": m["a_norm_cv"], "b_norm_cv": m["b_norm_cv"]},
        }

    def aligned_rows(self, a_part, b_part):
        """The compared rows of one A part and one B part (aligned, within A's valid rows)."""
        b0, _b1, off = self.span
        n = int(self.real.sum())  # the rows on A's valid part are a prefix of the span
        return a_part[b0 + off:b0 + off + n], b_part[b0:b0 + n]

    # -- NaN / Inf and padding -----------------------------------------------------------------------
    def check_nonfinite(self) -> None:
        sides = {}
        measured = getattr(self, "sq_norms", None)
        for side, sample in (("a", self.a), ("b", self.b)):
            known = None
            if measured is not None:  # rows of the main pass: their squared norms say it already
                b0, b1, off = self.span
                start = b0 + off if side == "a" else b0
                known = (start, measured[side])
            counts = _nonfinite(sample, known)
            if counts["nan"] or counts["inf"]:
                sides[side] = counts
        if not sides:
            return
        text = "; ".join(
            f"{k.upper()} has {v['nan']} NaN and {v['inf']} Inf values, "
            f"first in row {v['first_row']} ({v['first_part']})"
            for k, v in sides.items())
        self.add("nonfinite", "error", f"{text}; those rows are left out of the metrics", **sides)

    def check_padding_flags(self) -> None:
        notes, details = [], {}
        if self.pad_rows:
            notes.append(f"B's last {self.pad_rows} aligned rows fall on A's padding (A has {self.a_valid} valid of "
                         f"{self.a.tokens} rows): padding taken as real tokens; only A's valid rows were compared")
            details["rows"] = self.pad_rows
        for side, s in (("A", self.a), ("B", self.b)):
            bad = _mask_on_padding(s)
            if bad:
                notes.append(f"{side}'s loss_mask is 1 on {bad} trailing rows with id 0 (padding)")
                details[f"{side.lower()}_loss_mask_on_padding"] = bad
        if notes:
            self.add("padding", "warning", "; ".join(notes), **details)


# ------------------------------------------------------------------------------------ helpers


def _align_ids(a_ids, b_ids) -> tuple[int | None, int | None]:
    """(offset, first B row where ids differ) with B row t = A row t + offset, or (None, None).

    Offsets tried: |offset| <= MAX_LAG and wherever A holds B's first id (B may start later).
    The offset with the longest run of equal ids from B's first aligned row wins.
    """
    import torch

    a, b = a_ids.reshape(-1).long(), b_ids.reshape(-1).long()
    ta, tb = len(a), len(b)
    cands = set(range(-MAX_LAG, MAX_LAG + 1))
    if tb:
        cands.update((a == b[0]).nonzero().flatten()[:64].tolist())
    best: tuple[int, int, int | None] | None = None  # (run, -|offset|, offset)
    best_div = None
    for o in sorted(cands, key=abs):
        b0, b1 = max(0, -o), min(tb, ta - o)
        if b1 <= b0:
            continue
        diff = (a[b0 + o:b1 + o] != b[b0:b1]).nonzero()
        run = int(diff[0]) if len(diff) else b1 - b0
        key = (run, -abs(o))
        if run and (best is None or key > best[:2]):
            best = (run, -abs(o), o)
            best_div = b0 + run if len(diff) else None
    if best is None:
        return None, None
    return best[2], best_div


def _norm_fit(post, pre) -> tuple[float, str]:
    """How well `post` [n, H] is `pre` [n, H] passed through a norm with unknown per-channel gain:
    least squares per channel for y = g * rmsnorm(x) and for y = g * layernorm(x) + bias.
    Returns (relative L2 residual of the better fit, "RMSNorm" | "LayerNorm"). Rows with NaN/Inf
    on either side are skipped; one pass over the rows, in chunks."""
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


def _in_workers(work, chunks: list[int], *, workers: int, force_thread: bool = False) -> None:
    """Run work(chunks[w::k]) in k = min(workers, len(chunks)) Python threads, each with one
    intra-op thread. The ops on a chunk are small: one OpenMP team per op spends its time at
    barriers, and on a busy machine spinning team threads slow everything down several times.
    Threads of one process share the tensors; each writes its own rows of the outputs.
    Errors (Cancelled too) are raised again in the caller's thread."""
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


def _shift_direction(matrix) -> str | None:
    """"deeper" / "shallower" when every B slot sits past / before its A slot, read from the
    cross-slot cosines next to the diagonal: a B slot one boundary deeper than A_j is nearer
    A_{j+1} (above the diagonal) than B_{j+1} is to A_j (below it), and the other way round.
    None when the two sides do not differ by SHIFT_GAIN."""
    import torch

    k = min(matrix.shape)
    if k < 2:
        return None
    above = torch.stack([matrix[j, j + 1] for j in range(k - 1)])
    below = torch.stack([matrix[j + 1, j] for j in range(k - 1)])
    gap = float((above - below).nanmean())
    if math.isnan(gap) or abs(gap) < SHIFT_GAIN:
        return None
    return "deeper" if gap > 0 else "shallower"


def _best_lag(scores: dict[int, float | None]) -> int | None:
    """The lag with the highest score; the smallest |lag| among equals."""
    known = [lag for lag, v in scores.items() if v is not None]
    return max(known, key=lambda lag: (scores[lag], -abs(lag)), default=None)


def _realign(a_ids, b_ids, a_row: int, b_row: int, window: int = 16) -> int | None:
    """After ids diverge at (a_row, b_row): the shift d in [-MAX_LAG, MAX_LAG] after which B and A
    agree again for the next `window` tokens (or all that are left), preferring small |d|; None
    when no shift makes them agree again. B resumes right after |d| inserted tokens (d < 0) or at
    A's token past |d| missing ones (d > 0), or after one replaced token: B[b_row + 1 + i] ==
    A[a_row + 1 + i + d]."""
    for d in sorted(range(-MAX_LAG, MAX_LAG + 1), key=lambda x: (abs(x), x)):
        for bs, as_ in ((b_row + max(0, -d), a_row + max(0, d)), (b_row + 1, a_row + 1 + d)):
            n = min(window, len(b_ids) - bs, len(a_ids) - as_)
            if n < 4 or as_ < 0:
                continue
            if bool((a_ids[as_:as_ + n] == b_ids[bs:bs + n]).all()):
                return d
    return None


def _unit(x):
    import torch

    return x / torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp(min=1e-30)


def _nonfinite(sample: Sample, known=None) -> dict[str, Any]:
    """NaN/Inf counts of every part of `sample`, with the first row that has one.

    known = (first row, squared row norms [n, parts]) for rows already reduced by the main pass:
    only those with a non-finite squared norm are looked at again. Other rows are screened by
    their float32 row sums (one cheap reduction; isfinite on bf16 is slow on CPU), and only
    rows that fail the screen are counted element by element.
    """
    import torch

    nan = inf = 0
    first_row, first_part = None, None
    parts = [(s.label, s.tensor) for s in sample.slots]
    if sample.final is not None:
        parts.append(("final", sample.final.tensor))
    per: dict[str, Any] = {}
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
        first = None
        for r in sorted(suspects):
            row = t[r].float()
            rn, ri = int(torch.isnan(row).sum()), int(torch.isinf(row).sum())
            if rn or ri:
                pn, pi = pn + rn, pi + ri
                first = r if first is None else first
        if pn or pi:
            per[label] = {"nan": pn, "inf": pi, "first_row": first}
            nan, inf = nan + pn, inf + pi
            if first_row is None or first < first_row:
                first_row, first_part = first, label
    return {"nan": nan, "inf": inf, "first_row": first_row, "first_part": first_part, "parts": per}


def _mask_on_padding(s: Sample) -> int:
    """Trailing rows with id 0 whose loss_mask is 1 (padding that would be trained on)."""
    if s.ids is None or s.loss_mask is None:
        return 0
    ids, mask = s.ids.tolist(), s.loss_mask.tolist()
    count = 0
    for i in range(len(ids) - 1, -1, -1):
        if ids[i] != 0:
            break
        if mask[i]:
            count += 1
    return count if count and count < len(ids) else 0


def _cv(x) -> float:
    if x.numel() < 2:
        return 0.0
    mean = float(x.mean())
    return float(x.std()) / mean if mean else float("inf")


def _num(x, digits: int | None = None) -> float | None:
    v = float(x)
    if math.isnan(v) or math.isinf(v):
        return None
    return round(v, digits) if digits is not None else v


def _short(x, digits: int = 5) -> list:
    """x as nested lists of floats rounded to `digits` significant digits (short JSON);
    NaN/Inf become None. Rounded in float64 so that each value prints as its short decimal."""
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


def _header(s: Sample) -> dict[str, Any]:
    return {
        "path": s.path, "schema": s.schema, "tokens": s.tokens, "valid_tokens": s.valid_len,
        "hidden": s.hidden, "k": len(s.slots), "dtype": s.dtype,
        "boundaries": [sl.boundary for sl in s.slots], "final": s.final is not None, "final_norm": s.final_norm,
        "ids": s.ids is not None, "loss_mask": s.loss_mask is not None, "assumptions": list(s.assumptions),
    }
