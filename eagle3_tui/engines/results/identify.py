"""What identify returns (engines/model/identify.py): each slot against the target model's
boundaries, the layer-id conventions, and the briefs summary --model and compare --model carry."""

from __future__ import annotations

from typing import TypedDict

from eagle3_tui.engines.results.findings import Finding


class RunnerUp(TypedDict):
    """The column (or catalogue state) that came second: how sure a match is."""

    boundary: int | str  # b, or "post" for the final norm's output
    cosine: float | None

class CaptureFault(TypedDict, total=False):
    """A state of the capture-fault catalogue (engines/model/capture_faults.py) that a part holds
    instead of a boundary: a candidate, then the fault record with the numbers that prove it."""

    kind: str  # "lag" | "normalized" | "mid" | "attn" | "mlp" | "branches"
    cosine: float
    shift: int  # lag: rows late (> 0) or early (< 0)
    boundary: int | str  # lag: the boundary shifted ("post": the final norm's output)
    layer: int  # the in-layer kinds: the decoder layer
    short: str  # "lag+1 b=12", "norm L3", ...
    distance: float  # 1 - cosine
    tolerance: float
    second: dict[str, str | float] | None  # {"state", "cosine"} of the runner-up state
    margin: float | None

class IdentifiedPart(TypedDict, total=False):
    """One slot (or the final state) of `identify --json` (engines/model/identify_verdicts.py)."""

    label: str
    boundary: int | None  # the boundary it holds (a lag's own boundary too)
    cosine: float | None
    norm_ratio: float | None
    nearest: int | str  # the closest column when nothing matched ("post": after the final norm)
    distance: float | None
    tolerance: float
    second: RunnerUp | None
    margin: float | None
    status: str  # "match" | "scaled" | "inexact" | "noisy" | "unmatched" | "lag" | "normalized" | ...
    fault: CaptureFault
    norm: str | None  # "post" for a slot (or a final state) after the final norm, "pre" for a final before it
    said: int | None  # the boundary the file names

class IdentifiedBrief(TypedDict, total=False):
    """The part of an identified slot the other views show (identify.py brief)."""

    boundary: int | None
    cosine: float | None
    status: str | None
    second: RunnerUp
    margin: float | None
    norm: str
    nearest: int | str
    fault: CaptureFault

class ConventionReading(TypedDict):
    """One reading of one set of layer ids (engines/model/conventions.py)."""

    ids: list[int]
    ids_from: str  # "SpecForge default ids", "eagle_config.eagle_aux_hidden_state_layer_ids", ...
    reading: str  # "output" | "input" | "hf_hidden_states"
    describe: str
    boundaries: list[int]

class Conventions(TypedDict):
    """identify's "conventions": every reading of the layer ids tried, against L layers."""

    layers: int
    readings: list[ConventionReading]

class PairExplanation(TypedDict):
    """Why A and B sit at different boundaries: one set of ids read two ways (conventions.explain_pair)."""

    ids: list[int]
    ids_from: str
    a: str  # A's reading
    b: str
    message: str

class ConventionBrief(TypedDict):
    """What a brief keeps of the layer_convention finding (identify.py brief)."""

    follows: str | None  # "output" | "input" | "hf_hidden_states" | "mixed" | None (no reading fits)
    ids: list[int] | None
    ids_from: str | None
    message: str | None

class IdentifyBrief(TypedDict, total=False):
    """What summary --model and compare --model carry of an identification (identify.py brief),
    or {"model", "error"}."""

    model: str | None
    layers: int | None
    tokens: int | None
    slots: list[IdentifiedBrief]
    final: IdentifiedBrief | None
    convention: ConventionBrief | None  # the layer_convention finding's follows, ids, ids_from, message
    findings: list[Finding]  # severity, code, message of the warnings and errors
    error: str
    # summary["identify"] (identify.py attach) also keeps the identify result's own facts
    path: str
    schema: str
    hidden: int
    dtype: str
    tolerance: float
    conventions: Conventions | None
    assumptions: list[str]
    matrix: list[list[float | None]]
    computed: str
    device: str

class ForwardInfo(TypedDict, total=False):
    """What one forward of the target model ran on (engines/model/identify_run.py score_states)."""

    device: str
    model_dtype: str
    tokens_run: int
    catalogue_rows: int

class IdentifyPair(TypedDict, total=False):
    """compare --model's "identified": both sides' briefs (identify.py identify_pair), or {"model", "error"}."""

    model: str
    a: IdentifyBrief
    b: IdentifyBrief
    b_ids_from: str  # "a": B had no ids and ran on A's
    explained: PairExplanation | None
    error: str

class IdentifyOptions(TypedDict, total=False):
    """identify_file's keyword options (engines/model/identify.py), as a Source and a Ray actor pass them on."""

    drafter: str | None
    tokens: int | None
    device: str
    ids_from: str | None
    slots: int | None
    hidden: int | None

class IdentifyResult(TypedDict, total=False):
    """`identify --json` (engines/model/identify.py): every slot against the model's boundaries,
    or {"path", "model", "error"}."""

    path: str
    model: str
    layers: int  # decoder layers of the model
    schema: str
    tokens: int  # rows the model ran on
    hidden: int
    dtype: str
    tolerance: float  # 1 - cosine a capture's noise can reach
    slots: list[IdentifiedPart]  # per slot: boundary, cosine, norm_ratio, status, second, said, fault
    final: IdentifiedPart | None  # norm ("pre" | "post" | None), cosine, boundary, status
    conventions: Conventions | None  # the layer-id convention the slots follow
    findings: list[Finding]
    assumptions: list[str]
    matrix: list[list[float | None]]  # mean cosine of slot i against boundary b
    error: str
    computed: str
    drafter_error: str  # dataset/layers.py: the drafter did not load, the model's boundaries are still here
    not_sample: bool  # error_result's, for a readable file that is not a sample
    contents: dict[str, str]
    # the forward's facts (identify_run.py score_states)
    device: str
    model_dtype: str
    tokens_run: int
    catalogue_rows: int
