"""Files written in each producer's own layout (docs/formats.md) read as the user expects.

Every file here is built the way the producer's save code builds it (same keys, key order, batch
dimensions, dtypes and file names), from real hidden states of the demo transformer, so that norms,
padding and the pre/post-norm difference look like a real model's. Assertions are on what
`summary` shows: schema, T, valid T, H, k, which boundary each slot holds, the final state's norm
label, the assumptions, and the numbers themselves against torch.
"""

from __future__ import annotations

import gzip
import io
import json
import sys

import pytest
import torch

from eagle3_tui.demo.model import build_model
from eagle3_tui.engines.read.load import load_sample
from eagle3_tui.engines.read.stats import summarize_file
from tests.helpers import warm_cli
from tests.helpers.autouse import _one_torch_thread  # noqa: F401 - autouse fixture

L = 10  # demo model depth
H = 64
# EAGLE-3 default capture b = {2, L//2, L-3}: ids [1, L//2-1, L-4] in the "output of layer id"
# convention (SpecForge, ModelOpt, TRT-LLM), ids [2, L//2, L-3] in vLLM's "input of layer id".
B = (2, 5, 7)
OUTPUT_IDS = [b - 1 for b in B]
INPUT_IDS = list(B)


@pytest.fixture(scope="module")
def model():
    return build_model(seed=0)


@pytest.fixture(scope="module")
def prompts():
    g = torch.Generator().manual_seed(7)
    lengths = (29, 21, 33)
    return [torch.randint(1, 1000, (n,), generator=g) for n in lengths]


def _run(model, ids, dtype=torch.float32):
    """HF-style tuple: states[b] for b = 0..L (states[L] before the final norm), and the normed
    output that HF puts last in `hidden_states` instead of states[L]."""
    return model.boundaries(ids, dtype)


def _norms(t: torch.Tensor) -> torch.Tensor:
    return torch.linalg.vector_norm(t.float(), dim=-1)


def _assert_norms(summary_part: dict, ref: torch.Tensor, rows: int | None = None, tol=1e-4):
    got = torch.tensor(summary_part["norms"][:rows] if rows else summary_part["norms"])
    want = _norms(ref)[:rows] if rows else _norms(ref)
    assert torch.allclose(got, want, rtol=tol, atol=tol), (got[:4], want[:4])


# ---------------------------------------------------------------------------------- SpecForge


def test_specforge_offline_padded_batch(tmp_path, model, prompts):
    """scripts/prepare_hidden_states.py: a right-padded batch goes through the target whole, each
    row is saved with its pad rows as rows_{g}-{g+2000}/data_{idx}.ckpt (and .ckpt.gz)."""
    t = max(len(p) for p in prompts)
    ids = torch.zeros(len(prompts), t, dtype=torch.int64)
    mask = torch.zeros(len(prompts), t, dtype=torch.int64)
    for i, p in enumerate(prompts):
        ids[i, : len(p)] = p
        mask[i, 8 : len(p)] = 1
    states, final = _run(model, ids, torch.bfloat16)
    aux = torch.cat([states[b] for b in B], dim=-1)
    shard = tmp_path / "rows_0-2000"
    shard.mkdir()
    for i in range(len(prompts)):
        record = {  # OfflineCaptureLayout order: passthrough, aux, last
            "input_ids": ids[i].clone(),
            "loss_mask": mask[i].clone(),
            "aux_hidden_state": aux[i].clone().unsqueeze(0),
            "hidden_state": final[i].clone().unsqueeze(0),
        }
        torch.save(record, shard / f"data_{i}.ckpt")
        with gzip.open(shard / f"data_{i + 10}.ckpt.gz", "wb", compresslevel=6) as fh:
            torch.save(record, fh)

    for i, p in enumerate(prompts):
        for name in (f"data_{i}.ckpt", f"data_{i + 10}.ckpt.gz"):
            s = summarize_file(str(shard / name))
            assert s["schema"] == "SpecForge offline"
            assert (s["tokens"], s["valid_tokens"], s["hidden"], len(s["slots"])) == (t, len(p), H, 3)
            assert s["final_norm"] == "post" and s["dtype"] == "bfloat16"
            assert s["padding"]["trailing"] == t - len(p)
            for slot, b in zip(s["slots"], B):
                _assert_norms(slot, states[b][i], rows=len(p), tol=1e-2)
            _assert_norms(s["final"], final[i], rows=len(p), tol=1e-2)


# ---------------------------------------------------------------------------------- EAGLE


def test_eagle_ge_data(tmp_path, model, prompts):
    """eagle/ge_data/ge_data_all_*.py (EAGLE-1/2, removed from the repo with EAGLE-3, which trains
    online): fp16 target, hidden_states[-1] (after the norm), {outdir}/{index}/data_{n}.ckpt."""
    ids = prompts[0]
    _, final = _run(model, ids, torch.float16)
    mask = torch.ones_like(ids)
    mask[:9] = 0
    out = tmp_path / "outdir0" / "0"
    out.mkdir(parents=True)
    torch.save({"input_ids": ids, "hidden_state": final, "loss_mask": mask}, out / "data_0.ckpt")

    s = summarize_file(str(out / "data_0.ckpt"))
    assert s["schema"] == "EAGLE-1/2"
    assert (s["tokens"], s["hidden"], len(s["slots"])) == (len(ids), H, 0)
    assert s["final_norm"] == "post" and s["dtype"] == "float16"
    assert s["loss_mask"] == {"ones": len(ids) - 9, "total": len(ids)}
    _assert_norms(s["final"], final, tol=1e-3)


# ---------------------------------------------------------------------------------- speculators


def _vllm_connector_payload(model, ids):
    """vLLM's extract_hidden_states + ExampleHiddenStatesConnector as speculators launches it:
    layer ids [2, L//2, L-3, L] (b = id, the last one the final residual before the norm)."""
    states, _ = _run(model, ids, torch.bfloat16)
    hs = torch.stack([states[b] for b in (*INPUT_IDS, L)], dim=1)  # [T, k+1, H]
    return states, hs


def test_speculators_vllm_connector(tmp_path, model, prompts):
    st = pytest.importorskip("safetensors.torch", reason="writes files with the safetensors package")
    ids = prompts[1]
    states, hs = _vllm_connector_payload(model, ids)
    path = tmp_path / "hidden_states" / "hs_0.safetensors"
    path.parent.mkdir()
    st.save_file({"hidden_states": hs, "token_ids": ids}, str(path))

    s = summarize_file(str(path))
    assert s["schema"] == "speculators"
    assert (s["tokens"], s["hidden"], len(s["slots"])) == (len(ids), H, 3)
    assert s["final_norm"] == "pre" and s["final"]["boundary_note"] == "L"
    assert s["dtype"] == "bfloat16" and s["loss_mask"] is None
    for slot, b in zip(s["slots"], B):
        _assert_norms(slot, states[b], tol=1e-3)
    _assert_norms(s["final"], states[L], tol=1e-3)


def _quantize_like_speculators(hs: torch.Tensor, scale_rank: int):
    """hs_connectors/fp8_utils.py: one float32 scale per token over all other dims, amax / 448."""
    fp32 = hs.float()
    amax = fp32.abs().amax(dim=tuple(range(1, fp32.dim())), keepdim=True)
    scale = (amax / torch.finfo(torch.float8_e4m3fn).max).clamp(min=1e-12)
    fp8 = (fp32 / scale).to(torch.float8_e4m3fn)
    if scale_rank == 2:  # the first design of the connector (#491) stored [T, 1]
        scale = scale.reshape(-1, 1)
    return fp8, scale


@pytest.mark.parametrize("scale_rank", [3, 2])
def test_speculators_fp8_connector_is_dequantized(tmp_path, model, prompts, scale_rank):
    st = pytest.importorskip("safetensors.torch", reason="writes files with the safetensors package")
    ids = prompts[2]
    states, hs = _vllm_connector_payload(model, ids)
    fp8, scale = _quantize_like_speculators(hs, scale_rank)
    path = tmp_path / "hs_3.safetensors"
    st.save_file({"hidden_states": fp8, "token_ids": ids, "hidden_states_scales": scale}, str(path))

    sample = load_sample(str(path))
    want = fp8.float() * scale.reshape(-1, 1, 1)
    for i, slot in enumerate(sample.slots):
        assert torch.equal(slot.tensor, want[:, i])
    assert torch.equal(sample.final.tensor, want[:, 3])
    assert "dequantized" in sample.source_keys

    s = summarize_file(str(path))
    assert s["schema"] == "speculators (FP8)"
    assert (s["tokens"], s["hidden"], len(s["slots"])) == (len(ids), H, 3)
    assert s["final_norm"] == "pre" and s["dtype"] == "float32"
    assert any("dequantized" in a and "float8_e4m3fn" in a for a in s["assumptions"])
    # the user's numbers are the model's, to fp8 precision (not fp8 codes: those are ~448-scaled)
    for slot, b in zip(s["slots"], B):
        _assert_norms(slot, states[b], tol=0.04)
    _assert_norms(s["final"], states[L], tol=0.04)


def test_fp8_torch_file_without_scales_says_values_are_unscaled(tmp_path, model, prompts):
    _, hs = _vllm_connector_payload(model, prompts[0])
    fp8, _ = _quantize_like_speculators(hs, 3)
    torch.save({"hidden_states": fp8, "token_ids": prompts[0]}, tmp_path / "noscale.pt")
    s = summarize_file(str(tmp_path / "noscale.pt"))
    assert s["schema"] == "speculators"
    assert any("no hidden_states_scales" in a for a in s["assumptions"])


def test_fp8_scales_of_the_wrong_shape_are_one_line(tmp_path, model, prompts):
    _, hs = _vllm_connector_payload(model, prompts[0])
    fp8, scale = _quantize_like_speculators(hs, 3)
    torch.save({"hidden_states": fp8, "hidden_states_scales": scale[:-1]}, tmp_path / "bad.pt")
    s = summarize_file(str(tmp_path / "bad.pt"))
    assert s["error"].startswith("hidden_states_scales has shape [28, 1, 1]: expected one scale per token")


def test_speculators_legacy_list(tmp_path, model, prompts):
    """speculators before the vLLM connector: data_{i}.pt, hidden_states a list of k+1 [T, H],
    the last the final state before the norm."""
    ids = prompts[0]
    states, _ = _run(model, ids)
    mask = torch.ones_like(ids)
    hs = [states[b] for b in (*B, L)]
    torch.save({"input_ids": ids, "loss_mask": mask, "hidden_states": hs}, tmp_path / "data_0.pt")
    s = summarize_file(str(tmp_path / "data_0.pt"))
    assert s["schema"] == "speculators (legacy)"
    assert (len(s["slots"]), s["final_norm"]) == (3, "pre")
    _assert_norms(s["final"], states[L])


# ---------------------------------------------------------------------------------- ModelOpt


def _modelopt_hf(model, ids, conversation_id):
    """compute_hidden_states_hf.py: AutoModel(dtype=auto) with output_hidden_states; aux is
    cat(hidden_states[lid + 1]) for 0-based ids [1, L//2-1, L-4]; hidden_states[-1] is normed."""
    states, final = _run(model, ids.unsqueeze(0), torch.bfloat16)
    hf = [*states[:L], final]  # HF's tuple: the last entry is after the final norm
    aux = torch.cat([hf[lid + 1].squeeze(0) for lid in OUTPUT_IDS], dim=-1)
    mask = torch.ones(len(ids), dtype=torch.long)
    record = {
        "input_ids": ids.unsqueeze(0).squeeze(0),
        "hidden_states": hf[-1].squeeze(0),
        "aux_hidden_states": aux,
        "loss_mask": mask,
        "conversation_id": conversation_id,
    }
    return record, [s.squeeze(0) for s in states], final.squeeze(0)


@pytest.mark.parametrize("conversation_id", ["c0a1-77", 12])
def test_modelopt_hf_dump(tmp_path, model, prompts, conversation_id):
    ids = prompts[1]
    record, states, final = _modelopt_hf(model, ids, conversation_id)
    path = tmp_path / f"{conversation_id}.pt"
    with open(path, "wb") as fh:
        torch.save(record, fh)

    sample = load_sample(str(path))
    for slot, b in zip(sample.slots, B):  # not one slot holding the final state, as before
        assert torch.equal(slot.tensor, states[b])
    assert torch.equal(sample.final.tensor, final)
    assert sample.source_keys["conversation_id"] == str(conversation_id)

    s = summarize_file(str(path))
    assert s["schema"] == "ModelOpt offline"
    assert (s["tokens"], s["valid_tokens"], s["hidden"], len(s["slots"])) == (len(ids), len(ids), H, 3)
    assert s["final_norm"] == "post" and s["dtype"] == "bfloat16"
    assert s["loss_mask"] == {"ones": len(ids), "total": len(ids)}
    assert any("vLLM dump" in a for a in s["assumptions"])  # the one variant it cannot tell
    _assert_norms(s["final"], final, tol=1e-3)


def test_modelopt_vllm_dump(tmp_path, model, prompts):
    """compute_hidden_states_vllm.py: the vLLM connector's [T, n, H] (ids b = id plus L), the last
    layer as hidden_states (before the norm), the rest reshaped to [T, k*H]; same keys as HF."""
    ids = prompts[2]
    states, hs = _vllm_connector_payload(model, ids)
    aux = hs[:, :-1, :]
    record = {
        "input_ids": ids,
        "hidden_states": hs[:, -1, :],
        "aux_hidden_states": aux.reshape(aux.shape[0], -1),
        "loss_mask": torch.ones(len(ids), dtype=torch.long),
        "conversation_id": "v-1",
    }
    torch.save(record, tmp_path / "v-1.pt")
    sample = load_sample(str(tmp_path / "v-1.pt"))
    assert sample.schema == "ModelOpt offline" and len(sample.slots) == 3
    for slot, b in zip(sample.slots, B):
        assert torch.equal(slot.tensor, states[b])
    # the keys are the HF dump's: the file cannot say its final state is pre-norm, so the
    # reading says what it assumed and names this variant
    assert any("vLLM dump writes the same keys with the final residual before the norm" in a
               for a in sample.assumptions)

    # only the final layer extracted: aux_hidden_states = torch.empty(0)
    record["aux_hidden_states"] = torch.empty(0)
    torch.save(record, tmp_path / "v-2.pt")
    s = summarize_file(str(tmp_path / "v-2.pt"))
    assert s["schema"] == "ModelOpt offline"
    assert (len(s["slots"]), s["tokens"], s["hidden"]) == (0, len(ids), H)


def _trtllm_record(model, ids, it):
    """TensorRT-LLM SaveHiddenStatesResourceManager: layers_to_capture = default (1, L//2-1, L-4)
    plus -1; buffer [T, (k+1)*H]; hidden_state = last block (post-norm), aux = the rest."""
    states, final = _run(model, ids, torch.bfloat16)
    buf = torch.cat([*(states[lid + 1] for lid in OUTPUT_IDS), final], dim=-1)
    rec = {"id": it, "input_ids": ids.to(torch.long), "hidden_state": buf[:, -H:].clone()}
    rec["aux_hidden_states"] = buf[:, :-H].clone()
    return rec, states, final


def test_modelopt_trtllm_dump(tmp_path, model, prompts):
    """compute_hidden_states_trtllm.py post-processes TRT-LLM's record: pops id, adds
    conversation_id, renames hidden_state to hidden_states (so it lands last); no loss_mask."""
    ids = prompts[0]
    rec, states, final = _trtllm_record(model, ids, 1)
    rec.pop("id")
    rec["conversation_id"] = "t-9"
    rec["hidden_states"] = rec.pop("hidden_state")
    assert list(rec) == ["input_ids", "aux_hidden_states", "conversation_id", "hidden_states"]
    with open(tmp_path / "t-9.pt", "wb") as fh:
        torch.save(rec, fh)

    s = summarize_file(str(tmp_path / "t-9.pt"))
    assert s["schema"] == "ModelOpt offline"
    assert (s["tokens"], s["hidden"], len(s["slots"]), s["final_norm"]) == (len(ids), H, 3, "post")
    assert s["loss_mask"] is None
    for slot, b in zip(s["slots"], B):
        _assert_norms(slot, states[b], tol=1e-3)
    _assert_norms(s["final"], final, tol=1e-3)


@pytest.mark.parametrize("write_interval", [1, 2])
def test_trtllm_save_hidden_states_records(tmp_path, model, prompts, write_interval):
    """TRT-LLM's own file, before ModelOpt renames it: {prefix}_{iter}.pt holding a list of
    write_interval records."""
    records = [_trtllm_record(model, prompts[i], i + 1)[0] for i in range(write_interval)]
    path = tmp_path / f"dp_0_{write_interval}.pt"
    torch.save(records, str(path))

    s = summarize_file(str(path))
    assert s["schema"] == "TensorRT-LLM SaveHiddenStates"
    assert (s["tokens"], s["hidden"], len(s["slots"]), s["final_norm"]) == (len(prompts[0]), H, 3, "post")
    said = [a for a in s["assumptions"] if "records" in a]
    assert said == ([] if write_interval == 1 else ["the file holds 2 records (TensorRT-LLM write_interval > 1); showing record 0"])


def test_cli_shows_modelopt_slots_and_fp8_assumption(tmp_path, model, prompts):
    """What the user reads in `summary`: three slots and a post-norm final for ModelOpt, the
    dequantization said in words for the FP8 connector."""
    record, _, _ = _modelopt_hf(model, prompts[0], "c1")
    torch.save(record, tmp_path / "c1.pt")
    _, hs = _vllm_connector_payload(model, prompts[0])
    fp8, scale = _quantize_like_speculators(hs, 3)
    buf = io.BytesIO()
    torch.save({"hidden_states": fp8, "token_ids": prompts[0], "hidden_states_scales": scale}, buf)
    (tmp_path / "hs_0.pt").write_bytes(buf.getvalue())

    out = warm_cli.run(
        [sys.executable, "-m", "eagle3_tui", "summary", str(tmp_path / "c1.pt"), str(tmp_path / "hs_0.pt")],
        capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert f"schema ModelOpt offline | T {len(prompts[0])} (valid {len(prompts[0])}) | H {H} | k 3 slots" in text
    assert "final   post-norm" in text
    assert "schema speculators (FP8)" in text and "final   pre-norm" in text
    assert "dequantized: hidden_states (float8_e4m3fn) x hidden_states_scales" in text

    js = warm_cli.run(
        [sys.executable, "-m", "eagle3_tui", "summary", "--json", str(tmp_path / "c1.pt")],
        capture_output=True, text=True,
    )
    assert json.loads(js.stdout.splitlines()[0])["schema"] == "ModelOpt offline"
