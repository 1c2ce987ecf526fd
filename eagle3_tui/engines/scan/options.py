"""The options of a dataset scan, in one object: every default written once, here.

Shipped to the box with the scan (torch and the standard library only). One ScanOptions travels
from the command line or the dataset view to the pipeline (dataset/pipeline.py), to the source
and the agent (as_request / from_request) and into the cache keys (dataset/cache.py):

    opts = ScanOptions(rows=16, vocab_mapping="/data/vocab_mapping.pt")
    opts.as_request()        # what the agent's "scan" request carries
    opts.record_mode()       # "quick16": which cached records can stand for a fresh read
    opts.findings_key()      # every option that changes a finding, as text for the digest

What a record depends on: full / rows / budget (its statistics: the rows a quick scan reads, and
the rows both depths take the layer signature from), the drafter (its drafter figures; such a
scan reads every file again) and the vocabulary mapping actually used (its draft_vocab counts,
told by the mapping's identity in each record, see mapping_identity). The steps after the scan
(model, accept, accept_files) change findings, never records.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, replace
from typing import Any

#: rows per slot a quick scan reads
DEFAULT_ROWS = 64
#: bytes of a sample a quick scan reads at most (header, ids, loss mask and the rows): the rows per
#: slot are as many of `rows` as fit, so a wide sample gets fewer, a sample that fits whole every row
DEFAULT_BUDGET = 512 << 10
#: files scored per group by `scan --accept` and the dataset view's acceptance
ACCEPT_FILES = 4
#: files handed to a worker at a time: amortises inter-process overhead, keeps records flowing
CHUNK_FILES = 16
#: seconds one file may take in a scan worker before the worker is stopped and the file named in
#: the results ("took longer than"; engines/scan/pool.py), so a read that never ends (a hostile
#: file, a reader's bug) costs one worker a minute, not the scan. The slowest honest read without a
#: drafter: a 1 GiB sample (the gzip cap, load.MAX_GZIP_BYTES) gunzipped, mapped and read in full
#: (measured 2.4 s for 224 MiB of random bf16 on one core here, so ~11 s) or read cold at 100 MB/s
#: (~10 s): 60 s leaves a busy machine three times that. scan_tree(time_limit=) sets another
#: (math.inf: none).
FILE_SECONDS = 60.0
#: the same when a drafter scores every row of every file (scan --drafter --full): by its shapes an
#: 8B-class drafter (H 4,096, MLP 14,336, draft vocabulary 32k) costs ~0.85 GFLOP a row, ~10 ms on
#: one core at the 85 GFLOPS torch's fp32 matmul gets here (measured), so ~80 s for an 8k-token
#: sample; a 70B-class one (H 8,192) about four times that
DRAFTER_FILE_SECONDS = 600.0
#: bytes a scan worker may take for one file besides what it held once started (its copy of the
#: parent: torch, ~220 MiB) and the file's own size rounded up to 64 MiB (torch.load(mmap=True)
#: maps the file, and RLIMIT_DATA counts that private writable mapping: a 224 MiB sample needs
#: 232 MiB to be read, quick or full). An allocation past it fails in the worker ("out of memory
#: while reading the file") instead of taking the machine. What honest files need on top of their
#: size: the full scan's blocks (8 MiB), a .ckpt.gz's expansion, mapped whole (at most
#: MAX_GZIP_BYTES, 1 GiB), a full --drafter scan of an 8k-token sample (by its shapes: the MLP's
#: two T x 14,336 and the T x 4,096 states in fp32, ~2 GiB); 4 GiB is twice the largest. Two
#: workers (this 24 GiB, 2-core machine's pool) on two hostile files at once then hold 8 GiB at
#: most, a third of it.
FILE_MEMORY = 4 << 30


@dataclass(frozen=True)
class ScanOptions:
    full: bool = False
    rows: int = DEFAULT_ROWS
    budget: int = DEFAULT_BUDGET  # scan --budget: bytes a quick scan reads of a sample at most
    workers: int | None = None  # None: every core of the machine holding the data
    drafter: str | None = None  # scan --drafter: per-file drafter top-1; with model, the layers' drafter too
    drafter_per_file: bool = True  # False: the drafter serves the layers step only (the dataset view)
    model: str | None = None  # scan --model: the layers; with a drafter also its embed_tokens
    vocab_mapping: str | None = None  # else a vocab_mapping.pt found in the tree
    accept: str | None = None  # scan --accept: τ per group of files
    accept_files: int = ACCEPT_FILES
    use_cache: bool = True
    minority: float = 0.01  # scan --model: the share of files at other layers that the check must see (99%)
    identify_all: bool = False  # scan --model --identify-all: every usable file, not a sample
    #: records carry the pairing print (engines/scan/pairprint.py); only `pair` asks for it: its
    #: projection is ~20% of a quick scan's CPU and its ~3 KB would ride every record home
    pair: bool = False

    # --------------------------------------------------------------- to the box and back

    @property
    def drafter_pair(self) -> tuple[str, str | None] | None:
        """(drafter folder, model folder or None) as the per-file scan takes it."""
        return (self.drafter, self.model) if self.drafter and self.drafter_per_file else None

    def as_request(self) -> dict[str, Any]:
        """What the per-file scan needs (the agent's request, Source.scan's keywords)."""
        return {"full": self.full, "rows": self.rows, "budget": self.budget, "workers": self.workers,
                "drafter": list(self.drafter_pair) if self.drafter_pair else None,
                "vocab_mapping": self.vocab_mapping, "pair": self.pair}

    @classmethod
    def from_request(cls, req: dict[str, Any]) -> ScanOptions:
        drafter = req.get("drafter") or None
        return cls(full=bool(req.get("full")), rows=int(req.get("rows") or DEFAULT_ROWS),
                   budget=int(req.get("budget") or DEFAULT_BUDGET), workers=req.get("workers"),
                   drafter=drafter[0] if drafter else None,
                   model=drafter[1] if drafter else None, vocab_mapping=req.get("vocab_mapping"),
                   pair=bool(req.get("pair")))

    def with_(self, **changes: Any) -> ScanOptions:
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    # --------------------------------------------------------------- cache keys

    def record_mode(self) -> str:
        """The depth of a record, and what picked its rows (the layer signature of both depths
        comes from the rows a quick scan with these rows and budget reads)."""
        return f"{'full' if self.full else 'quick'}{self.rows}b{self.budget}"

    def findings_key(self) -> str:
        """Every option the cached findings (dataset/findings.py over the records) depend
        on, the records' own variants aside. The steps after them (model, accept) add their
        findings each time and are left out: the CLI and the dataset view share the entry."""
        return repr((self.full, self.rows, self.budget, self.drafter_pair, self.vocab_mapping))


_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20,
          "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30}


def parse_size(text: str) -> int:
    """Bytes of a size as a user writes it: 512K, 2M, 1.5MiB, 65536 (K, M, G are powers of 1024).
    Raises ValueError with a one-line reason."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]*)\s*", text or "")
    unit = m.group(2).upper() if m else None
    if m is None or unit not in _UNITS:
        raise ValueError(f"{text!r}: expected a size such as 512K, 2M or 65536 (bytes)")
    value = int(float(m.group(1)) * _UNITS[unit])
    if value < 4096:
        raise ValueError(f"{text!r}: at least 4K (one page) is needed")
    return value


def format_size(n: int) -> str:
    """512K, 2M, 1.5M: a size as --budget takes it."""
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.4g}{unit}"
    return str(n)


def mapping_identity(path: str | None) -> str | None:
    """Which vocabulary mapping a record's draft_vocab counts came from: its path, size and
    mtime (a mapping rewritten in place is another mapping)."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{os.path.abspath(path)}:{st.st_size}:{st.st_mtime_ns}"


def file_time_limit(full: bool, drafter: bool) -> float:
    """The seconds a scan worker gives one file by default (FILE_SECONDS, DRAFTER_FILE_SECONDS
    when a drafter scores every row)."""
    return DRAFTER_FILE_SECONDS if full and drafter else FILE_SECONDS


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def bounded_workers(requested: int | None, files: int) -> int:
    """Processes a scan of `files` files starts: what was asked (else every core), never more
    than the cores nor than the chunks of work (one process per CHUNK_FILES files)."""
    chunks = max(1, -(-files // CHUNK_FILES))
    return max(1, min(requested or default_workers(), default_workers(), chunks))
