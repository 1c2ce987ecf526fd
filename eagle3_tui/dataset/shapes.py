"""The shapes of what the dataset pipeline hands on, from the engines' records (engines/results/)
to the CLI's report and the dataset view: the record as it travels (a ScanRecord, or a cached one
kept undecoded), the files the layers and acceptance steps choose, and the entries they report
(the JSON "layers" and "acceptance" of `scan --json`).

Types only: nothing here runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict, final

from eagle3_tui.engines.results.errors import ErrorResult
from eagle3_tui.engines.results.scan import ScanRecord


@final  # no further keys: `"progress" in item` tells a record from the scan's progress
class DatasetRecord(ScanRecord, total=False):
    """A record as dataset/stream.py yields it: a ScanRecord, or with lazy=True a cached one kept
    undecoded, {"path", "size", "mtime", "mode", "variant", "cached", "raw"} (full_record decodes it)."""

    variant: str | None  # the cache's variant of the record (dataset/cache.py record_variant)
    raw: str  # the record's JSON text as stored
    lost: bool  # scan --ray: a file whose task was lost (engines/scan/ray_tasks.py), never cached


class Pick(TypedDict, total=False):
    """A file the layers step identifies (layers.choose, verify.verify_picks)."""

    group: str  # "majority" | "layer_group" | "shard" | "suspect" | "sample"
    label: str
    path: str
    files: int  # files of its group
    paths: list[str]  # the group's files, for findings
    range: list[int] | None  # a layer_group's first and last index
    shard: str


class VerifyPlan(TypedDict):
    """How the layers step verifies the rest (verify.verify_picks), said by layers_checked."""

    suspects: int
    drawn: int
    pool: int
    minority: float
    confidence: float
    all: bool


class LayerSlot(TypedDict, total=False):
    label: str | None
    boundary: int | None
    norm: str  # "post" (kept only when set)
    status: str | None
    cosine: float | None
    norm_ratio: float | None
    margin: float | None
    second: object  # identify's runner-up, as it gave it
    fault: str  # kept only when set


class LayerFinal(TypedDict, total=False):
    norm: str | None
    boundary: int | None
    status: str | None
    cosine: float | None
    norm_ratio: float | None


class ReadingFit(TypedDict):
    ids: list[int]
    ids_from: str
    reading: str  # "output" | "input" | "hf_hidden_states"


class Reading(TypedDict):
    """The layer ids each convention needs to land on a group's boundaries (layers._reading)."""

    output_of: list[int] | None
    input_of: list[int] | None
    fits: list[ReadingFit]


class DrafterReading(TypedDict, total=False):
    error: str  # the drafter did not load
    ids: list[int]
    ids_from: str
    follows: list[str]  # the readings that give the boundaries
    agrees: bool  # with the majority's reading


class LayersEntry(TypedDict, total=False):
    """One group of `scan --model` (layers.report): the JSON "layers" entry, and what the CLI's
    report, the dataset view and serve-check read."""

    group: str
    label: str
    files: int
    range: list[int] | None
    paths: list[str]  # the representative
    computed: str | None
    error: str  # not identified
    layers: int  # decoder layers of the model
    tokens: int | None
    boundaries: list[int | None]  # per slot; L + 1 for the final norm's output
    slots: list[LayerSlot]
    final: LayerFinal | None
    reading: Reading | None
    drafter: DrafterReading
    offset: int | None  # boundaries deeper (+) or lower (-) than the majority's
    same_as_majority: bool


class AcceptGroup(Pick, total=False):
    """A group of the acceptance plan (acceptance.choose_files): a Pick with the paths to score."""

    score: list[str]


class AcceptScore(TypedDict, total=False):
    """One file scored (acceptance.score): the part of Source.accept's answer the report keeps."""

    path: str
    top1: float | None
    tau: float | None
    steps: list[float | None]
    rows: int
    error: str
    computed: str
    shape: str  # the drafter's ("SpecForge, 1 layer, 3 aux states, draft vocab 320")
    targets: str  # what it was scored against: "model" or "ids" (engines/model/accept_words.py)


class AcceptanceEntry(TypedDict, total=False):
    """One group of `scan --accept` (acceptance.report): the JSON "acceptance" entry."""

    group: str
    label: str
    range: list[int] | None
    files: int
    scored: int
    paths: list[str]
    top1: float | None
    tau: float | None
    steps: list[float | None]
    computed: str | None
    errors: list[ErrorResult]
    drop: float  # points below the majority
    shape: str  # the drafter's, as its files' results say
    targets: list[str]  # what its files were scored against: "model" and/or "ids"


class LayerRun(TypedDict):
    """A stretch of files whose signatures depart from the rest (dataset/layer_group.py)."""

    run: list[int]  # positions in the rows searched
    p: float
    col: int  # the feature that departs most
    effect: float  # in robust SDs
    inside: float  # the feature's mean inside the run
    rest: float  # and over the rest


class LayerRuns(TypedDict):
    runs: list[LayerRun]
    rest: int  # files left outside every run


#: the layer_group search: (signature values per file, shard number per file) -> the runs; in this
#: process (layer_group.in_process) or in a child (findings_child.ChildRuns)
LayerSearch = Callable[[list[list[float]], list[int]], LayerRuns]
