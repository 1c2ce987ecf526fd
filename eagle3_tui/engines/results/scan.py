"""What scan returns (engines/scan/): one record per file, the most travelled object (from the
workers or the agent to the cache, the findings and the views), and the scan's progress."""

from __future__ import annotations

from typing import TypedDict


class ScanSignature(TypedDict, total=False):
    """A scan record's layer signature (engines/scan/rows.py signature): cheap numbers that tell
    capture layers apart across files."""

    rel_final: list[float | None]  # each slot's norm relative to the final state's
    cos_next: list[float | None]  # the mean cosine between neighbouring slots
    cos_final: float | None
    massive: int  # massive-activation rows set aside

class RecordPrint(TypedDict, total=False):
    """A scan record's "pair" (engines/scan/pairprint.py record_print): what `pair` matches a
    capture on."""

    n: int  # valid rows
    ids: str | None  # the first PAIR_IDS ids, int32 base64
    ids_hash: str | None  # the digest of every valid id
    heads: dict[str, str]  # prefix length -> its digest
    pos: list[int]  # the rows projected
    w: list[int]  # each part's width
    rows: str | None  # int8 [parts, pos, PROJ] base64

class CapturePrint(TypedDict, total=False):
    """What pairing needs of a capture (engines/scan/pairprint.py capture_print, Source.pair_print),
    or {"path", "error"} (error_result)."""

    path: str
    n: int
    ids: list[int] | None  # every valid id (None: no ids, or all one value)
    pos: list[int]
    rows: dict[str, str]  # width -> int8 [parts, pos, PROJ] base64
    tokens: int
    ids_blank: str  # why its ids carry no information (all one value: engines/read/sample.py blank_ids)
    error: str
    not_sample: bool
    contents: dict[str, str]
    computed: str

class ScanAccept(TypedDict, total=False):
    """A scan record's "accept" (engines/scan/agreement.py record_acceptance): the drafter's top-1
    on the file, or {"error"}."""

    top1: float | None
    rows: int  # rows scored
    prefix: int | None  # the rows a quick scan ran on (None: all)
    shape: str  # the drafter's words
    targets: str  # what top1 was scored against: "model" (the target's own next token) or "ids" (accept_words.py)
    error: str

# "in" is a keyword: the functional form. A scan record's loss tokens in/out of the draft
# vocabulary (engines/model/vocab.py loss_counts), with the mapping's identity (records.py)
DraftVocabCounts = TypedDict("DraftVocabCounts", {"in": int, "out": int, "mapping": str}, total=False)

class ScanVocabPart(TypedDict, total=False):
    """The part of a scan record engines/model/vocab.py scan_counts owns (nothing without a mapping)."""

    draft_vocab: DraftVocabCounts

class SlotRecord(TypedDict, total=False):
    """One part (slot or final) in a scan record."""

    norm_mean: float | None
    norm_bulk: float | None  # the mean without the massive-activation rows (engines/scan/rows.py)
    norm_max: float | None
    nan: int
    inf: int
    first_nonfinite_row: int | None

class ScanRecord(TypedDict, total=False):
    """One file of `scan` (engines/scan/records.py and measure.py), the most travelled object:
    from the workers (or the agent, as JSON lines) to the cache, the findings and the views.

    A measured sample holds every field but "error"; a file that cannot be used holds the first
    five, "error" (+ "not_sample"); a file known from the cache comes as a stub {"path", "size",
    "mtime", "cached"}. The source adds "computed"."""

    path: str  # relative to the scanned root
    index: int | None  # N of data_N.ckpt
    shard: str  # relative folder
    size: int | None
    mtime: float | None
    stamp: str | None  # inode and ctime (engines/scan/walk.py file_stamp): part of the cache key
    error: str
    not_sample: bool
    cached: bool
    lost: bool  # scan --ray: its batch did not come back (engines/scan/ray_tasks.py lost_record)
    computed: str  # "local" | "remote"
    mode: str  # "quick" | "full"
    schema: str
    tokens: int
    valid_tokens: int
    padding: int  # trailing padding rows
    padding_nonzero: bool
    masked_zero_tail: int  # loss-masked rows in a trailing run of id 0
    loss_ones: int | None
    k: int  # number of slots
    hidden: int
    dtype: str
    final_norm: str | None
    slots: list[SlotRecord]
    final: SlotRecord | None
    signature: ScanSignature  # rel_final [k], cos_next [k-1], cos_final
    fingerprint: str
    pair: RecordPrint  # the first ids and a few projected rows (engines/scan/pairprint.py)
    rows_read: int
    bytes_read: int
    mapped: bool
    accept: ScanAccept  # scan --drafter: the drafter's top-1 on this file, or {"error"}
    draft_vocab: DraftVocabCounts  # loss tokens in/out of the draft vocabulary, with a mapping

class ScanProgressData(TypedDict, total=False):
    """The scan's progress (engines/scan/records.py ScanProgress.to_json()), shown by the CLI's
    progress line and the dataset view's bar."""

    files_done: int
    files_total: int
    files_read: int  # read this run (not from the cache): the rate is theirs
    bytes_done: int
    bytes_total: int
    bytes_read: int  # counted by the scan (a quick scan reads a part of each file)
    seconds: float
    listing_done: bool  # files_total is final
    workers: int

class ScanProgressItem(TypedDict):
    """What a source's scan yields between records: {"progress": ScanProgress.to_json()}."""

    progress: ScanProgressData
