"""The quick scan reads torch's zip without torch.load (engines/read/torch_zip.py): the same
structure, the same records and the same bytes read as through torch.load, on every producer
layout; and a file off its allowlist goes to torch.load (weights_only) with nothing executed.

Each file is written the way its producer writes it (keys, key order, batch dimension, dtype),
with T large enough that the sample is bigger than the scan's budget (65536 here), so the
quick scan reads it with the counting reader (engines/scan/budget.py).
"""

from __future__ import annotations

import gzip
import zipfile
from collections import OrderedDict
from pathlib import Path

import pytest
import torch

from eagle3_tui.engines.read import torch_zip, zip_layout
from eagle3_tui.engines.scan import budget
from eagle3_tui.engines.scan.budget import Reader
from eagle3_tui.engines.scan.file_record import scan_file
from tests.helpers.autouse import _one_torch_thread  # noqa: F401 - autouse fixture
from tests.helpers.evil_files import RunsShell, write_evil_files

T, H, K = 300, 64, 3
BUDGET = 65536


def _states(seed: int, dtype, pad: int = 0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(20, 30000, (T,), generator=g)
    mask = torch.ones(T, dtype=torch.int64)
    mask[:5] = 0
    if pad:
        ids[-pad:] = 0
        mask[-pad:] = 0
    aux = (torch.randn(T, K * H, generator=g) * torch.tensor([1.0] * H + [2.0] * H + [4.0] * H)).to(dtype)
    final = torch.randn(T, H, generator=g).to(dtype)
    aux[0] *= 30  # a first-token massive activation, as real models have
    return ids, mask, aux, final


def _layouts(folder: Path) -> dict[str, Path]:
    """One file per producer layout and dtype, torch.save'd as the producer does."""
    out = {}

    def save(name: str, obj) -> None:
        out[name] = folder / name
        torch.save(obj, out[name])

    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        ids, mask, aux, final = _states(1, dtype, pad=40)
        tag = str(dtype).removeprefix("torch.")
        # SpecForge (scripts/prepare_hidden_states.py): [1, T, kH] and [1, T, H], right padded
        save(f"specforge_{tag}.ckpt", {"input_ids": ids, "loss_mask": mask, "aux_hidden_state": aux[None],
                                       "hidden_state": final[None]})
    ids, mask, aux, final = _states(2, torch.bfloat16)
    # ModelOpt's HF dump ({conversation_id}.pt): aux [T, kH], final [T, H]
    save("modelopt.pt", {"input_ids": ids, "hidden_states": final, "aux_hidden_states": aux, "conversation_id": 17})
    # speculators' legacy .pt: a list of k+1 [T, H] states (views of one tensor: shared storage, offsets)
    stacked = torch.cat([aux, final], dim=-1)
    save("speculators_legacy.pt", {"input_ids": ids, "hidden_states": [stacked[:, i * H:(i + 1) * H] for i in range(K + 1)],
                                   "loss_mask": mask})
    # EAGLE-1/2's ge_data: fp16, the final state only
    save("eagle.ckpt", {"input_ids": ids, "hidden_state": final.half(), "loss_mask": mask})
    # inference dumps: a list of k tensors, a tuple, a bare tensor
    save("list.pt", [aux[:, i * H:(i + 1) * H].clone() for i in range(K)])
    save("tuple.pt", tuple(aux[:, i * H:(i + 1) * H].clone() for i in range(K)))
    save("bare.pt", aux.clone())
    # TensorRT-LLM's SaveHiddenStates: a list of per-request dicts
    save("trtllm_records.pt", [{"input_ids": ids, "hidden_state": final, "aux_hidden_states": aux}])
    # a state_dict-like OrderedDict, a transposed (non-contiguous) final state, requires_grad
    save("ordered.pt", OrderedDict(input_ids=ids, aux_hidden_state=aux, hidden_state=final.t().contiguous().t()))
    save("grad.pt", {"input_ids": ids, "aux_hidden_state": aux.float().requires_grad_(), "hidden_state": final.float()})
    # fp8 with per-token scales (speculators' FP8 connector in a .pt; torch writes _rebuild_tensor_v3)
    x = torch.stack([aux[:, :H], aux[:, H:2 * H], final], dim=1).float()
    scales = x.abs().amax(dim=(1, 2)) / 448
    save("fp8_scales.pt", {"input_ids": ids, "hidden_states": (x / scales[:, None, None]).to(torch.float8_e4m3fn),
                           "hidden_states_scales": scales})
    save("fp8_plain.pt", {"input_ids": ids, "aux_hidden_state": aux.to(torch.float8_e4m3fn),
                          "hidden_state": final.to(torch.float8_e4m3fn)})
    # SpecForge's .ckpt.gz: not a zip (the static reader declines, read whole as before)
    gz = folder / "specforge.ckpt.gz"
    gz.write_bytes(gzip.compress(out["specforge_bfloat16.ckpt"].read_bytes(), compresslevel=1))
    out["specforge.ckpt.gz"] = gz
    # torch's legacy (non-zip) format
    legacy = folder / "legacy.pt"
    torch.save({"input_ids": ids, "aux_hidden_state": aux}, legacy, _use_new_zipfile_serialization=False)
    out["legacy.pt"] = legacy
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    return _layouts(tmp_path_factory.mktemp("layouts"))


def _same(a, b, where: str = "") -> None:
    """a (static) is b (torch.load, meta) in every detail the scan can see."""
    assert type(a) is type(b), where
    if isinstance(b, torch.Tensor):
        for attr in ("shape", "dtype", "device", "requires_grad"):
            assert getattr(a, attr) == getattr(b, attr), (where, attr)
        assert (a.stride(), a.storage_offset()) == (b.stride(), b.storage_offset()), where
        sa, sb = a.untyped_storage(), b.untyped_storage()
        assert (sa.nbytes(), sa._checkpoint_offset) == (sb.nbytes(), sb._checkpoint_offset), where
    elif isinstance(b, dict):
        assert list(a) == list(b), where
        for k in b:
            _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(b, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert a == b, where


def test_the_static_read_gives_torch_loads_structure_and_reads_only_headers(files):
    """The structure torch.load gives (its offsets on "meta", right for a file torch.save wrote),
    read from the file's first page, its last 4 KiB and each record's local header: no byte of
    the data itself."""
    zips = [n for n in files if not n.endswith((".gz", "legacy.pt"))]
    for name in zips:
        static = Reader(str(files[name]))
        try:
            _same(torch_zip.read_structure(static.pread, static.size),
                  torch.load(files[name], map_location="meta", weights_only=True), name)
            size = static.size
            headers = set()
            for info in zipfile.ZipFile(files[name]).infolist():
                end = info.header_offset + 30 + len(info.filename) + 4 - 1
                headers.update(range(info.header_offset // budget.PAGE, end // budget.PAGE + 1))
            tail = set(range((size - torch_zip.TAIL_BYTES) // budget.PAGE, (size - 1) // budget.PAGE + 1))
            assert static.pages == {0} | tail | headers, name
        finally:
            static.close()
    for name in ("specforge.ckpt.gz", "legacy.pt"):  # not torch's zip: declined, torch.load reads them
        r = Reader(str(files[name]))
        with pytest.raises(torch_zip.NotStatic):
            torch_zip.read_structure(r.pread, r.size)
        r.close()


def _found(record: dict) -> dict:
    """A record less how it was read (through torch.load, a small file is read whole)."""
    return {k: v for k, v in record.items() if k not in ("bytes_read", "rows_read", "mapped")}


def _records(files, static: bool, monkeypatch) -> dict[str, dict]:
    monkeypatch.setattr(budget, "STATIC_ZIP", static)
    out = {}
    for name, path in files.items():
        st = path.stat()
        out[name] = scan_file(str(path.parent), name, st.st_size, st.st_mtime, budget=BUDGET)
    return out


def test_every_producer_layout_gives_the_same_record_bit_for_bit_as_through_torch_load(files, monkeypatch):
    static = _records(files, True, monkeypatch)
    by_torch = _records(files, False, monkeypatch)
    for name in files:
        assert "error" not in static[name], (name, static[name].get("error"))
        assert _found(static[name]) == _found(by_torch[name]), name  # every float and the fingerprint
    # a full scan (every row, through the mapping) finds the same fingerprint: duplicates match
    # across depths and across the ways a file is read
    for name, path in files.items():
        st = path.stat()
        full = scan_file(str(path.parent), name, st.st_size, st.st_mtime, full=True, budget=BUDGET)
        assert full["fingerprint"] == static[name]["fingerprint"], name
    # the budget path itself ran (rows picked, bytes counted within the budget) on the zips
    assert static["specforge_bfloat16.ckpt"]["rows_read"] < T
    assert static["specforge_bfloat16.ckpt"]["bytes_read"] <= BUDGET
    assert static["specforge.ckpt.gz"]["bytes_read"] == files["specforge.ckpt.gz"].stat().st_size


def test_a_file_off_the_allowlist_is_handed_to_torch_load_and_nothing_runs(tmp_path, monkeypatch):
    marker = tmp_path / "ran"
    evil = tmp_path / "evil"
    expected = write_evil_files(evil, marker)
    zip_path = evil / "zip.pt"
    r = Reader(str(zip_path))
    with pytest.raises(torch_zip.NotStatic, match="posix.system"):
        torch_zip.read_structure(r.pread, r.size)
    r.close()
    # a big one, read by the budget's reader: the record is torch.load's refusal, as before
    ids, mask, aux, final = _states(3, torch.bfloat16)
    big = evil / "data_0.ckpt"
    torch.save({"input_ids": ids, "aux_hidden_state": aux, "hidden_state": final, "x": RunsShell(marker)}, big)
    assert big.stat().st_size > BUDGET
    for static in (True, False):
        monkeypatch.setattr(budget, "STATIC_ZIP", static)
        rec = scan_file(str(evil), big.name, big.stat().st_size, big.stat().st_mtime, budget=BUDGET)
        assert expected["zip.pt"] in rec["error"], rec
    assert not marker.exists()


def test_files_laid_out_alike_share_one_structure_and_each_keeps_its_own_numbers(tmp_path, monkeypatch):
    """The files of a shard share their pickle and offsets: the second is not walked, built or
    normalised again (the same object comes back), yet its record is its own, bit for bit
    torch.load's: other rows, other padding, another fingerprint."""
    names = []
    for i, pad in enumerate((0, 40, 40)):
        ids, mask, aux, final = _states(10 + i, torch.bfloat16, pad=pad)
        names.append(f"data_{i}.ckpt")
        torch.save({"input_ids": ids, "loss_mask": mask, "aux_hidden_state": aux[None], "hidden_state": final[None]},
                   tmp_path / names[-1])
    readers = [Reader(str(tmp_path / n)) for n in names]
    try:
        first, second = (torch_zip.read_structure(r.pread, r.size) for r in readers[:2])
        assert first is second
    finally:
        for r in readers:
            r.close()
    files = {n: tmp_path / n for n in names}
    static = _records(files, True, monkeypatch)
    by_torch = _records(files, False, monkeypatch)
    assert {n: _found(r) for n, r in static.items()} == {n: _found(r) for n, r in by_torch.items()}
    assert len({r["fingerprint"] for r in static.values()}) == 3
    assert [r["valid_tokens"] for r in static.values()] == [T, T - 40, T - 40]


def _fresh(path: Path):
    """read_structure of path with nothing remembered of a file before."""
    torch_zip._LAST_LAYOUT[0] = None
    torch_zip._WALKED.clear()
    torch_zip._BUILT.clear()
    return _structure_or_refusal(path)


def _structure_or_refusal(path: Path):
    r = Reader(str(path))
    try:
        return torch_zip.read_structure(r.pread, r.size)
    except torch_zip.NotStatic as err:
        return err
    finally:
        r.close()


def test_a_file_laid_out_alike_is_known_without_parsing_and_a_changed_byte_is_never_mistaken(tmp_path):
    """The static read remembers the layout of the last file it parsed (every byte of the two pages
    it parsed but the CRCs and the archive folder naming the file): the next file laid out alike
    gets the same object without a parse. A file of the same size that differs in any byte the
    parse uses (a shape in the pickle, the folder of one record, a record's size) is parsed, and
    reads as it would with nothing remembered."""
    ids, mask, aux, final = _states(20, torch.bfloat16, pad=40)
    state = {"input_ids": ids, "loss_mask": mask, "aux_hidden_state": aux[None], "hidden_state": final[None]}
    torch.save(state, tmp_path / "data_1.ckpt")
    ids2, mask2, aux2, final2 = _states(21, torch.bfloat16)
    torch.save({"input_ids": ids2, "loss_mask": mask2, "aux_hidden_state": aux2[None], "hidden_state": final2[None]},
               tmp_path / "data_2.ckpt")  # other data, other CRCs, another folder name: laid out alike
    reference = _fresh(tmp_path / "data_1.ckpt")
    hits = []
    matches = zip_layout.Layout.matches

    def counted(layout, z):
        hits.append(matches(layout, z))
        return hits[-1]

    zip_layout.Layout.matches = counted  # type: ignore[method-assign]
    try:
        assert _structure_or_refusal(tmp_path / "data_2.ckpt") is reference
        assert hits == [True]
        _same(reference, torch.load(tmp_path / "data_2.ckpt", map_location="meta", weights_only=True))

        data = (tmp_path / "data_1.ckpt").read_bytes()
        pickle_at = data.index(b"data_1/data.pkl") + len("data_1/data.pkl")
        t_at = data.index(b"M" + T.to_bytes(2, "little"), pickle_at)  # BININT2 300: a tensor's length
        changed = {
            "a shape": data[:t_at + 1] + (T - 1).to_bytes(2, "little") + data[t_at + 3:],
            "one record's folder": data.replace(b"data_1/byteorder", b"dbta_1/byteorder"),
            "a record's size in the directory": _patched_directory_size(data, b"data_1/.format_version"),
        }
        for what, patched in changed.items():
            path = tmp_path / "data_3.ckpt"
            path.write_bytes(patched)
            assert len(patched) == len(data), what
            _fresh(tmp_path / "data_1.ckpt")  # remembered: data_1's layout
            hits.clear()
            got = _structure_or_refusal(path)
            assert hits == [False], what
            want = _fresh(path)
            if isinstance(want, Exception):
                assert isinstance(got, torch_zip.NotStatic) and str(got) == str(want), what
            else:
                _same(got, want, what)
        path.write_bytes(changed["a shape"])
        _fresh(tmp_path / "data_1.ckpt")
        with pytest.raises(AssertionError):  # the shape changed is read as such
            _same(_structure_or_refusal(path), reference)
    finally:
        zip_layout.Layout.matches = matches  # type: ignore[method-assign]


def _patched_directory_size(data: bytes, name: bytes) -> bytes:
    """data with the uncompressed size of record `name` in the central directory one larger."""
    at = data.rindex(name) - 46  # its central directory entry
    assert data[at : at + 4] == b"PK\x01\x02"
    size = int.from_bytes(data[at + 24 : at + 28], "little")
    return data[: at + 24] + (size + 1).to_bytes(4, "little") + data[at + 28 :]


def test_a_block_still_held_is_never_read_over(tmp_path):
    """The counting reader reuses its block buffer from file to file (no fresh half MiB a file),
    but never while a tensor of the last block is alive: rows kept keep their values."""
    names = []
    for i in range(2):
        ids, mask, aux, final = _states(30 + i, torch.bfloat16)
        names.append(tmp_path / f"data_{i}.ckpt")
        torch.save({"input_ids": ids, "loss_mask": mask, "aux_hidden_state": aux, "hidden_state": final}, names[-1])
    rows = [0, 7, T - 1]
    blocks = []
    for path in names:
        r = Reader(str(path))
        try:
            parts = torch_zip.read_structure(r.pread, r.size)
            state = torch.load(path, weights_only=True)
            whole = [state["aux_hidden_state"][:, i * H:(i + 1) * H] for i in range(K)] + [state["hidden_state"]]
            meta = [parts["aux_hidden_state"][:, i * H:(i + 1) * H] for i in range(K)] + [parts["hidden_state"]]
            blocks.append((r.block(meta, rows), whole))
        finally:
            r.close()
    first, second = blocks
    for block, whole in blocks:  # each as read, the first untouched by the second's reading
        for p, x in enumerate(whole):
            assert torch.equal(block[p], x[rows]), p
    assert first[0].untyped_storage().data_ptr() != second[0].untyped_storage().data_ptr()
