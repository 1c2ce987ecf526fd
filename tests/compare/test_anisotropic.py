"""compare without a model on states shaped like Gemma 3's residual stream (issue 41), in seconds and
without the real model: a strong direction every row shares (cosine ~0.96 between rows far apart), row
norms that grow from ~26 at b 0 to tens of thousands, a massive first row, and neighbouring layers
that differ by a small update. The tool used to be right only where rows point every which way:

- a capture one token late was "another prompt" (every lag looked alike);
- a slot taken before its layer's MLP passed MATCH_COS (mean cosine ~0.995);
- a final state taken before the final norm was silent (cosine < 0.35: no fit was tried) and
  labelled post-norm by its layout.

Each fault is named; the correct bf16 capture of the same states stays silent."""

from __future__ import annotations

import pytest
import torch

from eagle3_tui.engines.compare import compare_files
from eagle3_tui.engines.read.stats import summarize_file

T, H = 80, 64
AUX = (2, 5, 8)
L = 10


def _unit(x):
    return x / x.norm(dim=-1, keepdim=True)


def _states(seed: int):
    """(boundaries b = 0..L [T, H] float32, the state before layer b's MLP per b, post-norm final)."""
    g = torch.Generator().manual_seed(seed)
    common = torch.zeros(H)
    common[:4] = torch.tensor([0.8, -0.5, 0.3, 0.15])  # the direction every row shares: a few channels
    common = _unit(common)
    own = _unit(torch.randn(T, H, generator=g))
    own = _unit(own - (own @ common)[:, None] * common)
    scale = [26.0 * (1.9 ** b) for b in range(L + 1)]  # 26 at b 0 .. ~16,000 at b 10
    bounds, before_mlp = [], []
    for b in range(L + 1):
        attn = _unit(torch.randn(T, H, generator=g))
        mlp = _unit(torch.randn(T, H, generator=g))
        before = _unit(own + 0.3 * attn)
        own = _unit(before + 0.3 * mlp)  # each layer moves each row's own part (adjacent b: cosine ~0.99)
        rows = scale[b] * (0.96 * common + 0.28 * own)
        rows[0] *= 4.0  # the massive first row
        bounds.append(rows)
        mid = scale[b] * (0.96 * common + 0.28 * before)
        mid[0] *= 4.0
        before_mlp.append(mid)
    gain = torch.full((H,), 5.0)
    gain[:4] = 0.05  # the final norm's gain all but drops the shared channels
    x = bounds[L]
    post = gain * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True))
    return bounds, before_mlp, post


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("anisotropic")
    bounds, before_mlp, post = _states(0)
    ids = torch.arange(5, 5 + T)
    bf = lambda x: x.to(torch.bfloat16)  # noqa: E731
    late = (torch.arange(T) - 1).clamp(min=0)

    def aux(parts):
        return torch.cat(parts, -1)[None]

    torch.save({"input_ids": ids, "loss_mask": torch.ones(T, dtype=torch.int64), "hidden_state": post[None],
                "aux_hidden_state": aux([bounds[b] for b in AUX])}, root / "data_0.ckpt")
    captures = {
        "ok": {"input_ids": ids, "aux_hidden_state": bf(aux([bounds[b] for b in AUX])), "hidden_state": bf(post[None])},
        "late": {"input_ids": ids, "aux_hidden_state": bf(aux([bounds[b][late] for b in AUX])),
                 "hidden_state": bf(post[late][None])},
        "before_mlp": {"input_ids": ids, "aux_hidden_state": bf(aux([bounds[AUX[0]], before_mlp[AUX[1]], bounds[AUX[2]]])),
                       "hidden_state": bf(post[None])},
        "pre_norm_final": {"input_ids": ids, "aux_hidden_state": bf(aux([bounds[b] for b in AUX])),
                           "hidden_state": bf(bounds[L][None])},
    }
    for name, obj in captures.items():
        torch.save(obj, root / f"{name}.pt")
    return root


def _cmp(files, name):
    return compare_files(str(files / "data_0.ckpt"), str(files / f"{name}.pt"))


def _loud(r):
    return [f for f in r["findings"] if f["severity"] in ("warning", "error")]


def test_the_world_is_anisotropic(files):
    bounds, _, _ = _states(0)
    x = _unit(bounds[5][1:])
    far = (x[:-4] * x[4:]).sum(-1)
    assert far.mean() > 0.9  # rows 4 apart share a direction
    assert bounds[L][1:].norm(dim=-1).median() > 10_000 and bounds[0].norm(dim=-1).median() < 30


def test_the_correct_capture_is_silent(files):
    r = _cmp(files, "ok")
    assert _loud(r) == [], r["findings"]
    assert r["b"]["final_norm"] == "post"


def test_a_capture_one_token_late_is_a_token_shift_not_another_prompt(files):
    r = _cmp(files, "late")
    codes = {f["code"] for f in _loud(r)}
    assert "unrelated_sample" not in codes, r["findings"]
    assert next(f for f in r["findings"] if f["code"] == "token_shift")["offset"] == -1


def test_a_slot_before_its_layers_mlp_is_named_though_its_cosine_passes(files):
    r = _cmp(files, "before_mlp")
    assert r["slots"][1]["cos_mean"] > 0.99  # MATCH_COS alone lets it through
    bad = [f for f in _loud(r) if f["code"] == "slot_mismatch"]
    assert bad and [s["slot"] for s in bad[0]["slots"]] == [1], r["findings"]


def test_a_final_before_the_norm_is_never_silent_and_not_called_post(files):
    r = _cmp(files, "pre_norm_final")
    assert r["final"]["cos_mean"] < 0.35
    final = [f for f in _loud(r) if f.get("slot") == "final" or "final" in str(f.get("slots"))]
    assert final and final[0]["code"] == "norm_mismatch" and final[0]["after_norm"] == "a", r["findings"]
    assert r["b"]["final_norm"] == "?"
    assert summarize_file(str(files / "pre_norm_final.pt"))["final_norm"] == "?"
