"""The dataset view with --model: after the findings, a few representative files are identified
against the target model where the data is (dataset/layers.py, as `scan --model`), the layers
are named per group of files in the findings area and their findings filter the table.

The dataset is tests/helpers/scan_build.py's in SpecForge's layout, its states made by the tiny Llama of
tests/scan/hf_target.py: the majority holds boundaries (2, 5, 7) of L = 10, the shard
rows_12-24 (1, 4, 6).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import torch

from eagle3_tui.sources.local import LocalSource
from eagle3_tui.ui.start.analysis import Analysis
from tests.helpers.dataset_view import open_dataset, scan_done
from tests.helpers.drafter import config as drafter_config
from tests.helpers.drafter import init_weights, save_drafter
from tests.helpers.hf_target import make_target
from tests.helpers.scan_build import build
from tests.helpers.tui import make_app, screen_text, wait_until

SIZE = (200, 60)
MAJORITY = "majority (24 files; rows_0-12/data_0.ckpt): b=2, 5, 7 (match), final post-norm"
SHIFTED = ("files 12..23 (layer_group, 12 files; rows_12-24/data_12.ckpt): b=1, 4, 6 (match), final post-norm: "
           "one boundary lower than the majority")
THIRD = "shard rows_24-36 (12 files; rows_24-36/data_24.ckpt): b=2, 5, 7 (match), final post-norm: the majority's"
SHIFTED_FILES = [f"rows_12-24/data_{i}.ckpt" for i in range(12, 24)]


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    return make_target(tmp_path_factory.mktemp("tui-layers") / "llama")


@pytest.fixture(scope="module")
def shifted(tmp_path_factory, target, untouched) -> Path:
    root = tmp_path_factory.mktemp("tui-shifted")
    build(root, shifted_shard=1, seed=2, model=target)
    untouched(root)
    return root


@pytest.fixture(scope="module")
def drafter(tmp_path_factory) -> Path:
    """An untrained drafter whose config names ids [1, 4, 6]: the majority's b 2, 5, 7 read as
    "output of layer", the shifted shard's b 1, 4, 6 read as "input of layer"."""
    folder = tmp_path_factory.mktemp("tui-drafter") / "drafter"
    save_drafter(str(folder), init_weights(torch.Generator().manual_seed(0), draft_vocab=1000), cfg=drafter_config(1000))
    assert json.loads((folder / "config.json").read_text())["eagle_config"]["eagle_aux_hidden_state_layer_ids"] == [1, 4, 6]
    return folder


class CountingIdentify(LocalSource):
    """The real local source; counts identify calls, and holds each at `gate` (when given)
    until the test opens it, noting a call cancelled while held or running."""

    def __init__(self, gate: asyncio.Event | None = None) -> None:
        super().__init__()
        self.gate = gate
        self.calls: list[str] = []
        self.cancelled: list[str] = []

    async def identify(self, path, **options):
        self.calls.append(path)
        try:
            if self.gate is not None:
                await self.gate.wait()
            return await super().identify(path, **options)
        except asyncio.CancelledError:
            self.cancelled.append(path)
            raise


def app_with(folder: Path, source: LocalSource, **analysis):
    app = make_app(folder, source)
    app.analysis = Analysis.from_options(**{k: str(v) for k, v in analysis.items()})
    return app


async def test_the_view_names_each_groups_layers_and_a_layer_finding_filters_the_table(shifted, target, drafter):
    source = CountingIdentify()
    app = app_with(shifted, source, model=target.folder, drafter=drafter)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_dataset(pilot, shifted.parent, on=shifted.name)
        await wait_until(pilot, lambda: screen.layers_state not in (None, "identifying"),
                         what="the layers")
        assert screen.layers_state == "done"
        # with --drafter the acceptance step follows (ui/dataset/accept.py): the keys below act on its end
        await wait_until(pilot, lambda: screen.accept_state not in (None, "scoring"),
                         what="the acceptance step")
        # the majority, the layer_group, the third shard first; then the verification: the run's
        # edges and a sample of the rest (36 files: a 1% minority is one file, so every file)
        assert [c.rsplit("/", 1)[-1] for c in source.calls[:3]] == ["data_0.ckpt", "data_12.ckpt", "data_24.ckpt"]
        assert len(source.calls) == len(set(source.calls)) == 36  # every file, once
        text = " ".join(screen_text(app).split())
        assert "layers checked on 33 files" in text and "every file's layers are known" in text, text
        # what each count is: the groups' layers named from 3 files, 33 others only checked against them
        words = " ".join(text.replace("│", " ").split())  # the findings box's lines, as one text
        assert (f"layers (--model {target.folder}): named from 3 files identified with the model, one per group "
                "(below); 33 other files identified only to check them against the majority's boundaries") in words, text
        for line in (MAJORITY, SHIFTED, THIRD):
            assert line in text, text
        assert 'read as SpecForge\'s "output of" ids [0, 3, 5] / vLLM\'s "input of" ids [1, 4, 6]' in text
        assert "[1, 4, 6]: read as input of layer, not as the majority" in text, screen_text(app)

        # the layer finding is in the list and filters the table to the shifted shard's files
        codes = [f["code"] for f in screen.findings]
        assert codes.count("layer_convention") == 1, codes
        findings = screen.findings_list
        findings.focus()
        findings.highlighted = codes.index("layer_convention")
        await pilot.press("enter")
        assert sorted(screen.rows.records[i].path for i in screen.rows.view) == SHIFTED_FILES
        assert "showing the 12 files of layer_convention" in screen_text(app)
        # and they are marked as warnings in the table
        assert {screen.rows.records[i].status for i in screen.rows.view} == {"warning"}


async def test_without_model_nothing_is_identified_and_the_view_says_how(shifted):
    source = CountingIdentify()
    app = make_app(shifted, source)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_dataset(pilot, shifted.parent, on=shifted.name)
        await scan_done(pilot, screen)
        assert source.calls == [] and screen.layers_state is None
        text = screen_text(app)
        assert "start with --model DIR to name the layers" in text, text
        assert "layers (identified" not in text and "layer_convention" not in text


async def test_leaving_the_view_while_identifying_cancels_it(shifted, target):
    source = CountingIdentify(gate=asyncio.Event())
    app = app_with(shifted, source, model=target.folder)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_dataset(pilot, shifted.parent, on=shifted.name)
        await wait_until(pilot, lambda: source.calls, what="the first identify call")
        text = screen_text(app)
        assert "identifying 1/36: rows_0-12/data_0.ckpt…" in text, text  # 3 representatives, 33 verified
        await pilot.press("j")
        assert screen.table.cursor == 1, "a key is answered while identifying"
        await pilot.press("q")
        await wait_until(pilot, lambda: app.screen is app.main_screen, what="back on the main screen")
        await wait_until(pilot, lambda: source.cancelled, what="the identify call cancelled")
        source.gate.set()  # were the worker still running, it would go on to the next files now
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert source.calls == [str(shifted / "rows_0-12" / "data_0.ckpt")]
        assert screen.layers_state == "identifying"  # no result ever reached the view


async def test_esc_stops_identifying_and_the_view_keeps_what_it_has(shifted, target):
    source = CountingIdentify(gate=asyncio.Event())
    app = app_with(shifted, source, model=target.folder)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_dataset(pilot, shifted.parent, on=shifted.name)
        await wait_until(pilot, lambda: source.calls, what="the first identify call")
        await pilot.press("escape")
        await wait_until(pilot, lambda: screen.layers_state == "cancelled", what="identify stopped")
        assert app.screen is screen and source.cancelled
        text = screen_text(app)
        assert "layers (identified with --model" in text and "on 0 files of 3 planned, interrupted): none" in text, text
        await pilot.press("r")  # a rescan runs the layers again
        source.gate.set()
        await wait_until(pilot, lambda: screen.layers_state == "done", what="the layers again")
        assert MAJORITY in " ".join(screen_text(app).split())
