"""Quick vs full, the record cache, cancellation: what a user of `scan` would notice."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import torch

from eagle3_tui.cli import main
from eagle3_tui.demo.model import build_model
from eagle3_tui.engines.scan.file_record import scan_file
from eagle3_tui.engines.scan.records import scan_tree
from tests.helpers.processes import first_line
from tests.helpers.scan_build import build


def long_sample(path: Path, t: int = 700, nan_row: int | None = None) -> None:
    model = build_model(seed=0)
    g = torch.Generator().manual_seed(t)
    ids = torch.randint(20, model.cfg.vocab, (t,), generator=g)
    states, final = model.boundaries(ids, torch.float32)
    aux = torch.cat([states[b] for b in model.cfg.aux_boundaries], -1)
    if nan_row is not None:
        aux[nan_row, 5] = float("nan")
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"input_ids": ids, "loss_mask": torch.ones(t, dtype=torch.int64),
                "aux_hidden_state": aux[None], "hidden_state": final[None]}, path)


def test_quick_reads_a_few_rows_and_agrees_with_full_on_norms(tmp_path):
    budget = 256 << 10  # below every file's size: rows are picked (a sample within it is read whole)
    for i, t in enumerate((300, 700, 1500)):
        long_sample(tmp_path / f"data_{i}.pt", t)
    for name in ("data_0.pt", "data_1.pt", "data_2.pt"):
        size = (tmp_path / name).stat().st_size
        quick = scan_file(str(tmp_path), name, size, 0.0, rows=64, budget=budget)
        full = scan_file(str(tmp_path), name, size, 0.0, full=True, budget=budget)
        n = quick["rows_read"]
        assert 8 <= n <= 66 < full["rows_read"] == full["tokens"]
        assert quick["bytes_read"] <= budget < size == full["bytes_read"]
        rec = torch.load(tmp_path / name, weights_only=True)
        h = rec["hidden_state"].shape[-1]
        parts = [*rec["aux_hidden_state"][0].split(h, dim=-1), rec["hidden_state"][0]]
        for q, f, x in zip([*quick["slots"], quick["final"]], [*full["slots"], full["final"]], parts):
            # a 64-row sample of heavy-tailed token norms (a few tokens carry massive activations):
            # within 3 standard errors of such a sample's mean, and never off by half
            norms = x.float().norm(dim=-1)[1:]  # row 0 is read as its own stratum
            se = float(norms.std()) / (n - 1) ** 0.5 * (1 - n / len(norms)) ** 0.5
            err = abs(q["norm_mean"] - f["norm_mean"])
            assert err <= 3 * se + 0.01 * f["norm_mean"] and err < 0.5 * f["norm_mean"], (name, err, se, q, f)
            assert q["norm_max"] <= f["norm_max"] * (1 + 1e-6)
        for key in ("tokens", "valid_tokens", "k", "hidden", "dtype", "schema", "loss_ones"):
            assert quick[key] == full[key]


def test_full_finds_nan_in_a_row_quick_does_not_read(tmp_path):
    long_sample(tmp_path / "data_0.pt", 700, nan_row=340)  # between two of the 64 rows a quick scan reads
    size = (tmp_path / "data_0.pt").stat().st_size
    quick = scan_file(str(tmp_path), "data_0.pt", size, 0.0)
    full = scan_file(str(tmp_path), "data_0.pt", size, 0.0, full=True)
    assert sum(s["nan"] for s in quick["slots"]) == 0
    assert [s["first_nonfinite_row"] for s in full["slots"]] == [340, None, None]
    assert full["slots"][0]["nan"] == 1


def test_gzipped_sample_costs_a_full_read_and_says_so(tmp_path):
    import gzip
    import io

    long_sample(tmp_path / "plain.pt", 300)
    raw = (tmp_path / "plain.pt").read_bytes()
    with gzip.open(tmp_path / "data_1.ckpt.gz", "wb") as f:
        f.write(raw)
    size = (tmp_path / "data_1.ckpt.gz").stat().st_size
    r = scan_file(str(tmp_path), "data_1.ckpt.gz", size, 0.0)
    assert r["mapped"] is False and r["bytes_read"] == size and r["index"] == 1
    plain = scan_file(str(tmp_path), "plain.pt", len(raw), 0.0)
    assert r["slots"] == plain["slots"] and io  # same numbers through gzip


def copy_dataset(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, copy_function=shutil.copy2)
    return dst


def scan_json(capsys, *argv) -> tuple[list[dict], dict]:
    main(["scan", *map(str, argv), "--json"])
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    return lines[:-1], lines[-1]


def test_unchanged_files_come_from_the_cache_without_being_read(clean, tmp_path, capsys):
    root = copy_dataset(clean, tmp_path / "ds")
    first, s1 = scan_json(capsys, root)
    assert s1["summary"]["cached"] == 0 and s1["summary"]["bytes_read"] > 0
    files = sorted(p for p in root.rglob("*.ckpt"))
    second, s2 = scan_json(capsys, root)
    assert s2["summary"]["cached"] == len(files) and s2["summary"]["bytes_read"] == 0
    strip = lambda rs: sorted(({k: v for k, v in r.items() if k != "cached"} for r in rs), key=lambda r: r["path"])  # noqa: E731
    assert strip(second) == strip(first)
    assert s2["findings"] == s1["findings"]
    # a file rewritten with garbage of the same size, its mtime put back (`touch -r`), is scanned
    # again all the same (its ctime moved: issue 44) and found to be garbage; the rest stay cached
    st = files[3].stat()
    files[3].write_bytes(b"\0" * st.st_size)
    os.utime(files[3], ns=(st.st_atime_ns, st.st_mtime_ns))
    third, s3 = scan_json(capsys, root)
    assert s3["summary"]["cached"] == len(files) - 1
    assert [r["path"] for r in third if "error" in r] == [str(files[3].relative_to(root))]
    assert [f["code"] for f in s3["findings"] if f["severity"] == "error"] == ["unreadable"]


def test_text_report_from_the_cache_is_the_report_of_the_first_scan(clean, tmp_path, capsys):
    # cached records are kept undecoded until something needs them: the per-shard table and a
    # cached unreadable file must still come out exactly as the scan that read them printed
    root = copy_dataset(clean, tmp_path / "ds")
    broken = sorted(root.rglob("*.ckpt"))[2]
    broken.write_bytes(b"PK\x03\x04 cut short")
    assert main(["scan", str(root)]) == 1
    first = capsys.readouterr().out
    assert main(["scan", str(root)]) == 1
    second = capsys.readouterr().out
    body = lambda text: text.rsplit("\n", 2)[0]  # noqa: E731 - the last line has timings and cache counts
    assert "unreadable" in first and "0 from cache" in first
    assert body(second) == body(first)
    assert f"{len(list(root.rglob('*.ckpt')))} from cache" in second


def test_full_scan_does_not_take_quick_records_from_the_cache(clean, capsys):
    _, s1 = scan_json(capsys, clean, "--rows", "8")
    _, s2 = scan_json(capsys, clean, "--full")
    # a full record serves a quick scan with the same --rows and --budget (the rows both take the
    # layer signature from)
    _, s3 = scan_json(capsys, clean)
    assert s2["summary"]["cached"] == 0 and s3["summary"]["cached"] == s1["summary"]["files"]


def test_cancel_stops_the_pool_within_a_chunk(tmp_path):
    build(tmp_path, seed=4, shards=8, per_shard=16)  # 128 files
    cancel = threading.Event()
    seen = []
    for record in scan_tree(str(tmp_path), workers=2, cancel=cancel):
        seen.append(record)
        cancel.set()
    assert 1 <= len(seen) <= 32 < 128
    assert multiprocessing.active_children() == []


def test_ctrl_c_prints_what_was_found_and_exits_130(tmp_path):
    root = tmp_path / "ds"
    # Enough files that the scan cannot end before the signal lands, however busy the machine
    # (a scan that ended first would prove nothing); links cost no disk.
    files = 4000
    long_sample(root / "rows_0-4000" / "data_0.pt", 400)
    for i in range(1, files):
        os.link(root / "rows_0-4000" / "data_0.pt", root / "rows_0-4000" / f"data_{i}.pt")
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    proc = subprocess.Popen([sys.executable, "-m", "eagle3_tui", "scan", str(root), "--json", "--full", "--workers", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, bufsize=0)
    first = first_line(proc)  # not readline(): see first_line
    assert first, proc.stderr.read().decode()
    assert json.loads(first)["computed"] == "local"
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    out, err = out.decode(), err.decode()
    lines = [first.decode(), *out.splitlines()]
    last = json.loads(lines[-1])
    assert proc.returncode == 130, err
    assert last["summary"]["interrupted"] is True
    assert 1 <= last["summary"]["files"] == len(lines) - 1 < files
    assert "Traceback" not in err and "interrupted" in err


def test_quick_reads_every_row_of_a_small_sample_and_finds_its_nan(tmp_path):
    """Picking 64 of 90 rows costs more than reading all of them: a quick scan of a small sample
    is as thorough as a full one (same numbers, same NaN, same fingerprint)."""
    long_sample(tmp_path / "data_0.pt", 90, nan_row=33)  # a row a 64-row pick of 90 leaves out
    size = (tmp_path / "data_0.pt").stat().st_size
    quick = scan_file(str(tmp_path), "data_0.pt", size, 0.0)
    full = scan_file(str(tmp_path), "data_0.pt", size, 0.0, full=True)
    assert quick["mode"] == "quick" and quick["rows_read"] == quick["tokens"] == 90
    assert [s["first_nonfinite_row"] for s in quick["slots"]] == [33, None, None]
    assert quick["slots"] == full["slots"] and quick["signature"] == full["signature"]
    assert quick["fingerprint"] == full["fingerprint"]
