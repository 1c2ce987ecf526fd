"""Is a --model, --drafter or --tokenizer what it claims to be? Checked once, cheaply, before
anything runs with it: config.json through the checked reader (folder_config), the weights'
names and headers, tokenizer.json parsed. No tensor is read and torch is not imported, so the
TUI runs these in a worker at start and says once what is wrong, instead of every sample failing
with the same cut-off line.

    problem = check_model("/models/llama")     # None, or one line naming the folder and the fault

Standard library only.
"""

from __future__ import annotations

import os

from eagle3_tui.engines.model.drafter import WEIGHT_FILES, fc_aux, layout_of, merged_config, specforge_name
from eagle3_tui.engines.model.drafter_shape import check_names, read_shape
from eagle3_tui.engines.model.folder_config import (
    ConfigError,
    drafter_values,
    read_json,
    read_model_config,
    safetensors_header,
    tokenizer_vocab,
    weight_shapes,
)
from eagle3_tui.engines.read.json_file import TOKENIZER_LIMIT, JsonFileError, read_json_file
from eagle3_tui.engines.read.sample import SampleError
from eagle3_tui.engines.read.tokens import TokenizerError, tokenizer_file


def check_folders(model: str | None, drafter: str | None) -> dict[str, str]:
    """"model" / "drafter" -> one line of what is wrong with it, for the folders given (the
    TUI's start-up check; on an SSH box the agent runs it next to the folders)."""
    problems: dict[str, str] = {}
    if model and (p := check_model(model, for_drafter=drafter is not None)):
        problems["model"] = p
    if drafter and (p := check_drafter(drafter)):
        problems["drafter"] = p
    return problems


def check_model(folder: str, *, for_drafter: bool = False) -> str | None:
    """A Hugging Face decoder folder: config.json checked, its sizes against the weights'
    headers (read_model_config); for a drafter, safetensors to borrow the LM head from."""
    try:
        read_model_config(folder)
        shapes = weight_shapes(folder)
    except (ConfigError, SampleError, OSError) as err:
        return str(err).splitlines()[0]
    if shapes is not None and "fc.weight" in {_specforge_name(n) for n in shapes}:
        return f"model {folder}: holds a drafter's weights (fc.weight), not the target model's"
    if for_drafter and not (os.path.isfile(os.path.join(folder, "model.safetensors"))
            or os.path.isfile(os.path.join(folder, "model.safetensors.index.json"))):
        return f"model {folder}: no model.safetensors or model.safetensors.index.json (the drafter reads the LM head there)"
    return None


def check_drafter(folder: str) -> str | None:
    """An EAGLE-3 drafter folder: config.json with the values the loader uses, and a weights file
    whose names (a safetensors header) are every one applied by the forward its config describes
    (drafter_shape.py)."""
    where = f"drafter {folder}"
    if not os.path.isdir(folder):
        return f"{where}: {'no such folder' if not os.path.exists(folder) else 'not a folder'}"
    try:
        config = read_json(os.path.join(folder, "config.json"), where)
        cfg = merged_config(config)
        values = drafter_values(where, cfg)
    except (ConfigError, SampleError) as err:
        return str(err).splitlines()[0]
    if not any(os.path.isfile(os.path.join(folder, name)) for name in WEIGHT_FILES):
        return f"{where}: no drafter weights (looked for {' or '.join(WEIGHT_FILES)})"
    file = os.path.join(folder, WEIGHT_FILES[0])
    if os.path.isfile(file):  # safetensors: its names are in the header (a .bin is not opened here)
        try:
            header = {specforge_name(n)[0]: v for n, v in safetensors_header(file).items() if n != "__metadata__"}
            layouts = {layout for _, layout in map(specforge_name, safetensors_header(file)) if layout is not None}
        except SampleError as err:
            return str(err).splitlines()[0]
        if "fc.weight" not in header:
            return f"{where}: not an EAGLE-3 drafter: its weights hold no fc.weight (a target model?)"
        fc = header["fc.weight"].get("shape") if isinstance(header["fc.weight"], dict) else None
        if isinstance(fc, list) and len(fc) == 2 and all(isinstance(x, int) and x > 0 for x in fc):
            specforge = layout_of(config, min(layouts) if layouts else "SpecForge") == "SpecForge"
            try:
                shape = read_shape(where, cfg, set(header), specforge=specforge)
                check_names(where, shape, set(header), fc_aux(where, fc, values.target_hidden or fc[0], shape))
            except (ConfigError, SampleError) as err:
                return str(err).splitlines()[0]
    return None


def _specforge_name(name: str) -> str:
    return specforge_name(name)[0]


def check_tokenizer(path: str) -> str | None:
    """A tokenizer.json, or a folder holding one, whose ids are whole numbers in range."""
    try:
        file = tokenizer_file(path)
        tokenizer_vocab(file, read_json_file(file, TOKENIZER_LIMIT))
    except (TokenizerError, ConfigError, SampleError) as err:
        return str(err).splitlines()[0]
    except JsonFileError as err:
        return f"not a tokenizer.json: {err}"
    return None
