"""Every finding code the package raises, once: its code, the most severe level it is raised at,
its title in a few words (what the views show beside the code) and what it means in one line.

A finding itself is built by `results.finding(code, severity, message, ...)` where it is seen,
which refuses a code not listed here or raised more severely than listed; this is also the list
readers look codes up in (the compare view's titles, the layers step's set of identify's own
codes), and the list tests/test_finding_codes.py holds against the code (every
code raised is here, every code here is raised), docs/findings.md and the README (both ways).
A new code: one line here, one row in docs/findings.md, its mention in the README.

Standard library only (the ground floor of the engines: results/ builds on it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class FindingCode:
    code: str
    #: the most severe level it is raised at (some codes are raised lower when less is at stake)
    severity: Level
    #: a few plain words; the code itself stays visible beside it for searching the docs
    title: str
    #: what it means, one line
    meaning: str
    #: which command (or view) raises it: compare, identify, scan (and its options), serve-check, tui
    raised_by: tuple[str, ...]
    #: False when the files it names are examples of a dataset-wide figure, not files at fault: they
    #: keep their own mark in the browser and the dataset view (dataset/marks.py)
    marks_files: bool = True


def _codes(*entries: FindingCode) -> dict[str, FindingCode]:
    return {e.code: e for e in entries}


_C = FindingCode
_ID = ("identify", "scan --model")  # identify's own findings, lifted to a group by scan --model

CODES: dict[str, FindingCode] = _codes(
    # -- compare: A (training) against B (inference capture)
    _C("slot_mismatch", "error", "slots from other layers",
       "B's slots are not at their A positions: captured at other layers (often one boundary off)", ("compare",)),
    _C("slot_permutation", "error", "slots in another order",
       "B's slots hold A's slots in another, not ascending, order", ("compare",)),
    _C("width_mismatch", "error", "different width",
       "B's k*H differs from A's (aux capture disabled: width H)", ("compare",)),
    _C("token_shift", "error", "rows shifted against the tokens",
       "B's row t holds A's row t + offset: the hidden rows are shifted against the token ids", ("compare",)),
    _C("token_divergence", "error", "token ids diverge",
       "the token ids differ from a position on: template drift, another prompt, or a generated continuation",
       ("compare",)),
    _C("unrelated_sample", "error", "not the same prompt",
       "no B slot resembles any A slot: another request's states", ("compare",)),
    _C("scale_mismatch", "warning", "scaled",
       "the same directions at a constant norm ratio other than 1", ("compare",)),
    _C("norm_mismatch", "error", "before vs after a norm",
       "one side is the other passed through a norm (a per-channel gain maps one onto the other)", ("compare",)),
    _C("nonfinite", "error", "NaN / Inf values",
       "NaN or Inf in the hidden states (compare leaves those rows out; scan names the files)", ("compare", "scan")),
    _C("padding", "warning", "padding taken as tokens",
       "rows B holds as real tokens land on A's padding, or the loss mask is 1 on padding", ("compare",)),
    _C("zero_states", "error", "all-zero states",
       "parts that are exactly zero on the compared rows: a hook that never fired", ("compare",)),
    _C("nothing_compared", "error", "nothing compared",
       "no row was compared and no other error says why: a comparison of nothing never passes", ("compare",)),
    _C("ids_uninformative", "info", "token ids carry nothing",
       "B's token ids are all one value (padding written for ids): aligned by hidden states instead", ("compare",)),
    _C("slots_identified", "info", "identified with the model",
       "with --model: the boundaries each side's slots hold, as the target model's run found them", ("compare",)),
    _C("identify_failed", "warning", "not identified",
       "identify gave an error (no transformers, a model that cannot be used, ids outside its vocabulary)",
       ("compare", "scan --model")),
    _C("capture_fault", "error", "a capture-code fault",
       "with --model: a B slot is an A boundary's state as broken capture code leaves it (no residual, ...)",
       ("compare",)),
    _C("capture_lag", "error", "the capture one token late",
       "every part matches its boundary shifted by the same rows: the whole capture is late or early",
       ("compare", *_ID)),
    # -- identify: a sample against the target model's boundaries
    _C("slot_unmatched", "warning", "slot matches no boundary",
       "a slot is no boundary's state and nothing in the fault catalogue explains it", _ID),
    _C("slot_scaled", "warning", "slot scaled",
       "a slot is a boundary's state in direction at another magnitude", _ID),
    _C("slot_inexact", "warning", "slot near a boundary",
       "a slot is near a boundary but outside the capture's noise, and no fault explains it", _ID),
    _C("slot_ambiguous", "info", "slot matches two boundaries",
       "two boundaries both match a slot; the closer is taken", ("identify",)),
    _C("slot_lag", "warning", "slot shifted by rows",
       "a slot is a boundary's state on shifted rows (row t holds another token's state)", _ID),
    _C("slot_no_residual", "warning", "slot without the residual",
       "a slot is a layer's branch output (attention, MLP) without the residual added", _ID),
    _C("slot_normalized", "warning", "slot after the input norm",
       "a slot is a layer's normalized input (its input_layernorm output), not the residual", _ID),
    _C("slot_mid_layer", "warning", "slot from inside a layer",
       "a slot is the residual inside a layer, after attention and before the MLP", _ID),
    _C("final_unmatched", "warning", "final matches no state",
       "the final state is neither the pre-norm nor the post-norm state, and no fault explains it", _ID),
    _C("final_scaled", "warning", "final scaled",
       "the final state is the pre- or post-norm state at another magnitude", _ID),
    _C("final_norm", "warning", "final's norm side differs",
       "the final state is on the other side of the final norm than the file's schema says", _ID),
    _C("final_lag", "warning", "final shifted by rows",
       "the final state is on shifted rows", _ID),
    _C("final_no_residual", "warning", "final without the residual",
       "the final state is a branch output without the residual", _ID),
    _C("final_normalized", "warning", "final after the input norm",
       "the final state is a layer's normalized input", _ID),
    _C("final_mid_layer", "warning", "final from inside a layer",
       "the final state is the residual inside a layer", _ID),
    _C("boundary_label", "warning", "boundary label wrong",
       "the file labels a slot with a boundary its states do not hold", _ID),
    _C("layer_convention", "warning", "layer ids under another reading",
       "the boundaries are the drafter's layer ids under another convention than the majority's, or none",
       ("identify", "scan --drafter")),
    # -- scan: the dataset as a whole
    _C("unreadable", "error", "files that cannot be read",
       "files that are truncated, corrupt, refused or dead links", ("scan",)),
    _C("layout_mismatch", "error", "files of another layout",
       "files whose k or H (error), dtype or schema (warning) differ from the majority's", ("scan",)),
    _C("layer_group", "warning", "a run of files at other layers",
       "a run of files (in index order) whose layer signature departs from the rest", ("scan",)),
    _C("signature_outliers", "warning", "files standing apart",
       "files whose layer signature stands apart from the bulk, in any order", ("scan",)),
    _C("norm_scale", "warning", "files at another scale",
       "files whose every slot holds the group's states times one factor", ("scan",)),
    _C("empty_loss_mask", "warning", "no loss rows",
       "files whose loss mask is all zero: they train nothing", ("scan",)),
    _C("loss_on_padding", "warning", "loss on padding",
       "files with trailing id-0 rows that carry loss", ("scan",)),
    _C("duplicate", "warning", "duplicate files",
       "files with identical ids and sampled states", ("scan",)),
    _C("missing_index", "info", "indices missing",
       "gaps in a shard's sample indices (SpecForge skips samples: normal)", ("scan",)),
    _C("padding_states", "info", "padding rows with states",
       "files whose padding rows hold non-zero states", ("scan",)),
    # -- scan --model: which boundaries each group of files holds
    _C("layer_shard", "warning", "a shard at other layers",
       "a shard of the majority holds other boundaries", ("scan --model",)),
    _C("layer_minority", "warning", "verified files at other layers",
       "verified files whose boundaries differ from the majority's", ("scan --model",)),
    _C("layers_checked", "info", "layers checked",
       "how many files were identified to verify the layers, and what they agreed on", ("scan --model",)),
    # -- the drafter: accept, scan --drafter / --accept, the draft vocabulary
    _C("low_acceptance", "warning", "files far below the median",
       "files whose drafter top-1 agreement is far below the dataset's median", ("scan --drafter",)),
    _C("group_low_acceptance", "warning", "a group the drafter accepts less",
       "a group's mean top-1 is more than 15 points below the majority's", ("scan --accept",)),
    _C("accept_failed", "warning", "files not scored",
       "files the drafter could not be scored on", ("scan --accept",)),
    _C("draft_vocab_coverage", "warning", "draft vocabulary coverage",
       "the share of loss-masked target tokens the draft vocabulary can propose", ("scan",), marks_files=False),
    # -- serve-check: what each serving engine will capture for the drafter
    _C("serving_mismatch", "warning", "engine captures other layers",
       "an engine (version range) captures other boundaries than the data holds", ("serve-check",)),
    _C("serving_guessed", "warning", "engine guesses the layers",
       "an engine's default, not the drafter, picks the layers: another version may guess otherwise",
       ("serve-check",)),
    _C("serving_post_norm", "warning", "post-norm slot",
       "a slot of the data holds the final post-norm state, which no engine's aux capture yields",
       ("serve-check",)),
    _C("serving_unidentified", "warning", "slot not identified",
       "a slot of the data matched no boundary: no engine can be checked against it", ("serve-check",)),
    _C("serving_norm_before_fc", "warning", "norm before fc",
       "the drafter sets norm_before_fc, which some engines and versions do not apply", ("serve-check",)),
    _C("serving_slot_count", "warning", "slot count differs",
       "the drafter takes another number of states than the data holds", ("serve-check",)),
    _C("serving_no_aux", "error", "no aux states",
       "use_aux_hidden_state is false: the drafter takes the last hidden state, not aux layers", ("serve-check",)),
    _C("serving_bad_ids", "error", "ids that are not layer ids",
       "the drafter's layer ids are not unique non-negative integers: named with what each engine does with them",
       ("serve-check",)),
    _C("serving_fails", "warning", "engine fails on this drafter",
       "an engine (version range) fails to load or run the drafter, or SpecForge refuses to train it",
       ("serve-check",)),
    _C("serving_cuda_graph", "warning", "CUDA graphs replay other layers",
       "an engine records its CUDA graphs with its default layers before it sets the drafter's: graph-replayed "
       "steps feed other layers than the prefill", ("serve-check",)),
    _C("serving_slot_order", "warning", "slots in another order",
       "the data stores its slots out of ascending layer order, the order every engine concatenates them in",
       ("serve-check",)),
    _C("serving_speculators", "warning", "speculators-format config",
       "a speculators-format drafter config: vLLM reads it, SGLang and tokenspeed have no reader for it",
       ("serve-check",)),
    _C("serving_minority", "warning", "a group no config serves",
       "a group of files holds other boundaries than the majority: no config serves both", ("serve-check",)),
    _C("serving_fix", "info", "the config lines that fix it",
       "the fewest config.json lines that make every current engine capture the data's boundaries",
       ("serve-check",)),
    # -- the TUI
    _C("findings_failed", "error", "findings not computed",
       "the dataset view could not compute the findings (the error is the message)", ("tui",)),
)


def title(code: str) -> str:
    """The code in plain words; an unknown code (an older result, a newer agent) as itself."""
    entry = CODES.get(code)
    return entry.title if entry else code


def raised_by(*commands: str) -> tuple[str, ...]:
    """The codes raised by every one of `commands`, in the registry's order."""
    return tuple(c.code for c in CODES.values() if set(commands) <= set(c.raised_by))
