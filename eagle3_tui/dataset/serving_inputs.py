"""The inputs of a serve-check besides the dataset's boundaries: the drafter's config.json and the
target's architecture, read through a Source (local, or the data's SSH box), as `eagle3-tui
serve-check` and the dataset view (ui/dataset/serving_table.py) both read them."""

from __future__ import annotations

from typing import Any

from eagle3_tui.engines.read.json_file import CONFIG_LIMIT, JsonFileError, parse_json
from eagle3_tui.sources.base import Source, SourceError


async def read_config(source: Source, drafter: str, join) -> dict[str, Any]:
    """The drafter's config.json (DRAFTER is the folder or the file), read where the data is."""
    path = drafter if drafter.endswith(".json") else join(drafter, "config.json")
    return await _json(source, path, f"DRAFTER {drafter}")


async def model_arch(source: Source, path: str) -> str | None:
    """The target's architectures[0] (SGLang's rule depends on the model file)."""
    config = await _json(source, path, "--model")
    archs = config.get("architectures")
    return archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else None


async def _json(source: Source, path: str, what: str) -> dict[str, Any]:
    """Read by the Source (a FIFO or device refused unopened, here or on the box), parsed by the
    package's one JSON reader (engines/read/json_file.py: size and depth bounded)."""
    try:
        raw, size = await source.read_head(path, CONFIG_LIMIT)
    except SourceError as err:
        raise SourceError(f"{what}: {err}") from None
    if size > len(raw):
        raise ValueError(f"{what}: {path} is larger than {CONFIG_LIMIT >> 20} MiB, not a config.json")
    try:
        config = parse_json(raw, path)
    except JsonFileError as err:
        raise ValueError(f"{what}: {err}") from None
    if not isinstance(config, dict):
        raise ValueError(f"{what}: {path} holds no JSON object")
    return config
