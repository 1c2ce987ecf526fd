"""The dataset scan on a real pretrained target (SmolLM2-135M, its own chats; issue 30): each finding
fires on its fault and stays silent on correct data, in the producers' layouts.

Real models put a residual norm of ~25,000 on the first token against ~150-600 elsewhere at the
middle layers; statistics that averaged it in named correct files as captured at other layers."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from eagle3_tui.cli import main
from eagle3_tui.dataset.verify import past_the_limit
from tests.helpers.real_scan_world import RealWorld, scattered
from tests.helpers.real_smollm2_only import smollm2_only_chats, smollm2_only_target  # noqa: F401 - SmolLM2 only (see there)
from tests.helpers.real_world import real_cache

N = 40
LOUD = ("warning", "error")


@pytest.fixture(scope="module")
def world(real_target, real_chats):
    return RealWorld(real_target, real_chats, real_cache())


@pytest.fixture(scope="module")
def built(world, tmp_path_factory):
    """Datasets written once for the module: name -> (root, the odd files' names)."""
    made: dict[str, tuple] = {}

    def get(name: str, shape: str, seed: int, share: float = 0.0, **kw):
        if name not in made:
            root = tmp_path_factory.mktemp(name) / "data"
            odd = scattered(N, share, seed) if share else {}
            paths = getattr(world, shape)(root, kw.pop("n", N), seed, odd, **kw)
            made[name] = (root, {str(paths[i].relative_to(root)) for i in odd})
        return made[name]

    return get


def scan(capsys, root, *extra) -> tuple[list[dict], dict]:
    main(["scan", str(root), "--json", "--no-cache", "--workers", "1", *extra])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    return lines[:-1], lines[-1]


def loud(last) -> list[dict]:
    return [f for f in last["findings"] if f["severity"] in LOUD]


def named(last, code: str) -> set[str]:
    return {p for f in last["findings"] if f["code"] == code and f["severity"] in LOUD for p in f.get("paths") or []}


@pytest.mark.parametrize("shape", ["specforge", "modelopt", "speculators", "lengths"])
def test_correct_real_data_raises_nothing(built, capsys, shape):
    """SpecForge batches padded on the right, ModelOpt conversations, speculators safetensors and
    captures of different lengths: every file opens with the same <|im_start|> whose row carries a
    massive activation; no warning or error (was: signature_outliers named 4-7 correct files)."""
    root, _ = built(f"{shape}-clean", shape, seed=0)
    records, last = scan(capsys, root)
    assert len(records) == N
    assert loud(last) == [], [f["message"] for f in loud(last)]
    # the massive row was seen and set aside in every file (row 0 is always read)
    assert all(r["signature"]["massive"] >= 1 for r in records)
    if shape == "specforge":  # the padded batches' pad rows carry states: info, as SpecForge writes them
        padded = {r["path"] for r in records if r["padding"]}
        assert padded and {p for f in last["findings"] if f["code"] == "padding_states" for p in f["paths"]} == padded


def test_a_scattered_tenth_one_boundary_deeper_is_named_exactly(built, capsys):
    """4 of 40 conversation files captured at b 3, 16, 28 instead of 2, 15, 27: named, and only
    they (was: 5 correct files named in a finding of their own)."""
    root, odd = built("modelopt-odd10", "modelopt", seed=0, share=0.10)
    _, last = scan(capsys, root)
    assert named(last, "signature_outliers") == odd
    assert {f["code"] for f in loud(last)} == {"signature_outliers"}


@pytest.mark.parametrize("shape, share", [("modelopt", 0.05), ("speculators", 0.05), ("modelopt", 0.025), ("speculators", 0.025)])
def test_small_minorities_are_suspects_and_no_correct_file_is_named(built, capsys, shape, share):
    """2 or 1 of 40 files one boundary deeper: past the outlier limit (the suspects `--model`
    identifies first); no warning names a correct file."""
    root, odd = built(f"{shape}-odd{share}", shape, seed=1, share=share)
    records, last = scan(capsys, root)
    assert odd <= set(past_the_limit(records))
    assert {p for f in loud(last) for p in f.get("paths") or []} <= odd


def test_with_model_no_warning_contradicts_the_verified_layers(built, capsys, real_target):
    """scan --model on the 10% minority: layer_minority names the 4 files, no signature warning
    names a file identify found at the majority's boundaries, and the layers block counts the
    majority as 36 files (was: 40, and a signature warning on correct files)."""
    root, odd = built("modelopt-odd10", "modelopt", seed=0, share=0.10)
    _, last = scan(capsys, root, "--model", str(real_target.folder), "--identify-all")
    minority = named(last, "layer_minority")
    assert minority == odd
    checked = [f for f in last["findings"] if f["code"] == "layers_checked"]
    assert checked and checked[0]["checked"] >= N - 1
    assert {p for f in loud(last) if f["code"] != "layer_minority" for p in f.get("paths") or []} <= odd
    majority = [e for e in last["layers"] if e["group"] == "majority"]
    assert majority and majority[0]["files"] == N - len(odd)
    assert majority[0]["boundaries"][:3] == [2, 15, 27]


def test_a_shard_written_one_boundary_deeper_is_a_layer_group(built, capsys):
    """SpecForge: the middle of three shards of 16 captured one boundary deeper is one run."""
    root, _ = built("specforge-shard", "specforge", seed=2, n=48, shifted_shard=1, per_shard=16)
    _, last = scan(capsys, root)
    groups = [f for f in last["findings"] if f["code"] == "layer_group"]
    assert len(groups) == 1 and set(groups[0]["paths"]) == {f"rows_16-32/data_{i}.ckpt" for i in range(16, 32)}
    assert {p for f in loud(last) for p in f.get("paths") or []} <= set(groups[0]["paths"])


def _scaled(src, dst, names, factor: float):
    shutil.copytree(src, dst)
    for name in names:
        d = torch.load(dst / name, weights_only=True)
        d["aux_hidden_states"] = (d["aux_hidden_states"].float() * factor).to(d["aux_hidden_states"].dtype)
        torch.save(d, dst / name)


def test_a_file_scaled_as_a_whole_is_norm_scale_short_or_long(built, capsys, tmp_path):
    """Every slot of the shortest and of the longest conversation multiplied by 4: both named
    with a factor near 4 (was: the short one missed, its massive first row moving the slots'
    mean norms by different factors, 1.0x to 1.8x)."""
    root, _ = built("modelopt-clean", "modelopt", seed=0)
    records, _ = scan(capsys, root)
    by_len = sorted(records, key=lambda r: r["tokens"])
    short, long = by_len[0]["path"], by_len[-1]["path"]
    assert by_len[0]["tokens"] < 60 < by_len[-1]["tokens"]
    _scaled(root, tmp_path / "data", [short, long], 4.0)
    _, last = scan(capsys, tmp_path / "data")
    scale = [f for f in last["findings"] if f["code"] == "norm_scale"]
    assert len(scale) == 1 and set(scale[0]["paths"]) == {short, long}
    assert all(3.5 < f < 4.5 for f in scale[0]["factors"])


def test_copies_are_duplicates_and_chats_with_one_system_prompt_are_not(built, capsys, tmp_path):
    """Every chat opens with the same system prompt (the same ids and first-row states): only a
    real copy is a duplicate."""
    root, _ = built("modelopt-clean", "modelopt", seed=0)
    shutil.copytree(root, tmp_path / "data")
    first = sorted(p.name for p in (tmp_path / "data").iterdir())[0]
    shutil.copyfile(tmp_path / "data" / first, tmp_path / "data" / "copy.pt")
    _, last = scan(capsys, tmp_path / "data")
    dups = [f for f in last["findings"] if f["code"] == "duplicate"]
    assert len(dups) == 1 and [sorted(g) for g in dups[0]["groups"]] == [sorted([first, "copy.pt"])]
    assert {f["code"] for f in loud(last)} == {"duplicate"}
