"""What accept returns (engines/model/accept.py): the drafter's acceptance on one sample, its
per-row guesses and what it says of the drafter it ran."""

from __future__ import annotations

from typing import TypedDict


class AcceptOptions(TypedDict, total=False):
    """accept_file's keyword options (engines/model/accept.py), as a Ray actor is handed them."""

    model: str | None
    steps: int
    all_rows: bool
    order: list[int] | None
    ids_from: str

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

class AcceptFigures(TypedDict):
    """The same drafts scored against another kind of targets (accept's "against_ids")."""

    top1: float | None
    steps: list[float | None]
    tau: float | None
    rows: int


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
    target_source: str  # "model": the target model's own next token (its head on the sample's post-norm
    # final state); "ids": the data's next token ids
    against_ids: AcceptFigures  # with "model" targets: the same drafts against the data's next ids
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
