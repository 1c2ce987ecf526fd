"""Every file the demo generator writes loads with the schema and labels FORMATS.md implies."""

from __future__ import annotations

import pytest

from eagle3_tui.engines.read.load import load_sample
from eagle3_tui.engines.read.sample import NotASample
from eagle3_tui.engines.read.stats import summarize_file
from tests.helpers.demo_world import demo_once


@pytest.fixture(scope="module")
def demo(tmp_path_factory, untouched):
    return demo_once(tmp_path_factory, untouched)[0]


EXPECTED = {
    "ok_bf16_s0.pt": ("SpecForge offline", 3, "post"),
    "ok_noids_s2.pt": ("bare tensor", 3, None),
    "ok_list_s4.pt": ("list of tensors", 3, None),
    "hs_5.safetensors": ("speculators", 3, "pre"),
    "fault_permuted_s10.pt": ("list of tensors", 3, None),
    "fault_aux_disabled_s11.pt": ("bare tensor", 1, None),
    "fault_final_prenorm_s12.ckpt": ("SpecForge offline", 3, "post"),  # the file claims post-norm
}


def test_training_shards_all_load_as_specforge(demo):
    files = sorted((demo / "train" / "rows_0-2000").iterdir()) + sorted((demo / "train_pt" / "rows_0-2000").iterdir())
    assert len(files) > 20
    for f in files:
        s = load_sample(str(f))
        assert s.schema == "SpecForge offline", f
        assert len(s.slots) == 3 and s.final_norm == "post"
        assert s.ids is not None and s.loss_mask is not None


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_inference_capture_schemas(demo, name):
    schema, k, final_norm = EXPECTED[name]
    s = load_sample(str(demo / "infer" / name))
    assert (s.schema, len(s.slots), s.final_norm) == (schema, k, final_norm)


def test_every_inference_capture_summarises(demo):
    for f in sorted((demo / "infer").iterdir()):
        r = summarize_file(str(f))
        assert "error" not in r, (f.name, r.get("error"))
        assert r["tokens"] > 0 and r["hidden"] == 64


def test_vocab_mapping_reported_as_not_a_sample(demo):
    with pytest.raises(NotASample):
        load_sample(str(demo / "vocab_mapping" / "vocab_mapping.pt"))


def test_right_padding_found_in_padded_training_rows(demo):
    padded = [
        r for r in (summarize_file(str(f)) for f in sorted((demo / "train" / "rows_0-2000").iterdir()))
        if r["padding"]["trailing"]
    ]
    assert padded, "the demo pads batches on the right"
    assert all(r["padding"]["nonzero_hidden"] for r in padded)
    assert all(r["valid_tokens"] + r["padding"]["trailing"] == r["tokens"] for r in padded)
