"""TensorRT-LLM: it never reads the drafter's config.json ids. Read from the stored index of its
repository (its wheel is on pypi.nvidia.com, unreachable where the rules were read): no releases."""

from __future__ import annotations

from eagle3_tui.dataset.serving.capture import Capture, Config, guess

ENGINE = "trtllm"
RELEASES: tuple[str, ...] = ()
SOURCE = ("tensorrt_llm/_torch/speculative/eagle3.py Eagle3OneModelSpecMetadata @ 001e6700, "
          "tensorrt_llm/llmapi/llm_args.py EagleDecodingConfig (stored index; not fetched)")


def rule(config: Config, L: int, arch: str | None, v: str | None = None, variant: str | None = None) -> Capture:
    """The ids come from the LLM API option speculative_config.eagle3_layers_to_capture, never from
    the drafter's config.json; without it (1, L//2-1, L-4), captured after layer id: b = id + 1;
    fc takes as many states as the option names (3 unset)."""
    ids = [1, L // 2 - 1, L - 4]
    return guess(L, "TensorRT-LLM", ids, why=(
        f"TensorRT-LLM does not read the drafter's config.json ids: without the option "
        f"eagle3_layers_to_capture it captures after layers {ids} (b = id + 1)"), depends=(
        "the LLM API option eagle3_layers_to_capture; with eagle3_model_arch=\"mistral_large3\" it defaults to "
        "{-1} (llm_args.py EagleDecodingConfig.validate_eagle_config), which the tool does not model"))
