"""The draft forward against a dense reference, and acceptance on correct and mis-wired captures."""

from __future__ import annotations

import torch

from eagle3_tui.engines.model.accept import accept, accept_file
from eagle3_tui.engines.model.draft_forward import draft_tokens
from eagle3_tui.engines.model.drafter import load_drafter
from eagle3_tui.engines.read.sample import Sample, Slot
from tests.helpers.drafter import AUX, WORDS, aux_of, reference_logits, save_drafter


def _sample(seq, boundaries=AUX, mask=True) -> Sample:
    return Sample("s", "test", [Slot(seq.states[b], f"aux{i}") for i, b in enumerate(boundaries)],
                  final=Slot(seq.final, "final"), final_norm="post", ids=seq.ids,
                  loss_mask=seq.loss_mask if mask else None)


def test_forward_matches_the_dense_reference_at_every_step(trained):
    d = load_drafter(str(trained.drafter))
    seq = trained.held_out[0]
    T = len(seq.ids)
    tokens = []
    for s in range(3):
        tok = torch.zeros(T, dtype=torch.int64)
        tok[: T - 1 - s] = seq.ids[1 + s:]
        tokens.append(tok)
    got = draft_tokens(d, aux_of(seq), tokens)
    ref = reference_logits(trained.weights, aux_of(seq), seq.ids, 3)
    for s, ((ids, p), logits) in enumerate(zip(got, ref)):
        pr, top = logits.softmax(-1).max(-1)
        assert torch.equal(ids, top + trained.weights["d2t"][top]), f"step {s + 1}"
        assert torch.allclose(p, pr, atol=1e-5), f"step {s + 1}"


def test_small_query_chunks_change_nothing(trained, monkeypatch):
    """Steps >= 2 attend in query blocks; block edges must not leak or drop keys."""
    import eagle3_tui.engines.model.draft_forward as engine

    d = load_drafter(str(trained.drafter))
    sample = _sample(trained.held_out[1])
    whole = accept(sample, d, steps=3)
    monkeypatch.setattr(engine, "QUERY_CHUNK", 7)
    monkeypatch.setattr(engine, "ROW_CHUNK", 5)
    assert accept(sample, d, steps=3)["per_token"] == whole["per_token"]


def test_one_step_rollout_equals_step_one_of_a_longer_one(trained):
    d = load_drafter(str(trained.drafter))
    sample = _sample(trained.held_out[0])
    one, three = accept(sample, d, steps=1), accept(sample, d, steps=3)
    assert one["steps"] == [one["top1"]] and one["top1"] == three["steps"][0]
    assert [t["hit"] for t in one["per_token"]] == [t["hit"] for t in three["per_token"]]
    # tau of one step is 1 + the hit rate; longer drafts can only add accepted tokens
    assert abs(one["tau"] - (1 + one["top1"])) < 1e-9
    assert three["tau"] >= one["tau"]
    assert three["tau"] <= 4


def test_tau_follows_the_chain_rule(trained):
    d = load_drafter(str(trained.drafter))
    r = accept(_sample(trained.held_out[2]), d, steps=3)
    lead = [t["accepted"] for t in r["per_token"]]
    assert all(t["accepted"] == 0 for t in r["per_token"] if not t["hit"])
    assert abs(r["tau"] - (1 + sum(lead) / len(lead))) < 1e-9


def test_trained_drafter_agrees_far_above_chance_on_held_out_samples(trained):
    assert trained.train_acc > 0.6
    for i in range(len(trained.held_out)):
        r = accept_file(str(trained.data / f"train_{i}.ckpt"), str(trained.drafter))
        assert "error" not in r, r
        assert r["target_source"] == "ids" and r["rows_from"] == "loss mask"
        # chance is about 1/48 (the response vocabulary); training reached trained.train_acc
        assert r["top1"] > 0.5 and abs(r["top1"] - trained.train_acc) < 0.2, (r["top1"], trained.train_acc)
        assert r["tau"] > 1.5


def test_correct_capture_scores_like_training_and_a_permuted_one_collapses_until_reordered(trained):
    drafter = str(trained.drafter)
    ok_hits = bad_hits = 0.0
    for i in range(len(trained.held_out)):
        train = accept_file(str(trained.data / f"train_{i}.ckpt"), drafter, all_rows=True)
        ok = accept_file(str(trained.data / f"ok_bf16_{i}.pt"), drafter)
        bad = accept_file(str(trained.data / f"permuted_{i}.pt"), drafter)
        fixed = accept_file(str(trained.data / f"permuted_{i}.pt"), drafter, order=[1, 2, 0])
        assert ok["rows_from"] == "all rows" and ok["rows"] == train["rows"]
        assert abs(ok["top1"] - train["top1"]) < 0.05, (ok["top1"], train["top1"])
        assert bad["top1"] < 0.7 * ok["top1"], (bad["top1"], ok["top1"])
        assert bad["tau"] < ok["tau"]
        assert fixed["top1"] == ok["top1"] and fixed["tau"] == ok["tau"]
        ok_hits, bad_hits = ok_hits + ok["top1"] * ok["rows"], bad_hits + bad["top1"] * bad["rows"]
    # over the three captures (about 100 rows each, a third of them a random prompt no drafter
    # can guess) the permuted ones keep under half the correct ones' hits
    assert bad_hits < 0.5 * ok_hits, (bad_hits, ok_hits)


def test_targets_from_the_model_head_are_its_argmax_with_token_text(trained):
    seq = trained.held_out[0]
    r = accept_file(str(trained.data / "train_0.ckpt"), str(trained.drafter), model=str(trained.model))
    assert r["target_source"] == "model"
    want = (seq.final.float() @ trained.world.head.T).argmax(-1)
    for t in r["per_token"]:
        assert t["target"] == int(want[t["row"] + 1])
        assert t["target_text"] == f"w{t['target']}" and t["draft_text"] == f"w{t['draft']}"


def test_other_layouts_and_a_drafter_without_embeddings_give_the_same_numbers(trained, tmp_path):
    w = trained.weights
    base = accept_file(str(trained.data / "train_1.ckpt"), str(trained.drafter))

    def layers0(k):
        return k.replace("midlayer.", "layers.0.")

    def modelopt(k):
        if k == "lm_head.weight":
            return "eagle_lm_head.weight"
        return "eagle_module." + k.replace("midlayer.", "layers.0.")

    variants = {
        "speculators": save_drafter(str(tmp_path / "spec"), w, rename=layers0),
        "ModelOpt": save_drafter(str(tmp_path / "mo"), w, rename=modelopt),
        "SpecForge": save_drafter(str(tmp_path / "bin"), w, fmt="bin"),
    }
    for layout, folder in variants.items():
        r = accept_file(str(trained.data / "train_1.ckpt"), folder)
        assert r["drafter_info"]["layout"] == layout
        assert r["per_token"] == base["per_token"], layout

    no_embed = save_drafter(str(tmp_path / "noembed"), w, drop=("embed_tokens.weight",))
    r = accept_file(str(trained.data / "train_1.ckpt"), no_embed, model=str(trained.model))
    assert r["drafter_info"]["embed_from"].endswith(":model.embed_tokens.weight")
    # --model also makes the targets the model head's; the drafts themselves are unchanged
    assert [(t["draft"], t["p"]) for t in r["per_token"]] == [(t["draft"], t["p"]) for t in base["per_token"]]
    r = accept_file(str(trained.data / "train_1.ckpt"), no_embed)
    assert "has no embed_tokens" in r["error"] and "--model" in r["error"]


def test_response_words_are_all_in_the_draft_vocabulary(trained):
    t2d = trained.weights["t2d"]
    assert all(bool(t2d[w]) for w in WORDS)
