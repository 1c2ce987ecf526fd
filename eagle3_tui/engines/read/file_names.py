"""What a sample file's name says: the extensions producers give samples, and the natural order the
scan walks folders in (data_2 before data_10). Shared by the scan's walk (engines/scan/records.py)
and the live run's choice of prompts (engines/live/check.py). Standard library only."""

from __future__ import annotations

import re

#: the extensions of the sample files producers write (SpecForge .ckpt(.gz), ModelOpt .pt, ...)
SAMPLE_EXT = (".pt", ".pth", ".ckpt", ".gz", ".safetensors", ".bin")


def natural(name: str) -> tuple:
    """The sort key of `name` in natural order: numbers by value, letters without case."""
    parts: list = re.split(r"(\d+)", name.casefold())
    parts[1::2] = map(int, parts[1::2])
    return (*parts, -1, name)
