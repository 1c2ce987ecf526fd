"""Issue 34.3, 34.5, 34.6 on screen (Pilot, 120x40 and 80x24): nothing is written into the
dataset whatever the data folder, the status line never keeps saying "reading NAME…" after a
failed text open, and a long export path loses its middle, never the file name's end nor the
end of the sentence."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.compare_view import go_to, started
from tests.helpers.dataset_view import open_dataset, scan_done
from tests.helpers.ssh import write_sample
from tests.helpers.tui import make_app, screen_text, wait_until

SIZES = [(120, 40), (80, 24)]
LONG = "s" * 230 + "_data_7.ckpt"  # 242 characters: a name near the file system's limit


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def shown(app, selector: str) -> str:
    """The status line as drawn (fitted to its width), not the text it was given."""
    line = app.screen.query_one(selector)
    return line.render().plain


@pytest.fixture
def dataset(tmp_path) -> Path:
    root = tmp_path / "ds"
    for i in range(3):
        (root / "train").mkdir(parents=True, exist_ok=True)
        write_sample(root / "train" / f"data_{i}.ckpt", seed=i)
    return root


@pytest.mark.parametrize("size", SIZES)
async def test_a_data_folder_inside_the_dataset_gets_nothing_written(dataset, monkeypatch, size):
    """The app started on the dataset, the data folder inside it (an app made without the CLI,
    which refuses that at start): D on a sub-folder and e refuse in one whole sentence, the
    sample view's e too, and no bookmark store is created there."""
    mine = dataset / "mydata"
    monkeypatch.setenv("EAGLE3_TUI_DATA_DIR", str(mine))
    before = files_under(dataset)
    app = make_app(dataset)
    async with app.run_test(size=size) as pilot:
        screen = await open_dataset(pilot, dataset / "train")
        await scan_done(pilot, screen)
        await pilot.press("e")
        said = shown(app, "#ds-status")
        assert said.startswith("not exported:") and said.endswith("(start with --data-dir elsewhere)"), said
        assert len(said) <= size[0]
        await pilot.press("escape")
        await go_to(pilot, dataset / "train", "data_0.ckpt")
        app.main_screen.pane.follow(str(dataset / "train" / "data_0.ckpt"), delay=0)
        await wait_until(pilot, lambda: (app.main_screen.sample.summary or {}).get("path", "").endswith("data_0.ckpt"),
                         what="the sample view")
        await pilot.press("e")
        assert shown(app, "#status").endswith("(start with --data-dir elsewhere)")
        await pilot.press("b")  # bookmark: refused, the store stays closed
        await wait_until(pilot, lambda: "bookmarks off" in screen_text(app), what="the bookmark refusal")
    assert files_under(dataset) == before, "nothing written into the dataset"


@pytest.mark.parametrize("size", SIZES)
async def test_a_long_export_path_keeps_the_file_name_end_in_the_status_line(tmp_path, size):
    folder = tmp_path / "d"
    folder.mkdir()
    write_sample(folder / LONG, seed=7)
    app = make_app(folder / LONG)
    async with app.run_test(size=size) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: (main.sample.summary or {}).get("path", "").endswith(LONG), what="sample")
        await pilot.press("e")
        md = next((Path(os.environ["EAGLE3_TUI_DATA_DIR"]) / "exports").glob("*.md"))
        said = shown(app, "#status")
        assert said.startswith("exported ") and said.endswith(md.name[-12:] + " + .json"), said
        assert "…" in said and len(said) <= size[0]
        assert md.name[-12:] in screen_text(app)


@pytest.mark.parametrize("size", SIZES)
async def test_the_status_line_says_why_a_text_open_failed(tmp_path, size):
    (tmp_path / "config.json").write_bytes(b"")
    (tmp_path / "README.txt").write_bytes(bytes(range(256)) * 4)
    app = make_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await started(pilot)
        for name, why in (("config.json", "empty (0 bytes)"), ("README.txt", "not text")):
            await go_to(pilot, tmp_path, name)
            await pilot.press("l")
            await wait_until(pilot, lambda: "reading" not in shown(app, "#status"), what=f"the status after {name}")
            await app.workers.wait_for_complete()
            await pilot.pause()
            said = shown(app, "#status")
            assert "reading" not in said and name in said and why in said, said
