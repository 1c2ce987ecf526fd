"""One crafted file read three ways, and the verdicts set side by side: the quick reader's structure
(engines/read/torch_zip.py) against torch.load's own, and the quick scan's record against the same
scan through torch's loader and against the full scan. Shared by the suite's differential test
(tests/hostile/test_quick_vs_torch.py) and its longer randomized run (scripts/quick_vs_torch.py)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import torch

from eagle3_tui.engines.read import torch_zip
from eagle3_tui.engines.scan import budget
from eagle3_tui.engines.scan.budget import Reader
from eagle3_tui.engines.scan.file_record import scan_file

#: a budget under the crafted samples' size (~160 KB): the quick scan reads them with the counting
#: reader and its own zip reader, picking rows
BUDGET = 65536
#: what a record holds about how it was read, not what it found
COST = ("bytes_read", "rows_read", "mapped")


@dataclass
class Verdict:
    taken: bool  # the quick reader read the structure itself (else it handed the file over)
    why: str = ""  # the hand-over's reason
    problems: list[str] = field(default_factory=list)  # disagreements: each a test failure


def compare(path: Path, deterministic: bool = True) -> Verdict:
    """Read `path` every way; Verdict.problems names each way the quick reader disagrees with
    torch. deterministic False: torch itself reads the file differently each time; only whether
    the quick reader hands it over is asked."""
    torch_zip._LAST_LAYOUT[0] = None  # nothing remembered of the file before
    r = Reader(str(path))
    try:
        structure = torch_zip.read_structure(r.pread, r.size)
        verdict = Verdict(True)
    except torch_zip.NotStatic as err:
        structure, verdict = None, Verdict(False, str(err))
    finally:
        r.close()
    if not deterministic:
        if verdict.taken:
            verdict.problems.append("taken, though torch reads it differently each time")
        return verdict
    if structure is not None:
        verdict.problems += _structure_problems(path, structure)
    quick, by_torch, full = (_record(path, static, depth) for static, depth in ((True, False), (False, False),
                                                                                  (False, True)))
    if ("error" in quick) != ("error" in by_torch) or ("error" in quick) != ("error" in full):
        verdict.problems.append(f"errors differ: quick {quick.get('error')!r}, through torch "
                                f"{by_torch.get('error')!r}, full {full.get('error')!r}")
    elif "error" in quick:
        # a file handed over is read by torch both times: its words can differ only where torch
        # itself reads memory nobody wrote (a record flagged a folder), not by anything of ours
        if verdict.taken and quick["error"] != by_torch["error"]:
            verdict.problems.append(f"other messages: {quick['error']!r} vs {by_torch['error']!r}")
    else:
        a, b = ({k: v for k, v in rec.items() if k not in COST} for rec in (quick, by_torch))
        if a != b:
            verdict.problems.append(f"records differ in {sorted(k for k in a if a.get(k) != b.get(k))}")
        for slot_q, slot_f in zip(quick["slots"] + [quick["final"]], full["slots"] + [full["final"]]):
            if slot_q and slot_f and (slot_q["nan"] or slot_q["inf"]) and not (slot_f["nan"] or slot_f["inf"]):
                verdict.problems.append("the quick scan finds NaN/Inf the full scan does not")
    return verdict


def _record(path: Path, static: bool, full: bool) -> dict:
    before = budget.STATIC_ZIP
    budget.STATIC_ZIP = static
    try:
        st = path.stat()
        return dict(scan_file(str(path.parent), path.name, st.st_size, st.st_mtime, full=full, budget=BUDGET))
    finally:
        budget.STATIC_ZIP = before


def _structure_problems(path: Path, structure) -> list[str]:
    """What the quick reader's structure-only object says that torch.load's object does not:
    its containers, values, shapes, strides, dtypes, and the bytes at each tensor's offset."""
    problems: list[str] = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # as the tool's own full load reads (engines/read/load.py): onto the CPU, whatever device
            # the file names (a storage "tagged with cu" loads so; without map_location it would not)
            mapped = torch.load(path, weights_only=True, mmap=True, map_location="cpu")
            plain = torch.load(path, weights_only=True, map_location="cpu")
    except Exception as err:  # noqa: BLE001 - the disagreement itself
        return [f"taken, but torch.load refuses it: {type(err).__name__}: {str(err)[:120]}"]
    data = path.read_bytes()
    _same(structure, mapped, data, "", problems)
    _same(structure, plain, data, "", problems)
    return problems


def _same(ours, theirs, data: bytes, where: str, problems: list[str]) -> None:
    if type(ours) is not type(theirs) and not (isinstance(ours, torch.Tensor) and isinstance(theirs, torch.Tensor)):
        problems.append(f"{where}: {type(ours).__name__} vs {type(theirs).__name__}")
    elif isinstance(theirs, torch.Tensor):
        if (ours.shape, ours.dtype, ours.stride(), ours.requires_grad) != (
                theirs.shape, theirs.dtype, theirs.stride(), theirs.requires_grad):
            problems.append(f"{where}: another shape, dtype, stride or requires_grad")
            return
        # the bytes at the quick reader's offset, seen as torch sees its own tensor
        st = ours.untyped_storage()
        raw = data[st._checkpoint_offset : st._checkpoint_offset + st.nbytes()]
        if len(raw) != st.nbytes():
            problems.append(f"{where}: the storage runs past the file")
            return
        got = torch.frombuffer(bytearray(raw), dtype=torch.uint8) if raw else torch.empty(0, dtype=torch.uint8)
        got = got.view(ours.dtype).as_strided(ours.shape, ours.stride(), ours.storage_offset())
        bits = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[ours.element_size()]
        if not torch.equal(got.view(bits), theirs.detach().view(bits)):
            problems.append(f"{where}: other bytes than torch reads")
    elif isinstance(theirs, dict):
        if list(ours) != list(theirs):
            problems.append(f"{where}: other keys")
        else:
            for k in theirs:
                _same(ours[k], theirs[k], data, f"{where}.{k}", problems)
    elif isinstance(theirs, (list, tuple)):
        if len(ours) != len(theirs):
            problems.append(f"{where}: another length")
        else:
            for i, (a, b) in enumerate(zip(ours, theirs)):
                _same(a, b, data, f"{where}[{i}]", problems)
    elif ours != theirs and not (ours != ours and theirs != theirs):  # NaN equals NaN here
        problems.append(f"{where}: {ours!r} vs {theirs!r}")
