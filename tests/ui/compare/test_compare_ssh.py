"""The compare view on an SSH target: a real OpenSSH sshd on loopback, the agent computes on the
"box", only the result travels, and the dataset is left byte for byte as it was."""

from __future__ import annotations

import pytest

from eagle3_tui.sources.opener import open_source
from eagle3_tui.target import parse_target
from eagle3_tui.ui.app import Eagle3App
from eagle3_tui.ui.compare.screen import CompareScreen
from eagle3_tui.ui.start.connect import Opened
from tests.helpers.compare_view import SHARD, compare_done, go_to, started
from tests.helpers.ssh import fingerprint, require_sshd
from tests.helpers.ssh_servers import Keys, Sshd, write_client_files
from tests.helpers.tui import screen_text
from tests.helpers.warm_cli import warm_box_python


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    require_sshd()
    keys = Keys(tmp_path_factory.mktemp("pane-keys"))
    server = Sshd(tmp_path_factory.mktemp("pane-sshd"), keys).start()
    config, known = write_client_files(tmp_path_factory.mktemp("pane-client"), "box", server.port, keys)
    yield config, known
    server.stop()


async def test_compare_on_the_box(demo, box, monkeypatch):
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    config, known = box
    before = fingerprint(demo)
    opened = []

    async def opener(text, **kwargs):
        target = parse_target(text)
        source = open_source(target, remote_python=warm_box_python(), ssh_config=config, known_hosts=known,
                             on_status=kwargs.get("on_status"))
        await source.connect()
        opened.append(source)
        return Opened(source, target.path, source.label)

    app = Eagle3App(f"box:{demo / SHARD}", opener=opener)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(pilot)
        main = app.main_screen
        assert main.where != "local"
        await go_to(pilot, demo / SHARD, "data_10.ckpt")
        await pilot.press("t")
        assert main.pins.a.where == main.where
        await go_to(pilot, demo / "infer", "fault_permuted_s10.pt")
        await pilot.press("c")
        assert isinstance(app.screen, CompareScreen)
        await compare_done(pilot)
        view = app.screen
        assert view.result.get("computed") == "remote", view.result.get("error")
        text = screen_text(app)
        assert "computed remote" in text and "slot_permutation" in text
        assert view.result["slots"][0]["a_first"], "the per-token values came back from the box"
        await pilot.press("w")
        assert "worst token: B row" in screen_text(app)
    assert fingerprint(demo) == before, "the tool wrote into the dataset"
