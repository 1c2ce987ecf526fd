"""The demo's own table of captures (README.txt: capture | training sample | ...), which the
pairing tests hold `eagle3-tui pair` to."""

from __future__ import annotations

from pathlib import Path


def demo_pairs(demo: Path) -> list[tuple[str, str, bool]]:
    """(capture, training sample, whether the capture holds token ids), paths relative to the demo."""
    out = []
    for line in (demo / "README.txt").read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) == 5 and cells[0].startswith("infer/"):
            has_ids = any(key in cells[3] for key in ("input_ids", "token_ids", "SpecForge schema"))
            out.append((cells[0], cells[1], has_ids))
    return out


def dataset_of(sample: str) -> tuple[str, str]:
    """(dataset folder, the sample's path inside it): the top folder of the training sample."""
    top, rest = sample.split("/", 1)
    return top, rest
