"""Issue 33 item 4: the dataset view started with --model and --drafter shows serve-check's table
once the layers step has found the data's boundaries: one line per engine and version range, the
config.json line that fixes a mismatch, and `e` exports it.

The dataset is tests/helpers/scan_build.py's, its states made by the tiny saved Llama of
tests/helpers/hf_target.py: every file holds b 2, 5, 7 of L = 10 (as in tests/serving/test_cli.py).
The drafters are folders with only a config.json: the check reads nothing else (the acceptance
step that --drafter also starts fails on them, and the check does not depend on it).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from eagle3_tui.dataset.serving import table_rows
from eagle3_tui.sources.local import LocalSource
from eagle3_tui.ui.app import Eagle3App
from eagle3_tui.ui.dataset.serving_table import ServingTable
from eagle3_tui.ui.start.analysis import Analysis
from eagle3_tui.ui.start.connect import open_target
from eagle3_tui.userdirs import data_dir
from tests.helpers.dataset_view import open_dataset
from tests.helpers.hf_target import make_target
from tests.helpers.scan_build import build
from tests.helpers.serving import drafter
from tests.helpers.ssh_servers import write_client_files
from tests.helpers.tui import make_app, screen_text, wait_until
from tests.helpers.warm_cli import warm_box_python

SIZES = [(120, 40), (80, 24)]
#: SpecForge-style "output of" ids put at the top level, where vLLM reads boundaries: one shallower
WRONG = {"eagle_aux_hidden_state_layer_ids": [1, 4, 6]}
#: both keys, each as its readers read it: every current engine captures b 2, 5, 7
RIGHT = {"eagle_aux_hidden_state_layer_ids": [2, 5, 7], "eagle_config": {"eagle_aux_hidden_state_layer_ids": [1, 4, 6]}}
FIX = 'config.json: "eagle_aux_hidden_state_layer_ids": [2, 5, 7]  (top level)'


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    return make_target(tmp_path_factory.mktemp("tui-serve") / "llama")


@pytest.fixture(scope="module")
def data(tmp_path_factory, target, untouched) -> Path:
    root = tmp_path_factory.mktemp("tui-serve-data") / "data"
    build(root, shards=2, seed=4, model=target)
    untouched(root)
    return root


async def checked(pilot, data: Path):
    """D on the dataset; returns the screen and its serve-check once the check and every step ran."""
    screen = await open_dataset(pilot, data.parent, on=data.name)
    await wait_until(pilot, lambda: screen.layers_state not in (None, "identifying"), what="the layers")
    assert screen.layers_state == "done"
    table = screen.query_one(ServingTable)
    await wait_until(pilot, lambda: table.state in ("done", "failed"), what="the serve-check")
    await pilot.app.workers.wait_for_complete()  # the acceptance step --drafter starts, too
    await pilot.pause()
    return screen, table


async def checked_again(pilot, screen):
    """After r: the scan, the layers and the check again."""
    await wait_until(pilot, lambda: screen.layers_state == "done", what="the layers again")
    table = screen.query_one(ServingTable)
    await wait_until(pilot, lambda: table.state in ("done", "failed"), what="the serve-check again")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    return screen, table


VERDICTS = ("ok", "ok, guess", "differs", "fails")


def row(name: str, app) -> str:
    """The table's line of an engine ("" when it is not on screen): it starts with its verdict."""
    return next((ln for ln in screen_text(app).splitlines()
                 if name in ln and ln.strip().startswith(VERDICTS)), "")


async def focus_rows(pilot, screen, table):
    """tab until the serve-check's rows have the focus (the files, the findings, then the rows)."""
    for _ in range(3):
        if screen.focused is table.rows:
            return
        await pilot.press("tab")
        await pilot.pause()
    assert screen.focused is table.rows, screen.focused


def flat(app) -> str:
    return " ".join(screen_text(app).split())


@pytest.mark.parametrize("size", SIZES)
async def test_a_drafter_naming_other_ids_shows_the_mismatch_and_its_fix(data, target, tmp_path, size):
    app = make_app(data.parent, LocalSource())
    app.analysis = Analysis.from_options(model=str(target.folder), drafter=str(drafter(tmp_path, WRONG)))
    async with app.run_test(size=size) as pilot:
        screen, table = await checked(pilot, data)
        assert table.state == "done" and table.display, table.error
        text = flat(app)
        assert "vLLM 0.22.0 ≤ v, V2 runner will not capture the data's b 2, 5, 7" in text, screen_text(app)
        if size[1] < 34:  # a short screen: the verdict says the fix is a tab away; the file table keeps its rows
            assert "(tab: the fix)" in text and "fix: " not in text, screen_text(app)
            await focus_rows(pilot, screen, table)
            await wait_until(pilot, lambda: "fix: " in flat(app), what="the fix, once tab reached the rows")
            text = flat(app)
        assert "fix: " + " ".join(FIX.split()) in text, screen_text(app)
        line = row("vLLM 0.22.0 ≤ v, V2 runner", app)
        assert "b 1, 4, 6" in line and line.strip().startswith("differs"), screen_text(app)


@pytest.mark.parametrize("size", SIZES)
async def test_every_row_is_reached_with_the_keyboard(data, target, tmp_path, size):
    """Issue 42: at 80x24 only the table's header and one row showed, and tab never reached it. Now
    tab reaches the rows, the arrows move through every one (each on screen in turn, as serve-check
    prints it), and the row under the cursor shows its whole reason."""
    app = make_app(data.parent, LocalSource())
    app.analysis = Analysis.from_options(model=str(target.folder), drafter=str(drafter(tmp_path, WRONG)))
    async with app.run_test(size=size) as pilot:
        screen, table = await checked(pilot, data)
        assert table.state == "done", table.error
        # before any key: the cursor is on the first current engine that will not serve, in view
        first = next(i for i, e in enumerate(table.result["engines"]) if e["until"] is None and not e["matches"])
        assert table.rows.cursor_row == first and row("vLLM 0.22.0 ≤ v, V2 runner", app), screen_text(app)
        await focus_rows(pilot, screen, table)
        for _ in range(first):
            await pilot.press("up")
        await wait_until(pilot, lambda: table.rows.cursor_row == 0, what="the first row")
        for i, (mark, name, got, _why) in enumerate(table_rows(table.result)):
            await wait_until(pilot, lambda: row(name, app).strip().startswith(mark), what=f"the row of {name}")
            assert got in row(name, app) and table.rows.cursor_row == i
            why = " ".join(table.result["engines"][i]["why"].split()[:6])
            await wait_until(pilot, lambda: why in flat(app), what=f"the reason of {name} below the rows")
            await pilot.press("down")
        await pilot.press("tab")  # and on, back to the files
        await pilot.pause()
        assert screen.focused is screen.table


@pytest.mark.parametrize("size", SIZES)
async def test_a_correct_drafter_stays_silent(data, target, tmp_path, size):
    app = make_app(data.parent, LocalSource())
    app.analysis = Analysis.from_options(model=str(target.folder), drafter=str(drafter(tmp_path, RIGHT)))
    async with app.run_test(size=size) as pilot:
        screen, table = await checked(pilot, data)
        assert table.state == "done", table.error
        text = flat(app)
        assert "every current engine captures the data's b 2, 5, 7; nothing to fix" in text, screen_text(app)
        assert "fix:" not in text and "will not capture" not in text
        assert table.result is not None and not [f for f in table.result["findings"] if f["severity"] == "warning"]


async def test_e_exports_the_engines(data, target, tmp_path):
    folder = drafter(tmp_path, WRONG)
    app = make_app(data.parent, LocalSource())
    app.analysis = Analysis.from_options(model=str(target.folder), drafter=str(folder))
    async with app.run_test(size=(120, 40)) as pilot:
        await checked(pilot, data)
        await pilot.press("e")
        files = sorted((data_dir() / "exports").glob("*.json"))
        assert len(files) == 1
        report = json.loads(files[0].read_text())
        serving = report["serving"]
        assert serving["drafter_path"] == str(folder)
        assert serving["data"]["boundaries"] == [2, 5, 7]
        engines = {(e["engine"], e["until"]): e for e in serving["engines"]}
        assert engines[("vllm", None)]["boundaries"] == [1, 4, 6] and not engines[("vllm", None)]["matches"]
        assert FIX in serving["fix"]["lines"]
        md = files[0].with_suffix(".md").read_text()
        assert "## Serving" in md and "| vLLM 0.22.0 ≤ v, V2 runner | b 1, 4, 6 | **no** |" in md, md


async def test_an_unreadable_drafter_config_is_said_in_the_view(data, target, tmp_path):
    folder = tmp_path / "drafter"
    folder.mkdir()
    (folder / "config.json").write_text("{not json")
    app = make_app(data.parent, LocalSource())
    app.analysis = Analysis.from_options(model=str(target.folder), drafter=str(folder))
    async with app.run_test(size=(80, 24)) as pilot:
        screen, table = await checked(pilot, data)
        assert table.state == "failed" and app.screen is screen
        assert "serve-check: DRAFTER" in flat(app) and "is not JSON" in flat(app), screen_text(app)
        # the user fixes the config and scans again: the check is read anew, the old line gone
        (folder / "config.json").write_text(json.dumps(RIGHT))
        await pilot.press("r")
        screen, table = await checked_again(pilot, screen)
        assert table.state == "done" and "nothing to fix" in flat(app) and "is not JSON" not in flat(app)


async def test_over_ssh_the_configs_are_read_on_the_box(box, data, target, tmp_path):
    """The data, the model and the drafter on an SSH box (asyncssh's real server): the configs
    come through the open SSH source, as the layers do."""
    folder = drafter(tmp_path, WRONG)
    config, known = write_client_files(tmp_path / "client", "box", box.port, box.keys)
    app = Eagle3App(f"box:{data.parent}", remote_python=warm_box_python(),
                    opener=functools.partial(open_target, ssh_config=config, known_hosts=known),
                    analysis=Analysis.from_options(model=str(target.folder), drafter=str(folder)))
    async with app.run_test(size=(120, 40)) as pilot:
        screen, table = await checked(pilot, data)
        assert screen.source.host is not None and table.state == "done", table.error
        text = flat(app)
        assert "vLLM 0.22.0 ≤ v, V2 runner will not capture the data's b 2, 5, 7" in text, screen_text(app)
        assert "fix: " + " ".join(FIX.split()) in text
