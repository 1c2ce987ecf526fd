"""What compare returns (engines/compare/run.py): both sides' headers, how B's rows line up with
A's, every part pair's numbers, and the aligned rows' ids."""

from __future__ import annotations

from typing import TypedDict

from eagle3_tui.engines.results.findings import Finding
from eagle3_tui.engines.results.identify import IdentifyPair


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
    """One B part against its A part (engines/compare/pair_metrics.py): a slot pair, or
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
