"""The TUI on a box whose torch is 2.5.1 (tests/helpers/old_torch.py; real OpenSSH sshd): the
location line names the box's Python and torch and says .pt files are refused, the status line
holds the gate's one line, and opening a .ckpt shows that line instead of loading it."""

from __future__ import annotations

import pytest
import torch

from eagle3_tui.sources.opener import open_source
from eagle3_tui.target import parse_target
from eagle3_tui.ui.app import Eagle3App
from eagle3_tui.ui.start.connect import Opened
from tests.helpers.old_torch import OLD
from tests.helpers.ssh import require_sshd
from tests.helpers.ssh_servers import Keys, Sshd, write_client_files
from tests.helpers.tui import screen_text, wait_until

LINE = f"the box's torch {OLD} cannot load .pt files safely"


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    require_sshd()
    keys = Keys(tmp_path_factory.mktemp("old-keys"))
    server = Sshd(tmp_path_factory.mktemp("old-sshd"), keys).start()
    yield write_client_files(tmp_path_factory.mktemp("old-client"), "box", server.port, keys)
    server.stop()


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_header_and_status_say_the_box_torch_refuses_pickles(box, old_torch, tmp_path, monkeypatch, size):
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    torch.save({"input_ids": torch.arange(8), "aux_hidden_state": torch.randn(1, 8, 24)}, tmp_path / "data_0.ckpt")
    old_torch.clear()
    config, known = box

    async def opener(text, **kwargs):
        target = parse_target(text)
        source = open_source(target, remote_python=old_torch.python, ssh_config=config, known_hosts=known,
                             on_status=kwargs.get("on_status"))
        await source.connect()
        await source.agent_ready()  # the hello has come: the decision is made
        return Opened(source, target.path, source.label)

    app = Eagle3App(f"box:{tmp_path}/data_0.ckpt", opener=opener)
    async with app.run_test(size=size) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: main.shown is not None and main.sample.loading_name is None, what="summary")
        text = screen_text(app)
        header = text.splitlines()[0]
        assert f"torch {OLD}" in header, header
        if size[0] >= 120:
            assert ".pt refused" in header, header
        assert LINE[:size[0] - 10] in text.replace("\n", " ") or LINE[:40] in text, text
    assert old_torch.load_calls() == []
