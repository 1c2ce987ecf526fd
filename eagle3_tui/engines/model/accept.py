"""Run an EAGLE-3 drafter on a sample's hidden states, as training does, and score its guesses.

Alignment (read from SpecForge: specforge/modeling/target/target_head.py `TargetHead.preprocess`,
specforge/utils.py `padding`, specforge/algorithms/eagle3/model.py `OnlineEagle3Model.forward`
with `_compute_target_p` / `_compute_metric_counts`, specforge/core/eagle3_adapters.py
`SdpaLikeAdapter.step_view`, specforge/modeling/draft/llama3_eagle.py `LlamaAttention.forward`
(the `cache_hidden` branch) and `LlamaForCausalLMEagle3.project_hidden_states/compute_logits`):

- `padding(x, left=False)` shifts left by one and pads with 0: row t gets x[t+1].
- Row t of the drafter sees the target's aux states of token t (fc of the k slots concatenated,
  [T, k*Ht] -> [T, H]) and the embedding of token t+1 (input ids shifted once before step 0).
- Step s = 0..K-1 (SpecForge's TTT unroll, `length` there): the token fed at row t is ids[t+1+s]
  (the ids are shifted once more after every step: teacher forcing with the sample's ids), the
  hidden input is fc(aux) at s = 0 and the drafter's own previous output (before `norm`) after
  that. Rotary positions are t + s. The query at row t attends to the step-0 keys of rows <= t
  (causal) and to its own row's keys of steps 1..s, all in one softmax.
- Logits: lm_head(norm(h)) (lm_head(h) for a SpecForge drafter with norm_output false); draft
  id d maps to target id d + d2t[d]. fc_norm / norm_before_fc before fc, N decoder layers, and
  the engines' norm_output (the post-norm state fed to the next step) as drafter_shape.py reads
  them from the producers' and engines' code; each layer keeps its own keys across the steps.
- Target of row t at step s: the target's next-token choice at position t+1+s, i.e. the argmax
  of the target's logits there (SpecForge: target = lm_head(post-norm final), shifted once;
  used here when --model gives the head and the sample's final state is post-norm), or the
  sample's own token ids[t+2+s] otherwise. Target ids outside the draft vocabulary are misses,
  as in SpecForge's metric. With the model's targets the same drafts are also scored against
  the ids ("against_ids"): the two differ wherever the data is not the target's own greedy
  text (a chat's user turns, sampled answers), and a user reads both side by side.
- Rows counted at step s: loss_mask[t+s] == 1 (the loss mask is shifted with every step, not
  before step 0), or every valid row with all_rows. SpecForge also counts the last rows, whose
  target there is padding (a sure miss); they are left out here.

Metrics:
- top1: step-0 accuracy (= steps[0]).
- steps[s]: SpecForge's per-step training accuracy: hits / counted rows at step s.
- tau, the simulated acceptance length of a draft of K tokens with greedy verification:
  tau = 1 + mean over the rows counted at step 0 of a_t, where a_t is the number of leading
  steps s = 0, 1, ... that hit (stopping at the first miss, at K, or where no target exists).
  The 1 is the token the target model adds itself on every verification (EAGLE's convention),
  so tau lies in [1, K+1]. Teacher forcing equals the drafter feeding itself its own tokens as
  long as it hits, which is all a_t depends on; with ids as targets this is exact for this
  sequence, with the target's argmax it is exact when the sample is the target's own greedy
  text and an estimate otherwise.

torch and stdlib only: shipped to the remote box by the agent.
"""

from __future__ import annotations

import os
import threading
from typing import Any, NamedTuple

from eagle3_tui.engines.model.draft_forward import ROW_CHUNK, draft_tokens
from eagle3_tui.engines.model.drafter import Drafter, DrafterError, load_drafter, read_target_head, read_vocab
from eagle3_tui.engines.read.borrow_ids import borrow_ids
from eagle3_tui.engines.read.load import load_sample
from eagle3_tui.engines.read.sample import Sample, SampleError, blank_ids
from eagle3_tui.engines.results.accept import AcceptResult, AcceptToken
from eagle3_tui.engines.results.errors import error_result


def accept_file(path: str, drafter: str, *, model: str | None = None, steps: int = 3, all_rows: bool = False,
                order: list[int] | None = None, slots: int | None = None, hidden: int | None = None,
                cancel: threading.Event | None = None, ids_from: str | None = None) -> AcceptResult:
    """Acceptance JSON object for one sample; unusable inputs become {"path", "drafter", "error"}.
    ids_from: a sample whose ids an id-less sample borrows (engines/read/borrow_ids.py)."""
    try:
        d = cached_drafter(drafter, model)
        sample = load_sample(path, slots=slots, hidden=hidden)
        if ids_from:
            sample = borrow_ids(sample, ids_from)
        result = accept(sample, d, model=model, steps=steps, all_rows=all_rows, order=order, cancel=cancel)
        if (blank := blank_ids(sample.ids)) is not None:  # as pair and compare notice (sample.blank_ids)
            result.setdefault("notes", []).append(
                f"{blank}: the drafter is fed that one token at every row, so this score says nothing about the "
                "hidden states (--ids-from SAMPLE borrows the ids of the matching training sample)")
    except (SampleError, MemoryError) as err:
        return {"path": path, "drafter": drafter, **error_result(path, err)}
    result["path"] = path
    if ids_from:
        result["ids_from"] = ids_from
    return result


_CACHE: dict[tuple, Drafter] = {}
_CACHE_LOCK = threading.Lock()


def cached_drafter(path: str, model: str | None) -> Drafter:
    """Load once per (folder, model, weight file mtimes): a UI or scan runs many samples."""
    stamp = []
    for name in ("config.json", "model.safetensors", "pytorch_model.bin"):
        try:
            st = os.stat(os.path.join(path, name))
            stamp.append((name, st.st_size, st.st_mtime_ns))
        except OSError:
            pass
    key = (os.path.abspath(path), model and os.path.abspath(model), tuple(stamp))
    with _CACHE_LOCK:
        if key not in _CACHE:
            _CACHE.clear()  # one drafter at a time: they can be gigabytes
            _CACHE[key] = load_drafter(path, model)
        return _CACHE[key]


def accept(sample: Sample, d: Drafter, *, model: str | None = None, steps: int = 3, all_rows: bool = False,
           order: list[int] | None = None, cancel: threading.Event | None = None,
           limit: int | None = None) -> AcceptResult:
    """limit: run on the first `limit` valid rows only. Attention is causal, so rows inside the
    prefix get exactly the drafter's output on the whole sample; rows whose targets lie past the
    prefix are not scored (a quick scan reads no more of a big file than that prefix)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if steps < 1:
        raise SampleError("--steps must be at least 1")
    notes: list[str] = []
    n = sample.valid_len if limit is None else min(sample.valid_len, limit)
    aux = aux_input(sample, d, order, n)
    if sample.ids is None:
        raise SampleError("the sample has no token ids: the drafter needs the embedding of each next token")
    ids = sample.ids[:n].to(torch.int64)
    if n < 3:
        raise SampleError(f"only {n} valid rows: too short to score")
    rows = int(d.weights["embed_tokens.weight"].shape[0])
    if n and (int(ids.min()) < 0 or int(ids.max()) >= rows):
        bad = int(ids.min()) if int(ids.min()) < 0 else int(ids.max())
        raise SampleError(f"token id {bad} is outside the drafter's vocabulary ({rows} tokens): "
                          "the ids are from another tokenizer")
    targets, source = target_tokens(sample, d, model, n, notes)

    def tok(shift: int) -> torch.Tensor:  # ids[t + shift], 0 past the end (SpecForge's padding)
        out = torch.zeros(n, dtype=torch.int64)
        if shift < n:
            out[: n - shift] = ids[shift:]
        return out

    mask, rows_from = _scored_rows(sample, n, all_rows, notes)

    drafts = draft_tokens(d, aux, [tok(1 + s) for s in range(steps)], cancel=cancel)
    score = _score(drafts, targets, mask, n)
    per_token = _per_token(score.rows0, targets, drafts[0], score.hits[0], score.lead, read_vocab(model))
    result: AcceptResult = {
        "path": sample.path,
        "drafter": d.path,
        "rows": score.rows,
        "top1": score.steps[0],
        "steps": score.steps,
        "tau": score.tau,
        "per_token": per_token,
        "target_source": source,
        "rows_from": rows_from,
        "valid_tokens": n,
        "order": list(order) if order is not None else None,
        "drafter_info": d.describe(),
        "notes": notes + list(sample.assumptions),
    }
    if source == "model":  # the same drafts against the data's own next ids: both kinds side by side
        by_ids = _score(drafts, ids, mask, n)
        result["against_ids"] = {"top1": by_ids.steps[0], "steps": by_ids.steps, "tau": by_ids.tau,
                                 "rows": by_ids.rows}
    return result


class _Score(NamedTuple):
    hits: list  # per step: [n] bool, the draft equals the target
    steps: list[float | None]  # per step: hits / counted rows
    lead: Any  # [n] int64: leading steps hit from each row
    rows0: Any  # [n] bool: the rows counted at step 0
    rows: int
    tau: float | None


def _score(drafts, targets, mask, n: int) -> _Score:
    """The drafts against one kind of targets: per-step acceptance, each row's accepted lead, tau."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    t = torch.arange(n)
    hits, counted = [], []
    for s, (draft, _p) in enumerate(drafts):
        pos = t + 2 + s  # the position whose token row t guesses at step s
        have = targets_available(pos, targets)
        tgt = targets[pos.clamp(max=n - 1)]
        hit = (draft == tgt) & have
        ok = have.clone()
        if mask is not None:
            shifted = torch.zeros(n, dtype=torch.bool)
            shifted[: n - s] = mask[s:]
            ok &= shifted
        hits.append(hit)
        counted.append(ok)
    step_acc = [(float((h & c).sum()) / int(c.sum())) if int(c.sum()) else None for h, c in zip(hits, counted)]
    rows0 = counted[0]
    lead = torch.zeros(n, dtype=torch.int64)
    alive = torch.ones(n, dtype=torch.bool)
    for h in hits:
        alive &= h
        lead += alive.to(torch.int64)
    n_rows = int(rows0.sum())
    tau = 1.0 + float(lead[rows0].sum()) / n_rows if n_rows else None
    return _Score(hits, step_acc, lead, rows0, n_rows, tau)


def _scored_rows(sample: Sample, n: int, all_rows: bool, notes: list[str]):
    """(the loss mask of the first n rows, or None for every row; where the rows come from)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    if not all_rows and sample.loss_mask is not None:
        mask = sample.loss_mask[:n].to(torch.bool)
        if not bool(mask.any()):
            raise SampleError("the loss mask is all zero: no rows carry loss (use --all-rows to score every row)")
        return mask, "loss mask"
    if not all_rows:
        notes.append("no loss mask in the sample: every valid row scored")
    return None, "all rows"


def _per_token(rows0, targets, first, hit0, lead, vocab) -> list[AcceptToken]:
    """Step 1 per scored row: the target, the draft, its probability, hit, tokens accepted."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    draft0, p0 = first
    out: list[AcceptToken] = []
    for r in torch.nonzero(rows0).flatten().tolist():
        entry: AcceptToken = {"row": r, "target": int(targets[r + 2]), "draft": int(draft0[r]), "p": round(float(p0[r]), 5),
                 "hit": bool(hit0[r]), "accepted": int(lead[r])}
        if vocab is not None:
            entry["target_text"] = vocab.get(entry["target"])
            entry["draft_text"] = vocab.get(entry["draft"])
        out.append(entry)
    return out


def targets_available(pos, targets):
    """Positions whose target is known: inside the sample (the token after the last is unknown)."""
    return pos < targets.shape[0]


def aux_input(sample: Sample, d: Drafter, order: list[int] | None, rows: int | None = None):
    """The k aux slots concatenated [rows, k*Ht] in the order fc expects, or one clear error.
    Only the first `rows` rows are read (a memory-mapped file reads no more)."""
    # lazy: torch: loaded when used, never at start-up
    import torch

    slots = [s.tensor for s in sample.slots]
    if order is not None:
        if len(order) != d.k or any(not 0 <= i < len(slots) for i in order):
            raise SampleError(f"--order needs {d.k} slot indices from 0 to {len(slots) - 1}, got {order}")
        slots = [slots[i] for i in order]
    h = sample.hidden
    if slots and h != d.target_hidden:
        raise SampleError(f"the sample's hidden size is {h}, the drafter expects target_hidden_size "
                          f"{d.target_hidden} (fc takes k*H = {d.k}x{d.target_hidden} = {d.fc_width})")
    if len(slots) != d.k:
        raise SampleError(f"fc expects k*H = {d.k}x{d.target_hidden} = {d.fc_width} columns; the sample has "
                          f"{len(slots)} aux slot(s) of {h} = {len(slots) * h}")
    return torch.cat([s[:rows].float() for s in slots], dim=-1)


def target_tokens(sample: Sample, d: Drafter, model: str | None, n: int, notes: list[str]):
    """(targets [n], source): targets[j] = the token the target puts at position j (j >= 1).

    "model": argmax of the target's LM head over its post-norm final state at j-1;
    "ids": the sample's own ids[j].
    """
    # lazy: torch: loaded when used, never at start-up
    import torch

    if model is not None:
        final = sample.final
        if final is None:
            notes.append("the sample has no final hidden state: targets are the sample's token ids")
        elif sample.final_norm != "post":
            notes.append(f"the sample's final state is {sample.final_norm or 'of unknown'}-norm, the LM head needs "
                         "it after the norm: targets are the sample's token ids")
        else:
            head, _where = read_target_head(model)
            if head.shape[1] != final.tensor.shape[1]:
                raise DrafterError(f"the model's LM head is {list(head.shape)}, the final state has width "
                                   f"{final.tensor.shape[1]}")
            w = head.float()
            out = torch.zeros(n, dtype=torch.int64)
            fin = final.tensor[:n]
            for a in range(0, n - 1, ROW_CHUNK):
                b = min(n - 1, a + ROW_CHUNK)
                out[a + 1 : b + 1] = (fin[a:b].float() @ w.T).argmax(-1)
            return out, "model"
    return sample.ids[:n].to(torch.int64), "ids"
