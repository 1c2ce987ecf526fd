"""demo/gguf_header.py: the fast header reader gives what gguf's own reader gives, field by field
and tensor by tensor, so the real model's folder is built from the same header (its bytes were
checked identical when it came in; this keeps the reader from drifting from gguf's)."""

from __future__ import annotations

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")


def _same(path) -> None:
    from eagle3_tui.demo.gguf_header import HeaderReader

    stock, fast = gguf.GGUFReader(path), HeaderReader(path)
    assert list(stock.fields) == list(fast.fields)
    for key, a in stock.fields.items():
        b = fast.fields[key]
        assert (a.name, a.offset, a.data, a.types) == (b.name, b.offset, b.data, b.types), key
        assert [(p.dtype, p.shape, p.tobytes()) for p in a.parts] == [(p.dtype, p.shape, p.tobytes()) for p in b.parts], key
        assert a.contents() == b.contents(), key
    assert stock.data_offset == fast.data_offset
    assert [(t.name, t.tensor_type, list(t.shape), t.n_bytes, t.data_offset) for t in stock.tensors] == \
           [(t.name, t.tensor_type, list(t.shape), t.n_bytes, t.data_offset) for t in fast.tensors]
    for a, b in zip(stock.tensors, fast.tensors):
        assert a.data.dtype == b.data.dtype and np.array_equal(a.data, b.data), a.name


@pytest.mark.parametrize("endian", ["LITTLE", "BIG"])
def test_every_kind_of_header_value_reads_as_ggufs_own_reader_reads_it(tmp_path, endian):
    # a big-endian file goes gguf's own way; a little-endian one takes the fast path for arrays
    path = tmp_path / "m.gguf"
    w = gguf.GGUFWriter(str(path), "llama", endianess=getattr(gguf.GGUFEndian, endian))
    w.add_string("general.name", "tiny")
    w.add_uint32("llama.block_count", 3)
    w.add_float32("llama.rope.freq_base", 10000.0)
    w.add_bool("tokenizer.ggml.add_bos_token", True)
    w.add_array("tokenizer.ggml.tokens", ["<s>", "", "héllo", "a" * 300])  # an empty and a multi-byte one
    w.add_array("tokenizer.ggml.scores", [0.0, -1.5, float("inf"), 2.25])
    w.add_array("tokenizer.ggml.token_type", [1, 3, 1, 1])
    w.add_array("empty", [])
    w.add_array("nested", [[1, 2], [3]])  # an array of arrays: gguf's own walk
    w.add_tensor("token_embd.weight", np.arange(24, dtype=np.float32).reshape(4, 6))
    w.add_tensor("blk.0.attn_norm.weight", np.ones(6, dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    _same(path)


def test_a_real_models_header_reads_as_ggufs_own_reader_reads_it():
    from tests.helpers.real_world import require_real

    require_real()
    from eagle3_tui.demo.real_model import SMOLLM2, gguf_parts

    (path,), _ = gguf_parts(SMOLLM2)
    _same(path)  # 49,152 tokens, their scores and types, 272 tensors
