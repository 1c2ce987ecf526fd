"""The fix: the fewest config.json lines that make every engine in force capture what the data
holds, each candidate run through those engines' rules (fc sizes included), and TensorRT-LLM's own
option; what no ids can help is named as such, never claimed."""

from __future__ import annotations

from itertools import product

from eagle3_tui.dataset.serving.capture import TOP, Config, bset, nested
from eagle3_tui.dataset.serving.result import ServingFix, known
from eagle3_tui.dataset.serving.table import Segment, in_force, run
from eagle3_tui.dataset.serving.versions import NAMES, label

#: the target architectures a fix is tried on when --model's config.json names none: one per rule
#: that reads the ids differently
PROBE_ARCHS = ("LlamaForCausalLM", "DeepseekV3ForCausalLM", "GptOssForCausalLM", "Gemma3ForCausalLM",
               "Qwen3MoeForCausalLM", "KimiK3ForConditionalGeneration")
#: how a fix line begins: a line of the drafter's config.json, or TensorRT-LLM's own option
CONFIG_LINE, TRT_LINE = "config.json: ", "TensorRT-LLM (LLM API options): "
#: the line that turns the aux states back on (eagle_config.use_aux_hidden_state false: no ids help)
AUX_ON = CONFIG_LINE + '"eagle_config": {"use_aux_hidden_state": true}  (or delete the key)'

Tries = list[tuple[list[int] | None, list[int] | None]]


def _with(config: Config, top: list[int] | None, nest: list[int] | None) -> Config:
    c = dict(config)
    if top is not None:
        c[TOP] = top
    if nest is not None:
        section = c.get("eagle_config")
        c["eagle_config"] = {**(section if isinstance(section, dict) else {}), TOP: nest}
    return c


def _aux_on(config: Config) -> Config:
    section = config.get("eagle_config")
    if not (isinstance(section, dict) and section.get("use_aux_hidden_state") is False):
        return config
    return {**config, "eagle_config": {k: v for k, v in section.items() if k != "use_aux_hidden_state"}}


def _serves(cfg: Config, L: int, arch: str | None, B: list[int], s: Segment) -> bool:
    got = s.rule(cfg, L, arch)
    fc = got.get("fc_states")
    return (not got.get("fails") and not got["guessed"] and got.get("states") == B and not got.get("graph_states")
            and (fc is None or fc == len(B)))


def _choices(B: list[int]) -> list[list[int]]:
    """Ids to try for boundaries B: all as b, all as b - 1, then (up to 4 slots) each slot either way."""
    out = [B, [b - 1 for b in B]]
    if len(B) <= 4:
        out += [list(c) for c in product(*[(b, b - 1) for b in B])]
    seen: list[list[int]] = []
    for c in out:
        if min(c) >= 0 and c not in seen:
            seen.append(c)
    return seen


def _names(engines: list[str]) -> str:
    names = [NAMES[e] for e in dict.fromkeys(engines)]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


class _Search:
    """The engines in force and how a config fares on them (an engine with two runners in force is
    served only when both capture the data)."""

    def __init__(self, config: Config, L: int, B: list[int], asked: dict[str, str | None] | None) -> None:
        self.config, self.L, self.B = config, L, B
        self.segs = in_force(asked)
        self.engines = list(dict.fromkeys(s.engine for s in self.segs))

    def served(self, cfg: Config, arch: str | None, among: list[str] | None = None) -> list[str]:
        return [e for e in (among or self.engines)
                if all(_serves(cfg, self.L, arch, self.B, s) for s in self.segs if s.engine == e)]

    def hopeless(self, tries: Tries, arch: str | None) -> list[str]:
        """The engines no tried ids make capture the data (a target without aux states or EAGLE-3
        support, a format they cannot read)."""
        return [e for e in self.engines if not any(e in self.served(_with(self.config, t, n), arch, [e])
                                                     for t, n in tries)]


def find_fix(config: Config, want: list[int | None], L: int, arch: str | None,
             asked: dict[str, str | None] | None = None) -> ServingFix:
    """The fewest config.json lines that make every engine in force that reads config.json capture
    the data's boundaries (tried: the top-level and the eagle_config ids, as b and as b - 1), and
    TensorRT-LLM's own option. Without the target's architecture, the lines are tried on one target
    per rule and the message says where they differ; the ranges not in force that read the lines
    otherwise are named."""
    if None in want or L + 1 in want:
        return {"lines": [], "message": "no ids can make an engine capture what the data holds (a slot is post-norm "
                                        "or unidentified)"}
    B = sorted(set(known(want)))
    lines = [AUX_ON] if nested(config, "use_aux_hidden_state") is False else []
    config = _aux_on(config)
    search = _Search(config, L, B, asked)
    choices = _choices(B)
    tries: Tries = [*[(t, None) for t in choices], *[(None, n) for n in choices], *product(choices, choices)]
    hopeless = search.hopeless(tries, arch or None)
    wanted = [e for e in search.engines if e not in hopeless]
    scored = [(len(search.served(_with(config, t, n), arch, wanted) if wanted else []),
               -(t is not None) - (n is not None), i) for i, (t, n) in enumerate(tries)]
    top_score = max(scored)
    best = tries[top_score[2]] if top_score[0] > 0 else None
    if best is not None:
        message = _best(config, best, lines, search, wanted, tries, arch, asked)
    else:
        message = (f"no config.json ids (tried as b and b - 1 per slot, top level and in eagle_config) make "
                   f"{_names(search.engines) or 'an engine'} capture b {bset(B, L)}" + (f" on {arch}" if arch else ""))
    if hopeless:
        message += f"; no ids help {_names(hopeless)} here (see its row)"
    replayed = [s for s in search.segs if s.rule(config, L, arch).get("graph_states")]
    if replayed:
        message += (f"; {_names([s.engine for s in replayed])} before 0.5.11 replays its default layers from its "
                    "CUDA graphs: --disable-cuda-graph feeds the drafter's everywhere (serving_cuda_graph)")
    if "tokenspeed" in search.engines:
        message += "; tokenspeed's server flag --eagle3-layers-to-capture (from 0.1.1), when given, replaces the " \
                   "drafter's ids"
    if min(B) >= 1 and max(B) <= L and (asked is None or "trtllm" in asked):
        trt = f"{TRT_LINE}speculative_config.eagle3_layers_to_capture: {[b - 1 for b in B]}"
        lines.append(trt)
        message += f"; {trt} (it does not read config.json)"
    single = (best is not None and sum(x is not None for x in best) == 1 and AUX_ON not in lines
              and len(search.served(_with(config, *best), arch, wanted)) == len(wanted))
    return {"lines": lines, "message": message, "single": single}


def _best(config: Config, best: tuple[list[int] | None, list[int] | None], lines: list[str], search: _Search,
          wanted: list[str], tries: Tries, arch: str | None, asked: dict[str, str | None] | None) -> str:
    """The chosen lines, added to `lines`, and what they do: who they make capture the data, where
    they do not, the ranges not in force that read them otherwise."""
    B, L = search.B, search.L
    top, nest = best
    if top is not None:
        lines.append(f'{CONFIG_LINE}"{TOP}": {top}  (top level)')
    if nest is not None:
        lines.append(f'{CONFIG_LINE}"eagle_config": {{"{TOP}": {nest}}}')
    ids_lines = [ln for ln in lines if ln != AUX_ON]
    fixed = _with(config, top, nest)
    made = search.served(fixed, arch, wanted)
    prefix = "with use_aux_hidden_state true, " if lines[0] == AUX_ON else ""
    if len(made) == len(wanted):
        what = "this line makes" if len(ids_lines) == 1 else "no single line can; these make"
        message = f"{prefix}{what} {_names(made)} capture b {bset(B, L)}: " + "; ".join(lines)
    else:
        left = _names([e for e in wanted if e not in made])
        message = (f"no config.json ids (tried as b and b - 1 per slot, top level and in eagle_config) make every "
                   f"engine in force capture b {bset(B, L)}: they read the ids under different rules; {prefix}"
                   f"{'this line makes' if len(ids_lines) == 1 else 'these make'} {_names(made)} capture it, not "
                   f"{left}: " + "; ".join(lines))
    if not arch:
        message += _probed(fixed, search, made, tries)
    old = [e for e in run(fixed, L, arch, len(B)) if not e["in_force"] and e["serves"]
           and e["engine"] in search.engines and (e.get("fails") or e["states"] != B)]
    if old and asked is None:
        message += ("; older releases read them otherwise: " + ", ".join(label(e) for e in old)
                    + " (the tool cannot know which release serves)")
    return message


def _probed(fixed: Config, search: _Search, made: list[str], tries: Tries) -> str:
    """Checked without the target's architecture: where the engines read the lines otherwise, and
    which engine no ids help on a probed target (no EAGLE-3 support, no aux states)."""
    other, cannot = [], []
    for a in PROBE_ARCHS:
        unable = search.hopeless(tries, a)
        if unable:
            cannot.append(f"{_names(unable)} on {a}")
        if [e for e in search.served(fixed, a) if e not in unable] != [e for e in made if e not in unable]:
            other.append(a)
    out = " (checked without the target's architecture: --model's config.json names none"
    out += f"; on {', '.join(other)} the engines read them otherwise" if other else \
        "; the same on every architecture the rules tell apart"
    if cannot:
        out += f"; not served at all: {', '.join(cannot)}"
    return out + ")"
