"""The shapes of what the engines return (JSON-ready dicts), and the one way to build an error
and a finding.

Every engine (summary, compare, identify, accept, scan) answers with a plain dict, so that the
remote agent can send it as one JSON line and the CLI can print it as it is; these TypedDicts
say what those dicts hold, and the engines, the sources and the views use them in their
signatures. A file that cannot be used is always {"path", "error"} (+ "not_sample" and
"contents" for a readable file that is not a sample), made by `error_result`, whatever engine
met it (from a SampleError or NotASample, declared here, one floor above the finding codes, the
only module of the package it imports); a finding is always {"code", "severity", "message", ...details}, made by `finding`.

Standard library only (shipped to the remote box with the engines).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict, Union, cast

from eagle3_tui.engines.finding_codes import CODES


class SampleError(Exception):
    """A file could not be read as a hidden-state sample. The message is one line for the user."""


class NotASample(SampleError):
    """A readable file that holds something other than hidden states (e.g. a vocab mapping)."""

    def __init__(self, message: str, contents: dict[str, str]):
        super().__init__(message)
        #: key -> "shape dtype" description, for showing what the file does contain
        self.contents = contents


class Cancelled(Exception):
    """The caller set the cancel event (a summary, a comparison, identify, accept or a scan stops)."""


Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}


class Finding(TypedDict, total=False):
    code: str  # e.g. "slot_mismatch"; engines/finding_codes.py registers every one
    severity: Severity
    message: str  # one sentence with the numbers that prove it
    # plus details that depend on the code (slots, factor, offset, ...); those the dataset's
    # readers use (dataset/marks.py, verify.py, layers.py) are named:
    paths: list[str]  # the files it names (relative to the scanned root)
    groups: list[list[str]]  # or the groups of files it names
    range: list[int] | None  # layer_group: the first and last file index of the run
    scores: list[float | None]  # signature_outliers: each path's score
    agree: list[str]  # layers_checked: suspects found at the majority's boundaries
    verified: bool  # signature_outliers: every file it named was found at the majority's layers
    group: str  # the layers' and acceptance's findings: the group of files they are about
    follows: str | None  # layer_convention: the reading the slots follow ("output", "input", "mixed", ...)
    ids: list[int]  # layer_convention: the layer ids read
    ids_from: str  # layer_convention: where they were found
    a_id: int  # token_divergence: the ids where A and B part (engines/compare/align.py)
    b_id: int
    a_text: str  # with a tokenizer (engines/read/tokens.py annotate_comparison)
    b_text: str


def finding(code: str, severity: Severity, message: str, **details: Any) -> Finding:
    """{"code", "severity", "message", **details}: the one way a finding is built.

    The code must be registered (engines/finding_codes.py) and raised no more severely than its
    entry says: every command's findings pass here, so a new code nobody registered, or an error
    raised where the registry (and docs/findings.md) promise a warning, fails the first test that
    meets it instead of reaching a user's screen untitled."""
    entry = CODES.get(code)
    if entry is None:
        raise ValueError(f"finding code {code!r} is not in engines/finding_codes.py")
    if SEVERITY_ORDER[severity] < SEVERITY_ORDER[entry.severity]:
        raise ValueError(f"finding {code!r} raised as {severity!r}; the registry says at most {entry.severity!r}")
    return {"code": code, "severity": severity, "message": message, **details}  # type: ignore[typeddict-item]


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


class OutOfVocab(TypedDict, total=False):
    """A loss token the draft vocabulary lacks (engines/model/vocab.py sample_vocab)."""

    index: int  # its row
    id: int
    text: str  # with a tokenizer


# "in" is a keyword: the functional form
SampleVocab = TypedDict("SampleVocab", {
    "file": str, "draft": int, "target": int,  # the vocab_mapping.pt and its two sizes
    "in": int, "out": int,  # loss tokens inside / outside the draft vocabulary
    "coverage": "float | None", "oov": "list[OutOfVocab]",  # the first SHOW_OOV outside
})


class IdentifyOptions(TypedDict, total=False):
    """identify_file's keyword options (engines/model/identify.py), as a Source and a Ray actor pass them on."""

    drafter: str | None
    tokens: int | None
    device: str
    ids_from: str | None
    slots: int | None
    hidden: int | None


class AcceptOptions(TypedDict, total=False):
    """accept_file's keyword options (engines/model/accept.py), as a Ray actor is handed them."""

    model: str | None
    steps: int
    all_rows: bool
    order: list[int] | None
    ids_from: str


class TextRun(TypedDict, total=False):
    """One run of a summary's "runs" (engines/read/tokens.py TokenText.runs): equal loss mask over
    the valid rows, decoded as one piece; the padding as one run with "pad" and no text."""

    start: int
    end: int  # exclusive
    loss: bool
    text: str
    pad: bool  # the trailing padding


class LossSpan(TypedDict):
    """A maximal run of loss mask 1, decoded as one piece (a summary's "loss_spans")."""

    start: int
    end: int
    text: str


class VocabFileInfo(TypedDict):
    """What a vocab_mapping.pt holds (engines/read/vocab_file.py describe_file), in the summary of
    this non-sample."""

    draft: int
    target: int
    share: float | None  # of the target vocabulary
    identity: bool  # draft == target
    first_ids: list[int]  # the target ids of the first draft ids


class AcceptToken(TypedDict, total=False):
    """accept's step 1 on one scored row (engines/model/accept.py _per_token)."""

    row: int
    target: int  # ids[row + 2]
    draft: int  # the drafter's guess
    p: float  # its probability
    hit: bool
    accepted: int  # draft tokens accepted from this row on
    target_text: str | None  # with the model's vocabulary, or a tokenizer (engines/read/tokens.py)
    draft_text: str | None


class DrafterInfo(TypedDict):
    """What accept says of the drafter it ran (engines/model/drafter.py Drafter.describe)."""

    path: str
    layout: str  # "SpecForge" | "speculators" | "ModelOpt"
    shape: str  # Drafter.words
    layers: int
    hidden: int
    target_hidden: int
    k: int
    heads: int
    kv_heads: int
    vocab: int
    draft_vocab: int
    fc_norm: bool
    norm_before_fc: bool
    norm_before_residual: bool
    logits_normed: bool
    feed_normed: bool
    embed_from: str
    notes: list[str]


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
    error: str


# "in" is a keyword: the functional form. A scan record's loss tokens in/out of the draft
# vocabulary (engines/model/vocab.py loss_counts), with the mapping's identity (records.py)
DraftVocabCounts = TypedDict("DraftVocabCounts", {"in": int, "out": int, "mapping": str}, total=False)


class ScanVocabPart(TypedDict, total=False):
    """The part of a scan record engines/model/vocab.py scan_counts owns (nothing without a mapping)."""

    draft_vocab: DraftVocabCounts


class FolderCheck(TypedDict):
    """The agent's check_folders answer (sources/agent.py): engines/model/folder_check.py's
    problems, "model" | "drafter" -> one line."""

    problems: dict[str, str]


class Runtime(TypedDict):
    """Which Python and torch computed a source's results (engines/read/torch_gate.py runtime,
    Source.runtime): summary --json, scan --json's summary, the TUI header."""

    computed: str  # "local" | "remote"
    python: str | None
    executable: str | None
    torch: str | None  # its version, None without torch
    pickles: str  # "loaded safely" | "refused (torch below 2.10)" | "loaded unsafely (--trust-data)" | ...


class ErrorResult(TypedDict, total=False):
    path: str
    error: str  # one line for the user
    not_sample: bool  # a readable file holding something else (vocab_mapping.pt)
    contents: dict[str, str]  # key -> "shape dtype", for a non-sample
    computed: str  # "local" | "remote"


class PartSummary(TypedDict, total=False):
    index: int
    label: str  # "aux0", ..., "final"
    boundary: int | None
    norms: list[float | None]  # one per token
    norm_mean: float | None
    norm_min: float | None
    norm_max: float | None
    mean: float | None
    std: float | None
    min: float | None
    max: float | None
    absmax: float | None
    nan: int
    inf: int
    first_nonfinite_row: int | None
    first: list[list[float | None]]  # first_k values per token
    dtype: str
    identified: IdentifiedBrief  # summary --model: the boundary the model finds (identify.py attach)
    boundary_note: str | None  # e.g. "L" when b is the last boundary but L is unknown


class Summary(TypedDict, total=False):
    """`summary --json`: one file."""

    path: str
    schema: str
    tokens: int
    valid_tokens: int
    hidden: int
    dtype: str
    k: int  # number of slots
    first_k: int
    slots: list[PartSummary]
    final: PartSummary | None
    final_norm: str | None  # "pre" | "post"
    ids: list[int] | None
    mask: list[int] | None
    loss_mask: dict[str, int] | None  # {"ones", "total"}
    padding: dict[str, int]  # {"trailing", "nonzero_hidden"}
    assumptions: list[str]
    warnings: list[str]
    computed: str
    # with a tokenizer (engines/read/tokens.py)
    text: list[str]
    runs: list[TextRun]  # the whole sample's text, run by run (the sample view's text)
    loss_spans: list[LossSpan]
    text_error: str
    tokenizer: str  # the tokenizer.json the text is from
    # with a model (engines/model/identify.py summarize_identified): {"model", ...} or {"model", "error"}
    identify: IdentifyBrief
    # a file that cannot be summarised: {"path", "error"} (error_result)
    error: str
    not_sample: bool
    contents: dict[str, str]
    vocab_mapping: VocabFileInfo  # a vocab_mapping.pt: what it holds
    vocab_mapping_error: str
    # with a vocab_mapping.pt (engines/model/vocab.py annotate_summary)
    vocab: SampleVocab
    vocab_error: str


class SideHeader(TypedDict, total=False):
    """One side of a comparison (engines/compare/run.py _header), or {"path", "error", ...}
    (error_result) for a side that cannot be loaded."""

    path: str
    schema: str
    tokens: int
    valid_tokens: int
    hidden: int
    k: int  # number of slots
    dtype: str
    boundaries: list[int | None]
    final: bool  # holds a final state
    final_norm: str | None  # "pre" | "post" | "?" (its own norms contradict its format) | None
    ids: bool
    loss_mask: bool
    assumptions: list[str]
    # a side that cannot be loaded
    error: str
    not_sample: bool
    contents: dict[str, str]


class AlignmentInfo(TypedDict, total=False):
    """How B's rows line up with A's (engines/compare/align.py): B row t is A row t + offset, for
    B rows b_start..b_end-1."""

    method: str  # "ids" | "hidden" | "position"
    offset: int
    length: int  # rows compared (on A's valid rows)
    diverges_at: int | None  # the first B row whose id differs from A's
    a_start: int
    b_start: int
    b_end: int
    on_padding: int  # B rows that land on A's padding: shown, never compared
    ids_offset: int  # the ids' offset, when the hidden states line up at another
    lag_scores: dict[str, float | None]  # lag -> similarity, when the lag search ran


class AlignedIds(TypedDict, total=False):
    """The aligned rows' token ids (and A's loss mask); a tokenizer adds their text."""

    b_start: int
    a_start: int
    count: int
    a_ids: list[int] | None
    b_ids: list[int] | None
    a_loss_mask: list[int] | None
    a_text: list[str]  # with a tokenizer (engines/read/tokens.py)
    b_text: list[str]


class PairMetrics(TypedDict, total=False):
    """One B part against its A part (engines/compare/metrics.py pair_metrics): a slot pair, or
    the final states'. Without a compared row, only the labels, None cosines and the per-token values."""

    a: int | str  # the slot index, or "final"
    b: int | str
    tokens: int  # rows compared
    a_boundary: int | None  # slot pairs only
    b_boundary: int | None
    cos_mean: float | None
    cos_min: float | None
    cos_min_b_row: int
    norm_ratio_mean: float | None
    norm_ratio_median: float | None
    norm_ratio_std: float | None
    a_norm_mean: float | None
    b_norm_mean: float | None
    a_norm_cv: float | None
    b_norm_cv: float | None
    max_abs_err: float | None
    rel_l2_err: float | None
    within_bf16_tol: float | None  # share of values within bf16 tolerance
    worst_b_row: int
    worst_a_row: int
    worst_rel_err: float | None
    excluded_rows: int  # rows left out (NaN/Inf)
    per_token_cos: list[float | None]
    # per compared row, 5 significant digits: both sides' norms and first values
    a_norms: list[float | None]
    b_norms: list[float | None]
    a_first: list[list[float | None]]
    b_first: list[list[float | None]]
    # the final pair: each side's pre/post label
    a_norm: str | None
    b_norm: str | None


class ComparisonResult(TypedDict, total=False):
    """`compare --json`: training sample A against inference capture B."""

    a: SideHeader
    b: SideHeader
    alignment: AlignmentInfo
    slots: list[PairMetrics]  # per slot pair: cosines, norm ratios, errors, per-token values
    final: PairMetrics | None
    matrix: list[list[float | None]]  # mean cosine of B slot j against A slot i
    findings: list[Finding]
    rows: AlignedIds  # aligned ids (and text with a tokenizer)
    error: str  # set (with the failing side's {"path", "error"}) when a side cannot be loaded
    computed: str
    identified: IdentifyPair  # compare --model: both sides against the target model
    # with a tokenizer (engines/read/tokens.py annotate): the tokenizer shown, or why there is no text
    tokenizer: str
    text_error: str  # --tokenizer asked for and could not decode: why (the numbers stay)


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


class AcceptResult(TypedDict, total=False):
    """`accept --json` (engines/model/accept.py): the drafter's acceptance on one sample, or
    {"path", "drafter", "error"}."""

    path: str
    drafter: str
    rows: int  # rows scored
    top1: float | None
    steps: list[float | None]  # acceptance per draft step
    tau: float | None  # mean accepted length
    per_token: list[AcceptToken]  # row, target, draft, p, hit, accepted (+ texts)
    target_source: str
    rows_from: str  # "loss mask" | "all rows"
    valid_tokens: int
    order: list[int] | None
    drafter_info: DrafterInfo
    notes: list[str]
    error: str
    computed: str
    ids_from: str  # the sample whose ids an id-less one borrowed (accept --ids-from)
    text_error: str  # with a tokenizer that cannot decode these ids (engines/read/tokens.py)
    not_sample: bool  # error_result's, for a readable file that is not a sample
    contents: dict[str, str]


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
    stamp: str | None  # inode and ctime (engines/scan/records.py file_stamp): part of the cache key
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


#: the results that carry token text (engines/read/tokens.py annotate): a summary's tokens, a
#: comparison's aligned rows, a drafter's guesses
TextResult = Union[Summary, ComparisonResult, AcceptResult]


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


def error_result(path: str, error: BaseException | str, **extra: Any) -> ErrorResult:
    """{"path", "error", ...} for a file that cannot be used. From an exception: a NotASample
    carries "not_sample" and its "contents"; a MemoryError says so; anything that is not one of
    our own errors keeps its type in the message (a last resort: one line, never a traceback)."""
    out = cast(ErrorResult, {"path": path, **extra})  # extra: what the caller's own shape adds (a scan record's place)
    if isinstance(error, str):
        out["error"] = error
    elif isinstance(error, NotASample):
        out["error"], out["not_sample"], out["contents"] = str(error), True, error.contents
    elif isinstance(error, SampleError):
        out["error"] = str(error)
    elif isinstance(error, MemoryError):
        out["error"] = "out of memory while reading this file"
    else:
        text = str(error).strip()
        text = text.splitlines()[0][:200] if text else ""
        out["error"] = f"unexpected {type(error).__name__} while reading this file: {text}".rstrip(": ")
    return out


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Errors first, then warnings, then notes; the order within a severity is kept."""
    findings.sort(key=lambda f: SEVERITY_ORDER.get(f["severity"], len(SEVERITY_ORDER)))
    return findings


def blocking(findings: list[Finding]) -> bool:
    """Whether any finding is a warning or an error (the commands then exit 1)."""
    return any(f["severity"] in ("warning", "error") for f in findings)


class LiveReport(TypedDict, total=False):
    """serve-check --live's report (engines/live/check.py): the engine, what it fed the drafter and
    what the data holds, per slot, identified; with --accept its counters beside accept's."""

    engine: str
    version: str
    python: str
    ids: list[int] | None  # the aux layer ids the engine set on the target
    fed: list[int | None]  # boundaries of what it fed the drafter, per slot (identified)
    data: list[int | None]  # the training data's, per slot (identified)
    match: bool
    explained: str | None
    cosines: list[dict[str, Any]]  # per slot: the identification's cosines on both sides
    files: list[str]
    memory_gib: float
    seconds: float
    acceptance: dict[str, Any]
    offline: dict[str, Any]
    greedy_same: list[bool]
    error: str  # why the engine could not be run: the report is {"engine", "error"}
    computed: str  # "local" or "remote" (sources/)
