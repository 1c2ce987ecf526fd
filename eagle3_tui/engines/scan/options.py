"""The options of a dataset scan, in one object: every default written once, here.

Shipped to the box with the scan (torch and the standard library only). One ScanOptions travels
from the command line or the dataset view to the pipeline (dataset/pipeline.py), to the source
and the agent (as_request / from_request) and into the cache keys (dataset/cache.py):

    opts = ScanOptions(rows=16, vocab_mapping="/data/vocab_mapping.pt")
    opts.as_request()        # what the agent's "scan" request carries
    opts.record_mode()       # "quick16": which cached records can stand for a fresh read
    opts.findings_key()      # every option that changes a finding, as text for the digest

What a record depends on: full / rows (its statistics), the drafter (its drafter figures; such a
scan reads every file again) and the vocabulary mapping actually used (its draft_vocab counts,
told by the mapping's identity in each record, see mapping_identity). The steps after the scan
(model, accept, accept_files) change findings, never records.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, replace
from typing import Any

#: rows per slot a quick scan reads
DEFAULT_ROWS = 64
#: files scored per group by `scan --accept` and the dataset view's acceptance
ACCEPT_FILES = 4
#: files handed to a worker at a time: amortises inter-process overhead, keeps records flowing
CHUNK_FILES = 16


@dataclass(frozen=True)
class ScanOptions:
    full: bool = False
    rows: int = DEFAULT_ROWS
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

    # --------------------------------------------------------------- to the box and back

    @property
    def drafter_pair(self) -> tuple[str, str | None] | None:
        """(drafter folder, model folder or None) as the per-file scan takes it."""
        return (self.drafter, self.model) if self.drafter and self.drafter_per_file else None

    def as_request(self) -> dict[str, Any]:
        """What the per-file scan needs (the agent's request, Source.scan's keywords)."""
        return {"full": self.full, "rows": self.rows, "workers": self.workers,
                "drafter": list(self.drafter_pair) if self.drafter_pair else None,
                "vocab_mapping": self.vocab_mapping}

    @classmethod
    def from_request(cls, req: dict[str, Any]) -> ScanOptions:
        drafter = req.get("drafter") or None
        return cls(full=bool(req.get("full")), rows=int(req.get("rows") or DEFAULT_ROWS),
                   workers=req.get("workers"), drafter=drafter[0] if drafter else None,
                   model=drafter[1] if drafter else None, vocab_mapping=req.get("vocab_mapping"))

    def with_(self, **changes: Any) -> ScanOptions:
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    # --------------------------------------------------------------- cache keys

    def record_mode(self) -> str:
        return "full" if self.full else f"quick{self.rows}"

    def findings_key(self) -> str:
        """Every option the cached findings (dataset/findings.py over the records) depend
        on, the records' own variants aside. The steps after them (model, accept) add their
        findings each time and are left out: the CLI and the dataset view share the entry."""
        return repr((self.full, self.rows, self.drafter_pair, self.vocab_mapping))


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
