"""The main pass of a comparison (Measurer.measure), made cheaply: the aligned rows are read once,
in chunks of rows, into a float32 buffer [rows, parts, H] holding every slot (and final state)
of both sides; one batched matmul gives, per token, all dot products between parts (a Gram
matrix): row norms on its diagonal, every B-slot x A-slot cosine off it. Everything per token
(cosines, norm ratios) and the cross-slot matrix comes from those small Gram matrices; only the
element-wise errors of the paired slots (max abs error, bf16 tolerance, exact L2 error) look at
the elements again, while the chunk is still in cache. What it measured is a Measures
(measures.py); each pair's numbers are made from it by pair_metrics.py.

Threads: the ops on one chunk are small, and OpenMP teams spend most of their time at barriers
on them (several times slower on a busy 2-core box). The comparison runs with one intra-op
thread, and the main pass spreads its chunks over plain threads instead (torch releases the GIL).

Runs on the remote box too (shipped by the agent): torch and the standard library only.
"""

from __future__ import annotations

import math
import threading

from eagle3_tui.engines.compare.measures import Measures
from eagle3_tui.engines.compare.pair_metrics import PairErrors, pair_metrics
from eagle3_tui.engines.compare.rounding import num
from eagle3_tui.engines.compare.sides import FindingList, Sides
from eagle3_tui.engines.compare.thresholds import BF16_ATOL, BF16_RTOL, CHUNK_ELEMENTS, MATCH_COS
from eagle3_tui.engines.read.final_label import checked_label
from eagle3_tui.engines.read.stats import Cancelled
from eagle3_tui.engines.results.compare import AlignmentInfo


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
        errors = PairErrors(rows, errn, maxabs, beyond)
        m.slots = [pair_metrics(s, m, p, p, p, errors) for p in range(pairs)]
        if m.pad_rows and al["method"] != "ids" and pairs:
            self.check_pad_tail(m, pairs)
        if s.both_final:
            m.final_labels = self.check_final_labels(m)
            m.final = pair_metrics(s, m, na - 1, nb - 1, pairs, errors)
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
