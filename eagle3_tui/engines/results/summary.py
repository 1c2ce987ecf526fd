"""What summary returns (engines/read/stats.py): one file's parts, their norms and first values,
its ids and masks, and with a tokenizer or a vocab mapping their text and coverage."""

from __future__ import annotations

from typing import TypedDict

from eagle3_tui.engines.results.identify import IdentifiedBrief, IdentifyBrief


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
