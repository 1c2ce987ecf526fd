"""norm_before_fc (an RMSNorm over the concatenated aux states before the drafter's fc): which
engine applies it from where the drafter writes it, and the finding that names who ignores it."""

from __future__ import annotations

from eagle3_tui.dataset.serving.capture import Config, nested
from eagle3_tui.engines.results.findings import Finding, finding

#: who reads norm_before_fc, and where: (engine, releases, keys read, source)
NORM_BEFORE_FC: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("vLLM", "0.18.0 ≤ v < 0.22.0", ("top",), "llama_eagle3.py 153 @ vllm 0.18.0"),
    ("vLLM", "0.22.0 ≤ v", ("nested", "top"), "llama_eagle3.py 153-156 @ vllm 0.22.0, 184-188 @ 0.34.0"),
    ("SGLang", "0.5.17 ≤ v", ("nested", "top"), "llama_eagle3.py 165-166 @ sglang 0.5.17, 173-174 @ 0.5.23"),
    ("tokenspeed", "0.1.0 ≤ v", ("top",), "llama_eagle3.py 440-447 @ tokenspeed 0.1.0, 431-438 @ 0.1.1"),
    ("TensorRT-LLM", "", ("nested",), "_torch/models/modeling_speculative.py eagle_config.get(\"norm_before_fc\") "
                                      "(stored index)"),
)


def norm_before_fc(config: Config) -> bool:
    v = nested(config, "norm_before_fc")
    return bool(config.get("norm_before_fc") if v is None else v)


def norm_findings(config: Config) -> list[Finding]:
    """norm_before_fc: who applies it from where it is written, who ignores it (NORM_BEFORE_FC)."""
    keys = {"top": bool(config.get("norm_before_fc")), "nested": bool(nested(config, "norm_before_fc"))}
    if not any(keys.values()):
        return []
    written = " and ".join(k for k, v in (("the top level", keys["top"]), ("eagle_config", keys["nested"])) if v)
    applies = [f"{who} {when}".strip() for who, when, reads, _ in NORM_BEFORE_FC if any(keys[k] for k in reads)]
    ignores = [f"{who} {when}".strip() + f" (reads only {'eagle_config' if reads == ('nested',) else 'the top level'})"
               for who, when, reads, _ in NORM_BEFORE_FC if not any(keys[k] for k in reads)]
    current_ignore = [i for i in ignores if not i.startswith("vLLM 0.18.0")]
    msg = (f"the drafter sets norm_before_fc in {written} (an RMSNorm over the concatenated aux states before fc): "
           f"applied by {', '.join(applies) or 'no engine'}")
    if ignores:
        msg += (f"; ignored by {', '.join(ignores)}: fed without it, acceptance drops though the layers match "
                "(written both at the top level and in eagle_config, every reader applies it)")
    msg += "; vLLM before 0.18.0 and SGLang before 0.5.17 never apply it"
    return [finding("serving_norm_before_fc", "warning" if current_ignore else "info", msg)]
