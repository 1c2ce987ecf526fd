"""`eagle3-tui compare`: exit codes, JSON, human output, hints; compare_files on real files."""

from __future__ import annotations

import json

import torch

from eagle3_tui.commands import compare as cmd
from eagle3_tui.engines.compare import compare_files
from tests.helpers.cli import run_command
from tests.helpers.compare_world import AUX


def _run(argv, capsys):
    return run_command(cmd, argv, capsys)


def _files(world, tmp_path):
    a = world.train(0, pad=4)
    torch.save({"input_ids": a.ids, "loss_mask": a.loss_mask, "hidden_state": a.final.tensor[None],
                "aux_hidden_state": torch.cat([s.tensor for s in a.slots], -1)[None]}, tmp_path / "a.ckpt")
    good = world.capture(0)
    torch.save({"input_ids": good.ids, "aux_hidden_state": torch.cat([s.tensor for s in good.slots], -1)},
               tmp_path / "good.pt")
    late = world.capture(0, boundaries=[b + 1 for b in AUX])
    torch.save(torch.cat([s.tensor for s in late.slots], -1), tmp_path / "late.pt")
    return tmp_path / "a.ckpt", tmp_path / "good.pt", tmp_path / "late.pt"


def test_exit_0_for_a_correct_pair_and_1_for_a_fault(world, tmp_path, capsys):
    a, good, late = _files(world, tmp_path)
    rc, out, _ = _run([a, good], capsys)
    assert rc == 0 and out.startswith("FINDINGS: none")
    assert "aligned by token ids" in out and "cross-slot mean cosine" in out
    rc, out, _ = _run([a, late], capsys)
    assert rc == 1
    first = out.splitlines()[1]
    assert "ERROR" in first and "slot_mismatch" in first  # findings come first
    assert "aligned by hidden states" in out


def test_exit_2_when_an_input_cannot_be_loaded(world, tmp_path, capsys):
    a, good, _ = _files(world, tmp_path)
    (tmp_path / "junk.pt").write_bytes(b"not a torch file at all")
    rc, out, err = _run([a, tmp_path / "junk.pt"], capsys)
    assert rc == 2 and "junk.pt: error: not a torch" in out and "Traceback" not in out + err
    rc, out, _ = _run([tmp_path / "missing.ckpt", good], capsys)
    assert rc == 2 and "missing.ckpt: error: no such file" in out
    rc, _, err = _run([a, good, "--slots", "0"], capsys)
    assert rc == 2 and "--slots" in err


def test_json_is_strict_and_has_the_documented_shape(world, tmp_path, capsys):
    a, _, _ = _files(world, tmp_path)
    b = world.capture(0)
    aux = torch.cat([s.tensor for s in b.slots], -1).clone()
    aux[3, :64] = float("nan")
    torch.save({"input_ids": b.ids, "aux_hidden_state": aux}, tmp_path / "nan.pt")
    rc, out, _ = _run([a, tmp_path / "nan.pt", "--json"], capsys)
    assert rc == 1
    r = json.loads(out, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))  # no NaN literals
    assert set(r) >= {"a", "b", "alignment", "slots", "matrix", "final", "findings"}
    assert set(r["alignment"]) >= {"method", "offset", "length", "diverges_at"}
    assert r["final"] is None and len(r["matrix"]) == 3 and len(r["slots"]) == 3
    f = r["findings"][0]
    assert set(f) >= {"code", "severity", "message"} and f["code"] == "nonfinite"
    assert r["slots"][0]["per_token_cos"][3] is None  # the NaN row, as null


def test_hints_split_an_ambiguous_bare_capture(world, tmp_path, capsys):
    a, _, _ = _files(world, tmp_path)
    b = world.capture(0, with_ids=False)
    torch.save(torch.cat([s.tensor for s in b.slots], -1), tmp_path / "bare.pt")
    rc, out, _ = _run([a, tmp_path / "bare.pt", "--hidden", "64", "--json"], capsys)
    r = json.loads(out)
    assert rc == 0 and r["b"]["k"] == 3 and r["b"]["hidden"] == 64
    rc, out, _ = _run([a, tmp_path / "bare.pt", "--slots", "2", "--json"], capsys)
    r = json.loads(out)  # told k=2: H=96 cannot be compared with A's 64, and we say so
    assert rc == 1 and [f["code"] for f in r["findings"]] == ["width_mismatch"]


def test_bare_capture_is_split_by_the_training_hidden_size(tmp_path):
    """H = 96 is a multiple of 3: the loader alone would guess 3 slots of 32 for a [T, 96] tensor."""
    from eagle3_tui.demo.model import build_model

    model = build_model(seed=1, hidden=96, heads=4)
    ids = torch.arange(1, 41)
    states, final = model.boundaries(ids)
    torch.save({"input_ids": ids, "loss_mask": torch.ones(40, dtype=torch.int64), "hidden_state": final[None],
                "aux_hidden_state": torch.cat([states[b] for b in AUX], -1)[None]}, tmp_path / "a.ckpt")
    torch.save(states[10].bfloat16(), tmp_path / "last_only.pt")
    r = compare_files(str(tmp_path / "a.ckpt"), str(tmp_path / "last_only.pt"))
    assert r["b"]["hidden"] == 96 and r["b"]["k"] == 1
    assert "taken from the training sample" in r["b"]["assumptions"][0]
    assert [f["code"] for f in r["findings"]] == ["width_mismatch"]


def test_the_installed_entry_point_reports_findings_and_exit_codes(demo):
    """Through `python -m eagle3_tui compare`, as a user runs it: 0 silent, 1 fault, 2 unloadable."""
    import subprocess
    import sys

    d, _ = demo

    def start(*argv):
        return subprocess.Popen([sys.executable, "-m", "eagle3_tui", "compare", *map(str, argv)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finish(proc):
        out, err = proc.communicate(timeout=120)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    train = d / "train/rows_0-2000"
    procs = [start(train / "data_2.ckpt", d / "infer/ok_noids_s2.pt"),  # started together: torch
             start(train / "data_10.ckpt", d / "infer/fault_permuted_s10.pt", "--json"),  # imports overlap
             start(train / "data_2.ckpt", d / "vocab_mapping/vocab_mapping.pt")]
    ok, bad, broken = (finish(p) for p in procs)
    assert ok.returncode == 0 and "FINDINGS: none" in ok.stdout, ok.stderr
    assert bad.returncode == 1 and json.loads(bad.stdout)["findings"][0]["mapping"] == [2, 0, 1]
    assert broken.returncode == 2 and "not a hidden-state sample" in broken.stdout
    assert "Traceback" not in ok.stderr + bad.stderr + broken.stderr
