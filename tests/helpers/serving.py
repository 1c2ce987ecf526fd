"""Drafters for serve-check's tests: a folder holding only the config.json an engine reads."""

from __future__ import annotations

import json
from pathlib import Path


def drafter(tmp_path: Path, config: dict) -> Path:
    """tmp_path/drafter/config.json of an EAGLE-3 drafter with `config`'s keys."""
    folder = tmp_path / "drafter"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLMEagle3"], **config}))
    return folder
