"""The box's torch is 2.5.1 (`--remote-python` points at a Python whose torch presents itself so,
tests/helpers/old_torch.py), over a real OpenSSH sshd: the agent's hello decides once and the CLI
says it in one line; every pickle is refused on the box unread (exit 2 for one file; a scan's error
records, said once, never cached); safetensors are still read there; --trust-data loads, and says so."""

from __future__ import annotations

import json

import pytest
import torch

from tests.helpers.old_torch import OLD
from tests.helpers.sample_files import write_safetensors
from tests.helpers.ssh import cli

pytestmark = pytest.mark.asyncio(loop_scope="session")

LINE = (f"the box's torch {OLD} cannot load .pt files safely (CVE-2025-32434, CVE-2026-24747): "
        "install torch>=2.10 there, or point --remote-python at a Python that has it")


@pytest.fixture
def server(sshd, keys):
    """OpenSSH only (the CLI tests' choice, tests/ssh/test_cli.py): each run is a fresh process."""
    from tests.helpers.ssh import Server

    return Server("openssh", sshd.port, keys, sshd)


@pytest.fixture(scope="module")
def box_data(tmp_path_factory):
    root = tmp_path_factory.mktemp("old-torch-box")
    g = torch.Generator().manual_seed(0)
    for i in range(3):
        t = {"input_ids": torch.randint(1, 1000, (16,), generator=g), "loss_mask": torch.ones(16, dtype=torch.int64),
             "aux_hidden_state": torch.randn(1, 16, 24, generator=g), "hidden_state": torch.randn(1, 16, 8, generator=g)}
        torch.save(t, root / f"data_{i}.ckpt")
    write_safetensors(root / "data_9.safetensors", t)
    return root


@pytest.fixture
def old(old_torch):
    old_torch.clear()
    yield old_torch
    old_torch.clear()


async def test_summary_on_the_box_refuses_the_pickle_says_why_once_and_exits_2(server, home, box_data, old):
    rc, out, err = await cli(home, "summary", f"box:{box_data}/data_0.ckpt", "--json", "--remote-python", old.python)
    assert rc == 2
    result = json.loads(out)
    assert result["error"].startswith(LINE)
    assert result["runtime"] == {"computed": "remote", "python": result["runtime"]["python"],
                                 "executable": old.python, "torch": OLD, "pickles": "refused (torch below 2.10)"}
    assert err.count(f"eagle3-tui: {LINE}") == 1  # the hello's decision, before any file
    rc, out, err = await cli(home, "summary", f"box:{box_data}/data_9.safetensors", "--json",
                             "--remote-python", old.python)
    assert rc == 0 and json.loads(out)["tokens"] == 16, err  # safetensors run no unpickler: read on the box
    assert old.load_calls() == []


async def test_scan_on_the_box_reports_every_pickle_once_in_its_summary_and_caches_none(server, home, box_data, old):
    for attempt in ("first", "second"):
        rc, out, err = await cli(home, "scan", f"box:{box_data}", "--json", "--remote-python", old.python)
        *lines, last = out.splitlines()
        records = {r["path"]: r for r in map(json.loads, lines)}
        summary = json.loads(last)["summary"]
        assert [p for p, r in records.items() if r.get("error", "").startswith(LINE) and not r.get("cached")] == [
            f"data_{i}.ckpt" for i in range(3)], attempt
        assert summary["refused"].startswith(f"3 pickle files not read: {LINE}")
        assert summary["runtime"]["computed"] == "remote" and summary["runtime"]["torch"] == OLD
        assert err.count(LINE) == 1
    assert records["data_9.safetensors"].get("cached")  # the safetensors sample was read, then cached
    assert old.load_calls() == []


async def test_trust_data_reaches_the_box_and_the_result_says_the_load_was_unsafe(server, home, box_data, old):
    rc, out, err = await cli(home, "summary", f"box:{box_data}/data_0.ckpt", "--json", "--trust-data",
                             "--remote-python", old.python)
    assert rc == 0, err
    result = json.loads(out)
    assert result["tokens"] == 16 and result["runtime"]["pickles"] == "loaded unsafely (--trust-data)"
    assert result["unsafe_loads"].startswith(f"--trust-data: .pt files were loaded with torch {OLD}")
    assert LINE not in err and f"the box's torch {OLD} is below 2.10" in err
    assert len(old.load_calls()) == 1  # the box's torch.load ran, once
