"""Every schema FORMATS.md lists loads into the normal form with the right parts and labels."""

from __future__ import annotations

import pytest
import torch

from eagle3_tui.engines.read.load import load_sample
from eagle3_tui.engines.read.sample import NotASample, SampleError
from tests.helpers.sample_files import H, K, T


def test_specforge_offline(files):
    paths, (ids, mask, aux, final) = files
    s = load_sample(str(paths["specforge"]))
    assert s.schema == "SpecForge offline"
    assert (s.tokens, s.hidden, len(s.slots)) == (T, H, K)
    for slot, ref in zip(s.slots, aux):
        assert torch.equal(slot.tensor, ref)
    assert torch.equal(s.final.tensor, final)
    assert s.final_norm == "post"
    assert torch.equal(s.ids, ids) and torch.equal(s.loss_mask, mask)
    assert s.trailing_padding == 2 and s.valid_len == T - 2


def test_specforge_gzip_loads_same_as_plain(files):
    paths, _ = files
    plain = load_sample(str(paths["specforge"]))
    gz = load_sample(str(paths["specforge_gz"]))
    assert gz.schema == plain.schema
    for a, b in zip(gz.slots, plain.slots):
        assert torch.equal(a.tensor, b.tensor)


def test_eagle12_has_final_only(files):
    paths, (_, _, _, final) = files
    s = load_sample(str(paths["eagle12"]))
    assert s.schema == "EAGLE-1/2"
    assert s.slots == []
    assert s.final_norm == "post"
    assert s.final.tensor.dtype == torch.float16
    assert torch.allclose(s.final.tensor.float(), final, atol=1e-2)


def test_speculators_safetensors(files):
    paths, (ids, _, aux, final) = files
    s = load_sample(str(paths["speculators"]))
    assert s.schema == "speculators"
    assert [sl.boundary for sl in s.slots] == [2, 6, 9]  # b = layer id (input of that layer)
    assert s.final_norm == "pre" and s.final.boundary_note == "L"
    assert s.dtype == "bfloat16"
    assert torch.equal(s.ids, ids)
    assert s.loss_mask is None
    assert torch.equal(s.slots[1].tensor, aux[1].bfloat16())
    assert torch.equal(s.final.tensor, final.bfloat16())


def test_speculators_legacy(files):
    paths, (_, _, aux, final) = files
    s = load_sample(str(paths["speculators_legacy"]))
    assert s.schema == "speculators (legacy)"
    assert len(s.slots) == K
    assert s.final_norm == "pre"
    assert torch.equal(s.final.tensor, final)


@pytest.mark.parametrize("name", ["bare", "bare_batch"])
def test_bare_tensor_assumes_three_slots_and_says_so(files, name):
    paths, (_, _, aux, _) = files
    s = load_sample(str(paths[name]))
    assert len(s.slots) == 3 and s.hidden == H
    assert any(a.startswith("k = 3 slots of H = 16") for a in s.assumptions)
    assert torch.equal(s.slots[2].tensor, aux[2])


def test_bare_tensor_with_explicit_hidden_or_slots(files):
    paths, _ = files
    by_h = load_sample(str(paths["bare"]), hidden=H)
    assert len(by_h.slots) == 3 and not by_h.assumptions
    by_k = load_sample(str(paths["bare"]), slots=1)
    assert len(by_k.slots) == 1 and by_k.hidden == 3 * H


@pytest.mark.parametrize("name", ["list", "tuple"])
def test_list_of_tensors(files, name):
    paths, (_, _, aux, _) = files
    s = load_sample(str(paths[name]))
    assert len(s.slots) == K
    assert s.ids is None and s.final is None
    assert torch.equal(s.slots[0].tensor, aux[0])


def test_dict_without_ids_or_mask(files):
    paths, _ = files
    s = load_sample(str(paths["dict_no_ids"]))
    assert s.schema == "SpecForge offline"
    assert s.ids is None and s.loss_mask is None
    assert s.valid_len == T


def test_vocab_mapping_is_not_a_sample(files):
    paths, _ = files
    with pytest.raises(NotASample) as info:
        load_sample(str(paths["vocab"]))
    assert "not a hidden-state sample" in str(info.value)
    assert info.value.contents == {"d2t": "[32] int64", "t2d": "[64] bool"}


def test_schema_found_by_keys_not_extension(files, tmp_path):
    paths, _ = files
    renamed = tmp_path / "whatever.bin"
    renamed.write_bytes(paths["specforge"].read_bytes())
    assert load_sample(str(renamed)).schema == "SpecForge offline"


def test_explicit_slots_disagreeing_with_file_is_an_error(files):
    paths, _ = files
    with pytest.raises(SampleError, match="disagrees"):
        load_sample(str(paths["specforge"]), slots=4)


def test_uncompressed_torch_files_are_memory_mapped(tmp_path):
    """mmap=True: loading a big file does not read it into memory up front (a small one is read
    whole: load.SMALL_FILE_BYTES)."""
    from eagle3_tui.engines.read.load import SMALL_FILE_BYTES

    t, h = 600, 64
    big = tmp_path / "data_0.ckpt"
    torch.save({"input_ids": torch.arange(t), "loss_mask": torch.ones(t, dtype=torch.long),
                "aux_hidden_state": torch.randn(1, t, 3 * h), "hidden_state": torch.randn(1, t, h)}, big)
    assert big.stat().st_size > SMALL_FILE_BYTES
    s = load_sample(str(big))
    with open("/proc/self/maps") as fh:
        mapped = fh.read()
    assert str(big) in mapped
    del s
