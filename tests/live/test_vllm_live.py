"""serve-check --live vllm against the real engine (vLLM's CPU build, tests/helpers/vllm_world.py):
the real SmolLM2 folder, a SpecForge dataset of its own greedy chats (b 2, 15, 27) and a drafter
trained on it with SpecForge's objective and config.

What vLLM 0.32.0 does with SpecForge's config is the case the table got from reading its code: it
reads eagle_config's ids [1, 14, 26] as the input of layer id (b = id), one boundary shallower
than SpecForge's b = id + 1. Here the engine itself says so, identified by the target model, not a
table; with the ids pinned at the top level as vLLM reads them it feeds the data's boundaries.

Acceptance: the data's answers are the target's own greedy answers, and vLLM's greedy output with
the drafter is the same text (checked), so the engine drafts at positions accept can replay
exactly: from the prompt's last row, each draft starting past the tokens accepted plus the one the
target adds. When it feeds the data's states the two differ only where the engine's float32 states
and the data's bf16 ones round a near tie apart: within 0.05 per position and 5% of the drafts
(measured: 55.3% vs 54.5%, 255 vs 257 drafts on 8 prompts of another world).
"""

from __future__ import annotations

import json

import pytest

from eagle3_tui.cli import main
from tests.helpers.autouse import _one_torch_thread  # noqa: F401 - autouse fixture
from tests.helpers.real_world import real_cache
from tests.helpers.vllm_world import VllmWorld, build, require_vllm

pytestmark = pytest.mark.xdist_group("vllm")  # one engine at a time: each takes ~3.6 GiB and both cores


@pytest.fixture(scope="module")
def world(tmp_path_factory, smollm2_target) -> VllmWorld:
    from tests.helpers.real_world import _target

    python = require_vllm()
    from eagle3_tui.demo.real_model import chats
    from eagle3_tui.demo.real_questions import QUESTIONS

    target = _target("smollm2")
    conversations = chats(target, QUESTIONS, cache=real_cache())
    return build(tmp_path_factory.mktemp("vllm-world"), python, target, conversations, real_cache())


def _live(capsys, world: VllmWorld, drafter, *extra) -> tuple[int, dict, str]:
    code = main(["serve-check", str(drafter), str(world.data), "--model", str(world.model), "--live", "vllm",
                 "--engine-python", world.python, *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_vllm_reads_specforge_ids_one_boundary_shallower_and_says_so_from_what_it_feeds(world, capsys):
    code, out, err = _live(capsys, world, world.drafter, "--json", "--engine", "vllm==0.32.0")
    result = json.loads(out.splitlines()[-1])
    live = result["live"]
    # the table's rows for the release that runs here (a V1 and a V2 runner row): what vLLM fed is one
    # of them, the CPU build's runner (cpu_model_runner.py subclasses the V1 GPU runner)
    rows = [e["boundaries"] for e in result["engines"] if e["engine"] == "vllm"]
    assert live["fed"] in rows and [2, 15, 27] in rows
    assert "error" not in live, live
    assert (live["engine"], live["version"]) == ("vllm", "0.32.0")
    assert live["data"] == [2, 15, 27]
    assert live["fed"] == [1, 14, 26] and live["ids"] == [1, 14, 26]
    assert live["match"] is False and code == 1
    assert "input of layer" in live["explained"]
    assert "GiB" in err  # the memory it takes, said before it starts


def test_pinned_ids_feed_the_data_and_vllm_measures_what_accept_predicts(world, capsys):
    code, out, _ = _live(capsys, world, world.pinned, "--json", "--accept", "6")
    live = json.loads(out.splitlines()[-1])["live"]
    assert "error" not in live, live
    assert live["fed"] == live["data"] == [2, 15, 27] and live["match"] is True
    # vLLM with the drafter writes the target's own greedy answers: the data's
    assert live["greedy_same"] == [True] * 6
    measured, offline = live["acceptance"], live["offline"]
    assert measured["drafts"] > 30
    assert abs(measured["drafts"] - offline["drafts"]) <= 0.05 * offline["drafts"]
    assert measured["per_position"][0] > 0.2  # the drafter guesses: the comparison is not of zeros
    for got, want in zip(measured["per_position"], offline["per_position"], strict=True):
        assert abs(got - want) <= 0.05, (measured, offline)
    assert abs(measured["mean_length"] - offline["mean_length"]) <= 0.1


def test_the_text_names_the_engine_the_layers_and_fits_100_columns(world, capsys):
    code, out, _ = _live(capsys, world, world.drafter)
    assert code == 1
    live = out[out.index("live: "):]
    assert "live: vLLM 0.32.0 (installed) feeds the drafter b 1, 14, 26; the data holds b 2, 15, 27: DIFFERS" in live
    assert all(len(line) <= 100 for line in live.splitlines()), live


def test_an_engine_python_without_vllm_is_one_line(world, capsys, tmp_path):
    import sys

    code = main(["serve-check", str(world.pinned), str(world.data), "--model", str(world.model), "--live", "vllm",
                 "--engine-python", sys.executable])
    out = capsys.readouterr().out
    live = out[out.index("live: "):]
    assert "could not be run" in live and "vllm" in live.lower() and code == 1


@pytest.fixture
def ssh_home(sshd, tmp_path):
    """A HOME whose .ssh/config names Host "box" -> OpenSSH's sshd on loopback (key trusted)."""
    import os

    from tests.helpers.ssh_servers import write_client_files

    home = tmp_path / "home"
    config, _ = write_client_files(home / ".ssh", "box", sshd.port, sshd.keys)
    os.rename(config, home / ".ssh" / "config")
    return home


async def test_over_ssh_the_box_runs_its_own_vllm_and_says_what_it_feeds(world, ssh_home):
    """`serve-check box:/data --live vllm`: the agent on the box runs the engine installed there
    (--engine-python is a path on the box) and the identification next to the data; only the
    report travels."""
    from tests.helpers.ssh import cli

    code, out, err = await cli(ssh_home, "serve-check", str(world.drafter), f"box:{world.data}", "--model",
                               str(world.model), "--live", "vllm", "--engine-python", world.python, "--json")
    live = json.loads(out.splitlines()[-1])["live"]
    assert "error" not in live, (live, err[-2000:])
    assert live["computed"] == "remote"
    assert (live["fed"], live["data"], live["match"]) == ([1, 14, 26], [2, 15, 27], False) and code == 1


async def test_v_in_the_dataset_views_serving_rows_runs_the_engine_and_shows_what_it_feeds(world):
    """The TUI's door to the same run: D on the dataset with --model, --drafter and --engine-python,
    tab to serve-check's rows, v: the engine runs in a worker and its verdict shows under the table's."""
    from eagle3_tui.sources.local import LocalSource
    from eagle3_tui.ui.dataset.serving_table import ServingTable
    from eagle3_tui.ui.start.analysis import Analysis
    from tests.helpers.dataset_view import open_dataset
    from tests.helpers.tui import make_app, screen_text, wait_until

    app = make_app(world.data.parent, LocalSource())
    app.analysis = Analysis.from_options(model=str(world.model), drafter=str(world.drafter),
                                         engine_python=world.python)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_dataset(pilot, world.data.parent, on=world.data.name)
        await wait_until(pilot, lambda: screen.layers_state not in (None, "identifying"), timeout=300, what="the layers")
        table = screen.query_one(ServingTable)
        await wait_until(pilot, lambda: table.state in ("done", "failed"), timeout=120, what="the serve-check")
        for _ in range(3):
            if screen.focused is table.rows:
                break
            await pilot.press("tab")
            await pilot.pause()
        assert screen.focused is table.rows
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(table.live, dict), timeout=600, what="the live run")
        assert (table.live.get("fed"), table.live.get("data")) == ([1, 14, 26], [2, 15, 27]), table.live
        await pilot.press("tab")  # off the rows: the head shows the whole report again
        await pilot.pause()
        assert "feeds the drafter b 1, 14, 26; the data holds b 2, 15, 27: DIFFERS" in screen_text(app)
        assert table.export()["live"]["match"] is False
