"""The demo's faulty captures, one per fault FORMATS.md lists, written by the demo (demo/dataset.py's
_Demo hands itself in as `demo`; this module imports nothing of it)."""

from __future__ import annotations

import torch

DICT_FMT = "dict: input_ids, aux_hidden_state [1,T,kH]"


def _ids(ids: list[int]) -> torch.Tensor:
    return torch.tensor(ids, dtype=torch.int64)


def _with_ids(ids, aux_states, **more):
    return {"input_ids": _ids(ids), "aux_hidden_state": aux_states[None], **more}


def write_layer_faults(demo) -> None:
    """Slots at other layers, in another order, or only the last state."""
    aux = demo.aux
    dict_fmt = DICT_FMT

    st, _ = demo.run(demo.prompts[8].ids)
    late = [b + 1 for b in aux]
    demo.infer("fault_layers_all_s8.pt", 8, demo.aux_cat(st, late)[None], fmt="bare tensor [1,T,kH]",
               expect="slot_mismatch",
               note=f"every slot one layer late: boundaries {late} instead of {aux} (ids read under the "
                    "other convention)")

    p = demo.prompts[9]
    st, _ = demo.run(p.ids)
    some = [aux[0], aux[1], aux[2] + 1]
    demo.infer("fault_layers_some_s9.pt", 9, _with_ids(p.ids, demo.aux_cat(st, some)), fmt=dict_fmt,
               expect="slot_mismatch",
               note=f"only the last slot one layer late: boundaries {some} instead of {aux}")

    st, _ = demo.run(demo.prompts[10].ids)
    order = [aux[2], aux[0], aux[1]]
    demo.infer("fault_permuted_s10.pt", 10, [st[b].clone() for b in order], fmt="list of k tensors [T,H]",
               expect="slot_permutation", note=f"slots in list order {order} instead of ascending {aux}")

    st, _ = demo.run(demo.prompts[11].ids)
    demo.infer("fault_aux_disabled_s11.pt", 11, st[demo.cfg.layers].clone(), fmt="bare tensor [T,H]", expect="width_mismatch",
               note=f"auxiliary capture disabled: only the last hidden state, width {demo.cfg.hidden} instead of {3 * demo.cfg.hidden}")


def write_state_faults(demo) -> None:
    """The final state before the norm, a scale, another request's states."""
    aux = demo.aux
    dict_fmt = DICT_FMT

    p = demo.prompts[12]
    st, _ = demo.run(p.ids)
    demo.infer("fault_final_prenorm_s12.ckpt", 12,
               _with_ids(p.ids, demo.aux_cat(st, aux), loss_mask=_ids(p.loss_mask), hidden_state=st[demo.cfg.layers][None]),
               fmt="SpecForge schema", expect="norm_mismatch",
               note="hidden_state taken before the final norm (SpecForge stores it after)")

    p = demo.prompts[13]
    st, _ = demo.run(p.ids)
    demo.infer("fault_scale_s13.pt", 13, _with_ids(p.ids, demo.aux_cat(st, aux) * 4.0), fmt=dict_fmt,
               expect="scale_mismatch", note="every slot multiplied by 4 (same direction, different magnitude)",
               factor=4.0)

    p, other = demo.prompts[14], demo.prompts[15]
    st, _ = demo.run(other.ids)
    n = min(len(p.ids), len(other.ids))
    demo.infer("fault_other_request_s14.pt", 14,
               {"input_ids": _ids(p.ids[:n]), "aux_hidden_state": demo.aux_cat(st, aux)[:n]},
               fmt="dict: input_ids, aux_hidden_state [T,kH]", expect="unrelated_sample",
               note="token ids of sample 14, hidden states of another request in the batch (sample 15)")


def write_token_faults(demo) -> None:
    """Template drift, rows shifted against the ids, NaN/Inf."""
    aux = demo.aux
    dict_fmt = DICT_FMT

    p = demo.prompts[16]
    # the engine's template ends the system prompt with a newline before <|im_end|>
    drift_at = p.ids.index(demo.tokenizer.vocab["<|im_end|>"])
    seq = p.ids[:drift_at] + demo.tokenizer.encode("\n") + p.ids[drift_at:]
    st, _ = demo.run(seq)
    demo.infer("fault_template_drift_s16.pt", 16, _with_ids(seq, demo.aux_cat(st, aux)), fmt=dict_fmt,
               expect="token_divergence",
               note=f"chat-template drift: the engine's template adds a newline at the end of the system "
                    f"prompt (position {drift_at}), ids diverge there", position=drift_at)

    p = demo.prompts[17]
    st, _ = demo.run(p.ids)
    shifted = demo.aux_cat(st, aux)[1:]  # row t holds the state of token t + 1
    demo.infer("fault_shifted_s17.pt", 17, _with_ids(p.ids[:-1], shifted), fmt=dict_fmt, expect="token_shift",
               note="hidden rows shifted by one position relative to the token ids (row t = token t+1)",
               offset=1)

    p = demo.prompts[18]
    st, _ = demo.run(p.ids)
    bad = demo.aux_cat(st, aux).clone()
    bad[30:33, demo.cfg.hidden:2 * demo.cfg.hidden] = float("nan")
    bad[41, 5] = float("inf")
    demo.infer("fault_nan_s18.pt", 18, _with_ids(p.ids, bad), fmt=dict_fmt, expect="nonfinite",
               note=f"NaN in rows 30-32 of slot 1 ({3 * demo.cfg.hidden} values) and one Inf in row 41",
               nan=3 * demo.cfg.hidden, inf=1, first=30)


def write_padding_fault(demo) -> None:
    """A padded batch row captured whole."""
    aux = demo.aux
    i = demo.padded_index()
    ids = demo.padded[i]
    st, _ = demo.run(ids)
    demo.infer(f"fault_padding_s{i}.pt", i,
               _with_ids(ids, demo.aux_cat(st, aux), loss_mask=torch.ones(len(ids), dtype=torch.int64)),
               fmt="dict: input_ids, loss_mask, aux_hidden_state [1,T,kH]", expect="padding",
               note=f"the whole padded batch row captured: {len(ids) - len(demo.prompts[i].ids)} padding rows "
                    "taken as real tokens, loss_mask 1 on them")
