"""Whole-screen text snapshots at fixed sizes, so a layout regression shows up as a diff.

Regenerate after an intended change with: EAGLE3_TUI_UPDATE_SNAPSHOTS=1 python -m pytest tests/ui
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from eagle3_tui.ui.app import Eagle3App
from eagle3_tui.ui.start.connect import Opened
from tests.helpers.tui import CountingSource, screen_text, wait_until

SNAPSHOTS = Path(__file__).parent / "snapshots"


def check_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("EAGLE3_TUI_UPDATE_SNAPSHOTS") or not path.exists():
        path.write_text(text + "\n")
        if not os.environ.get("EAGLE3_TUI_UPDATE_SNAPSHOTS"):
            pytest.fail(f"wrote new snapshot {path.name}; check it and commit it")
    assert text + "\n" == path.read_text(), f"screen differs from {path}"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_padded_sample_screen(tree, monkeypatch, size):
    monkeypatch.chdir(tree)  # relative paths keep the temp folder's name off the screen
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()

    async def opener(text, **_kwargs):
        return Opened(CountingSource(), text, "local")

    app = Eagle3App("rows_0-2000/data_2.ckpt", opener=opener)
    async with app.run_test(size=size) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.shown == "rows_0-2000/data_2.ckpt"
                         and main.sample.loading_name is None, what="data_2 summary")
        await pilot.press("right_square_bracket", "right_square_bracket")
        check_snapshot(f"padded_{size[0]}x{size[1]}.txt", screen_text(app))


def _shown(word: str) -> float | None:
    try:
        return float(word)
    except ValueError:
        return None


def _close(shown: float, true: float) -> bool:
    """`shown` is `true` printed to 4 significant digits (the panel's precision)."""
    return abs(shown - true) <= 1e-3 * abs(true) + 1e-6


SCROLLBAR = set("▁▂▃▄▅▆▇█")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_sample_screen_numbers_are_torchs(tree, monkeypatch, size):
    """What the sample panel shows for data_2 (6 padding rows), recomputed here with torch from
    the file itself: sizes, per-slot norm/mean/std over the valid rows, token 2's id and values."""
    import torch

    monkeypatch.chdir(tree)
    path = "rows_0-2000/data_2.ckpt"
    raw = torch.load(path, weights_only=True)
    ids, mask = raw["input_ids"], raw["loss_mask"]
    aux, final = raw["aux_hidden_state"][0].float(), raw["hidden_state"][0].float()
    t, h = final.shape
    k = aux.shape[1] // h
    pad = 0
    while pad < t and ids[t - 1 - pad] == 0 and mask[t - 1 - pad] == 0:
        pad += 1
    valid = t - pad
    parts = {f"aux{i}": aux[:, i * h:(i + 1) * h] for i in range(k)} | {"final": final}

    async def opener(text, **_kwargs):
        return Opened(CountingSource(), text, "local")

    app = Eagle3App(path, opener=opener)
    async with app.run_test(size=size) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.shown == path and main.sample.loading_name is None, what="summary")
        await pilot.press("right_square_bracket", "right_square_bracket")
        await pilot.pause(0)
        screens = [screen_text(app)]
        main.pane.scroll_to(y=4, animate=False, immediate=True)  # 80x24: the warning is read whole above
        await pilot.pause(0)
        screens.append(screen_text(app))
        lines = [line.split("│")[-2] if "│" in line else line for text in screens for line in text.splitlines()]
    text = "\n".join(lines)
    assert f"T {t} · valid {valid} · H {h} · k {k}" in text
    assert f"{pad} padding rows" in text
    assert f"token 2/{t} · id {int(ids[2])} · loss {'on' if mask[2] else 'off'}" in text
    stats_seen, values_seen = set(), set()
    for line in lines:
        words = line.split()
        if len(words) > 1 and len(words[-1]) == 1 and words[-1] in SCROLLBAR:
            words = words[:-1]  # the panel's scrollbar, drawn at the end of the row
        if not words or words[0] not in parts:
            continue
        x = parts[words[0]]
        numbers = [n for n in map(_shown, words[1:]) if n is not None]
        if words[-1] == "ok":  # the stats table: ‖x‖ mean, [‖x‖ min, ‖x‖ max,] mean, std
            v = x[:valid]
            norms = v.norm(dim=-1)
            true = [float(norms.mean()), float(v.mean()), float(v.std())]
            if len(numbers) == 5:
                true[1:1] = [float(norms.min()), float(norms.max())]
            assert len(numbers) == len(true), line
            assert all(_close(s, e) for s, e in zip(numbers, true)), (line, true)
            stats_seen.add(words[0])
        elif len(numbers) == 5:  # token 2's first five values
            true = x[2, :5].tolist()
            assert all(_close(s, e) for s, e in zip(numbers, true)), (line, true)
            values_seen.add(words[0])
    assert stats_seen == set(parts) and values_seen == set(parts)


async def test_browser_screen_at_the_tree_root(tree, monkeypatch):
    """Folders in natural order (rows_2000 before rows_10000), then files with case folded
    (dangling.ckpt before README.txt), kinds and sizes as a person sees them."""
    monkeypatch.chdir(tree)
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()

    async def opener(text, **_kwargs):
        return Opened(CountingSource(), text, "local")

    app = Eagle3App(".", opener=opener)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.main_screen.listing_done, what="listing")
        await pilot.pause(0)
        text = screen_text(app)
    order = [name for name in ("rows_0-2000", "rows_2000-4000", "rows_10000-12000", "vocab_mapping",
                               "dangling.ckpt", "README.txt") if name in text]
    assert order == sorted(order, key=text.index), text
    check_snapshot("browser_root_80x24.txt", text)


async def test_help_screen(tree, monkeypatch):
    monkeypatch.chdir(tree)

    async def opener(text, **_kwargs):
        return Opened(CountingSource(), text, "local")

    app = Eagle3App(".", opener=opener)  # the cursor on a folder: nothing loads behind the help
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_until(pilot, lambda: app.main_screen.listing_done, what="listing")
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: "Keys  (esc closes)" in screen_text(app), what="help")
        text = screen_text(app)
    check_snapshot("help_100x40.txt", text)


def write_exact_scale_pair(root: Path) -> tuple[Path, Path]:
    """A SpecForge training sample and a capture of it scaled by exactly 4, in values that every
    CPU computes the same: multiples of 1/8 in [-6, 6] (exact in bf16 and float32), so every dot
    product and norm the app computes is exact or one correctly rounded step from exact, and no
    printed digit depends on the machine's kernels (issue 21: the demo's 4x fault, made by a
    model run, printed "B = 3.999 x A" on another CPU)."""
    import torch

    gen = torch.Generator().manual_seed(13)
    t, h, k = 40, 64, 3
    ids = torch.randint(3, 500, (t,), generator=gen)
    ids[0] = 1
    mask = torch.zeros(t, dtype=torch.long)
    mask[t // 3:] = 1
    # a residual stream: each slot is the one before plus a new branch (positive cross-slot cosines)
    steps = torch.randint(-16, 17, (k, t, h), generator=gen).float() / 8
    aux = torch.cat(list(steps.cumsum(0)), dim=1)
    final = torch.randint(-32, 33, (t, h), generator=gen).float() / 8
    train, capture = root / "train/rows_0-2000/data_13.ckpt", root / "infer/fault_scale_s13.pt"
    train.parent.mkdir(parents=True)
    capture.parent.mkdir(parents=True)
    torch.save({"input_ids": ids, "loss_mask": mask, "aux_hidden_state": aux[None],
                "hidden_state": final[None]}, train)
    torch.save({"input_ids": ids, "aux_hidden_state": (aux * 4).to(torch.bfloat16)}, capture)
    return train.relative_to(root), capture.relative_to(root)


async def test_compare_screen_of_a_scaled_capture(tmp_path, monkeypatch):
    """The compare view for a 4x scale fault: a text snapshot, and the factor and the per-slot
    cosines on screen recomputed here with torch from the two files."""
    import torch

    from tests.helpers.compare_view import compare_done, go_to, grid_row, started

    train, capture = write_exact_scale_pair(tmp_path)
    monkeypatch.chdir(tmp_path)  # relative names keep the temp folder's name off the screen

    async def opener(text, **_kwargs):
        return Opened(CountingSource(), text, "local")

    app = Eagle3App(str(train.parent), opener=opener)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        await go_to(pilot, train.parent, train.name)
        await pilot.press("t")
        await go_to(pilot, capture.parent, capture.name)
        await pilot.press("i", "c")
        await compare_done(pilot)
        text = screen_text(app)
    a = torch.load(train, weights_only=True)
    b = torch.load(capture, weights_only=True)
    h = a["hidden_state"].shape[-1]
    a_aux = a["aux_hidden_state"].reshape(-1, a["aux_hidden_state"].shape[-1]).float()
    b_aux = b["aux_hidden_state"].reshape(-1, a_aux.shape[1]).float()
    n = len(b_aux)
    ratios = b_aux.reshape(n, -1, h).norm(dim=-1) / a_aux.reshape(n, -1, h).norm(dim=-1)
    assert bool((ratios == 4).all())  # the data is exact: the factor is 4, not about 4
    assert "B = 4 x A in slot(s) 0, 1, 2" in " ".join(text.split())
    lines = text.splitlines()
    k = a_aux.shape[1] // h
    for j in range(k):  # every B slot against every A slot: the mean cosine over the aligned rows
        cos = [torch.nn.functional.cosine_similarity(b_aux[:, j * h:(j + 1) * h], a_aux[:, i * h:(i + 1) * h],
                                                     dim=-1).mean() for i in range(k)]
        assert grid_row(lines, f"B{j}") == [f"{float(c):.3f}" for c in cos]
    check_snapshot("compare_scale_120x40.txt", text)
