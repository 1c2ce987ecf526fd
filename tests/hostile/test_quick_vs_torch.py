"""The quick scan never calls a file clean that torch's own loader refuses or reads otherwise (issue
55). Its own reader of torch's zip and pickle (engines/read/torch_zip.py) takes a file only when it
reads it as torch does; every other file goes to torch.load(weights_only=True) whole.

The files are crafted by class (tests/helpers/crafted_torch.py: pickles torch's weights-only
unpickler refuses or reads otherwise, zips laid out otherwise than torch's writer lays them out,
decoys, bombs, byte flips of real files) on fixed seeds; for each, the quick reader's structure is
set beside torch.load's (every value, and the bytes at every tensor's offset), and the quick scan's
record beside the same scan through torch's loader and the full scan
(tests/helpers/quick_vs_torch.py). scripts/quick_vs_torch.py runs the same on many more seeds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch

from eagle3_tui.engines.read import torch_zip
from eagle3_tui.engines.scan.budget import Reader
from tests.helpers import crafted_torch, torch_layout
from tests.helpers.autouse import _one_torch_thread  # noqa: F401 - autouse fixture
from tests.helpers.quick_vs_torch import BUDGET, compare

ROOT = Path(__file__).resolve().parents[2]
SEEDS = (0, 1, 2)

#: files the quick reader must read itself: torch.save's own, and changes torch reads the same way
#: (the CRCs and times torch never checks, a longer padding it skips as torch does)
TAKEN = {"specforge_bf16", "specforge_f32", "specforge_f16", "modelopt", "speculators_views", "list", "fp8",
         "handwritten", "rewritten", "crc_changed", "time_changed", "flags_utf8_off", "decoy_extra",
         "alignment_128_written", "no_byteorder", "nan_slot", "inf_rows", "location_cuda"}
#: the issue's findings: each one handed over (torch reads it, or refuses it, in its own words)
HANDED = {"protocol4", "memoize", "frame", "dup_pop", "odd_setitems", "tuple_bomb", "float_alias", "torch_storage",
          "big_endian_genuine", "alignment_b'0'", "upper_case_name", "upper_case_twin", "unreferenced_between",
          "stored_repack", "deflated_repack", "duplicate_storage", "version_b'99\\n'", "version_missing",
          "zip64_sizes", "nonutf8_name", "numel_past_record", "deflated_pickle_bomb", "decoy_name",
          "folder_attribute", "stride_past_storage", "negative_stride"}


def _write(folder: Path, seed: int) -> list[tuple[str, str, Path]]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i, (kind, name, data) in enumerate(crafted_torch.crafted(seed)):
        path = folder / f"data_{i}.pt"  # names of ours: a crafted name is the test's, not the file's
        path.write_bytes(data)
        out.append((kind, name, path))
    return out


@pytest.fixture(scope="module")
def crafted(tmp_path_factory) -> dict[int, list[tuple[str, str, Path]]]:
    root = tmp_path_factory.mktemp("crafted")
    return {seed: _write(root / f"seed{seed}", seed) for seed in SEEDS}


def test_the_test_writer_lays_out_a_zip_byte_for_byte_as_torch_save():
    """The crafted files differ from real ones only where a class changes them."""
    for obj in crafted_torch.layouts(5).values():
        data = crafted_torch.saved(obj)
        assert torch_layout.write(*torch_layout.records(data)) == data


def test_every_crafted_file_reads_as_torch_reads_it_or_is_handed_over(crafted):
    taken: Counter[str] = Counter()
    seen: dict[str, set[bool]] = {}
    problems = []
    for seed, files in crafted.items():
        for kind, name, path in files:
            verdict = compare(path, deterministic=kind != "torch-nondeterministic")
            problems += [f"seed {seed} {kind}/{name}: {p}" for p in verdict.problems]
            taken[kind] += verdict.taken
            seen.setdefault(name, set()).add(verdict.taken)
    assert not problems, "\n".join(problems)
    assert {name for name in TAKEN if seen[name] != {True}} == set()
    assert {name for name in HANDED if seen[name] != {False}} == set()
    # the fast path stays the usual path: every real file, and most byte flips of one
    assert taken["real"] == len(SEEDS) * 7
    assert sum(len(files) for files in crafted.values()) > 300


def test_a_file_laid_out_as_the_one_before_is_known_only_when_every_deciding_byte_is_equal(crafted):
    """The same-layout shortcut: each crafted file of its base file's size, read right after the
    base (its layout remembered), gives what it gives with nothing remembered."""
    for files in crafted.values():
        base = next(path for kind, name, path in files if name == "specforge_bf16")
        size = base.stat().st_size
        same_size = [(name, path) for _, name, path in files if path.stat().st_size == size and path != base]
        assert len(same_size) >= 10
        for name, path in same_size:
            _fresh(base)
            remembered = _read(path)
            alone = _fresh(path)
            if isinstance(alone, Exception):
                assert isinstance(remembered, torch_zip.NotStatic), name
            else:
                assert not isinstance(remembered, Exception), (name, remembered)
                _same_structure(remembered, alone, name)


def _fresh(path: Path):
    torch_zip._LAST_LAYOUT[0] = None
    return _read(path)


def _read(path: Path):
    r = Reader(str(path))
    try:
        return torch_zip.read_structure(r.pread, r.size)
    except torch_zip.NotStatic as err:
        return err
    finally:
        r.close()


def _same_structure(a, b, where: str) -> None:
    if isinstance(b, torch.Tensor):
        assert (a.shape, a.dtype, a.stride(), a.untyped_storage()._checkpoint_offset) == (
            b.shape, b.dtype, b.stride(), b.untyped_storage()._checkpoint_offset), where
    elif isinstance(b, dict):
        assert list(a) == list(b), where
        for k in b:
            _same_structure(a[k], b[k], f"{where}.{k}")
    elif isinstance(b, (list, tuple)):
        assert len(a) == len(b), where
        for x, y in zip(a, b):
            _same_structure(x, y, where)
    else:
        assert a == b or (a != a and b != b), where


_BOMB = """
import sys
from eagle3_tui.engines.read import torch_zip
from eagle3_tui.engines.scan.budget import Reader
r = Reader(sys.argv[1])
try:
    torch_zip.read_structure(r.pread, r.size)
    print("taken")
except torch_zip.NotStatic as err:
    print("handed over:", err)
# this process's own peak (ru_maxrss would keep the forking parent's from before the exec)
print(next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""


def test_a_200_byte_memo_bomb_is_handed_over_at_once_and_small(tmp_path):
    """A tuple built from itself 40 times through the memo is 2^40 nodes as a tree: the walk that
    copied it ran for ever, +8.5 MB/s. It counts nodes with sharing expanded and hands it over."""
    data = crafted_torch.saved(crafted_torch.sample(0))
    folder, items = torch_layout.records(data)
    bomb = crafted_torch.tuple_bomb(40)
    assert len(bomb) < 400
    pkl = crafted_torch._sample_pickle(crafted_torch.P().s("bomb").b[2:] + bomb)
    path = tmp_path / "data_0.pt"
    path.write_bytes(torch_layout.write(folder, [("data.pkl", pkl) if n == "data.pkl" else (n, d) for n, d in items]))
    # the ceiling only catches a hang (a loaded machine takes a second at most)
    out = subprocess.run([sys.executable, "-c", _BOMB, str(path)], capture_output=True, text=True, timeout=120,
                         cwd=ROOT, check=True).stdout.split("\n")
    assert out[0].startswith("handed over: a pickle that describes too many objects")
    assert int(out[1]) < 600 * 1024  # KiB: torch imported (~300 MB), nothing of the bomb's size


def test_a_deflated_pickle_bomb_is_refused_before_torch_inflates_it(tmp_path):
    """1.5 MB whose data.pkl expands to 1 GiB took 3.4 GB of memory and then read as a fine
    sample. Its directory says what it expands to: refused in one line, by the quick scan and the
    full one, before torch inflates anything."""
    base = crafted_torch.saved(crafted_torch.sample(0))
    path = tmp_path / "data_0.pt"
    path.write_bytes(crafted_torch._pickle_bomb(base))
    assert path.stat().st_size < 1 << 20
    for full in ("", "--full"):
        run = subprocess.run([sys.executable, "-m", "eagle3_tui", "scan", str(tmp_path), "--json", "--no-cache", "--budget",
                              str(BUDGET), *([full] if full else [])], capture_output=True, text=True, timeout=300,
                             cwd=ROOT)
        records = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
        files = [r for r in records if r.get("path") == "data_0.pt"]
        assert files and "data.pkl would take 65.0 MiB" in files[0]["error"], run.stdout[-2000:]


def test_a_big_endian_sample_is_read_as_its_values_not_its_bytes(tmp_path):
    """A big-endian machine's sample (every storage byte-swapped, byteorder "big"): the quick reader
    hands it over, torch swaps it back as it loads it, and the rows the quick scan then reads are
    the swapped ones, not the file's bytes (big enough that the rows are read with pread, past
    measure.PREAD_MIN_BYTES): the same record as its little-endian twin's."""
    from eagle3_tui.engines.scan.measure import PREAD_MIN_BYTES
    from eagle3_tui.engines.scan.file_record import scan_file

    g = torch.Generator().manual_seed(3)
    t, h = 2048, 1536
    obj = {"input_ids": torch.randint(20, 30000, (t,), generator=g), "loss_mask": torch.ones(t, dtype=torch.int64),
           "aux_hidden_state": torch.randn(1, t, 3 * h, generator=g).bfloat16(),
           "hidden_state": torch.randn(1, t, h, generator=g).bfloat16()}
    little = crafted_torch.saved(obj)
    assert len(little) > PREAD_MIN_BYTES
    (tmp_path / "data_0.pt").write_bytes(little)
    (tmp_path / "data_1.pt").write_bytes(crafted_torch._big_endian(*torch_layout.records(little), obj))
    recs = [scan_file(str(tmp_path), f"data_{i}.pt", len(little), 0.0, full=full) for full in (False, True)
            for i in (0, 1)]
    for rec in recs:
        assert "error" not in rec, rec
    found = [{k: v for k, v in r.items() if k not in ("path", "index", "bytes_read", "mapped", "rows_read")}
             for r in recs]
    assert found[0] == found[1] and found[2] == found[3]
    assert recs[0]["rows_read"] < t  # the quick scan picked rows
