"""Behaviour of the command line itself, whatever the subcommand."""

from __future__ import annotations

import subprocess
import sys


def test_output_cut_short_by_a_pipe_gives_no_traceback(tmp_path):
    for i in range(3000):
        (tmp_path / f"data_{i}.pt").touch()
    out = subprocess.run(
        f"{sys.executable} -m eagle3_tui ls {tmp_path} | head -n 2",
        shell=True,
        capture_output=True,
        text=True,
    )
    assert out.stdout.splitlines()[1].endswith("data_1.pt")
    assert "Traceback" not in out.stderr and "BrokenPipe" not in out.stderr


def _summary(argv, capsys):
    import argparse

    from eagle3_tui.commands import summary

    parser = argparse.ArgumentParser()
    summary.add_arguments(parser)
    rc = summary.run(parser.parse_args([str(a) for a in argv]))
    return rc, capsys.readouterr().out


def _specforge_files(tmp_path):
    """A SpecForge record (3 slots of H 64, padded) and SpecForge's vocab_mapping.pt."""
    import torch

    from tests.helpers.specforge import SpecForgeWriter, save

    w = SpecForgeWriter(0)
    sample = save(w.batch((2, 5, 7))[0], tmp_path / "data_0.ckpt")
    vocab = save({"d2t": torch.arange(32), "t2d": torch.ones(64, dtype=torch.bool)}, tmp_path / "vocab_mapping.pt")
    return sample, vocab


def test_summary_json_k_is_the_slot_count_and_first_k_the_values(tmp_path, capsys):
    import json

    sample, _ = _specforge_files(tmp_path)
    rc, out = _summary(["--json", "-k", "2", sample], capsys)
    r = json.loads(out)
    assert rc == 0 and r["k"] == 3 == len(r["slots"]) and r["first_k"] == 2
    assert all(len(row) == 2 for row in r["slots"][0]["first"])
    rc, out = _summary([sample, "-k", "2"], capsys)
    assert "k 3 slots" in out  # the table says the same k as the JSON


def test_summary_of_a_non_sample_lists_its_contents_and_is_not_a_failure(tmp_path, capsys):
    import json

    sample, vocab = _specforge_files(tmp_path)
    rc, out = _summary([vocab, sample], capsys)
    assert rc == 0 and "error" not in out
    assert "vocab_mapping.pt: not a hidden-state sample" in out
    assert "d2t  [32] int64" in out and "t2d  [64] bool" in out and "k 3 slots" in out
    rc, out = _summary(["--json", vocab, sample], capsys)
    first, second = (json.loads(line) for line in out.splitlines())
    assert rc == 0 and first["not_sample"] and set(first["contents"]) == {"d2t", "t2d"}
    assert second["k"] == 3
    (tmp_path / "junk.pt").write_bytes(b"junk")
    rc, out = _summary([vocab, tmp_path / "junk.pt"], capsys)
    # a sample that fails to load still fails: its table line says so, the reason is on stderr
    assert rc == 1 and "junk.pt: failed" in out and "vocab_mapping.pt: not a hidden-state sample" in out
