"""One rule for folder options on a box (issue 20, item 5): --model, --drafter and
--vocab-mapping take a plain path on the data's machine or `host:path` naming the data's own
host, in every command; another host is one clear line. Run as a user would (the CLI in a fresh
process, `home` with its own .ssh), against both real servers (OpenSSH sshd and asyncssh's)."""

from __future__ import annotations

import json

import pytest

from tests.helpers.ssh import cli
from tests.helpers.vocab import write_mapping

pytestmark = pytest.mark.asyncio(loop_scope="session")


def _json(out: str) -> dict:
    return json.loads(out.splitlines()[-1])


async def test_accept_takes_the_drafter_as_box_path_or_plain_path(home, trained):
    sample = f"box:{trained.data / 'train_0.ckpt'}"
    results = []
    for drafter, model in ((f"box:{trained.drafter}", f"box:{trained.model}"),
                           (str(trained.drafter), str(trained.model))):
        rc, out, err = await cli(home, "accept", sample, "--drafter", drafter, "--model", model, "--json")
        assert rc == 0, err
        r = _json(out)
        assert r["computed"] == "remote" and "error" not in r
        results.append({k: v for k, v in r.items() if k != "drafter"})
    assert results[0] == results[1]  # the same folder either way


@pytest.mark.parametrize("option", ["--drafter", "--model"])
async def test_accept_refuses_a_folder_on_another_host(home, trained, option):
    sample = f"box:{trained.data / 'train_0.ckpt'}"
    args = ["--drafter", f"box:{trained.drafter}"]
    if option == "--drafter":
        args = ["--drafter", f"elsewhere:{trained.drafter}"]
    else:
        args += ["--model", f"elsewhere:{trained.model}"]
    rc, out, err = await cli(home, "accept", sample, *args)
    assert rc == 2 and out == ""
    assert f"{option} elsewhere:" in err and "must be on the same machine as the sample" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


async def test_accept_of_local_data_refuses_a_box_folder(home, trained):
    rc, out, err = await cli(home, "accept", str(trained.data / "train_0.ckpt"), "--drafter",
                             f"box:{trained.drafter}")
    assert rc == 2 and "--drafter box:" in err and "same machine as the sample" in err


async def test_scan_takes_the_vocab_mapping_as_box_path_or_plain_path(home, trained, tmp_path):
    mapping = tmp_path / "mapping" / "vocab_mapping.pt"
    write_mapping(mapping, [0, 1, 2], 4096)  # a tiny draft vocabulary: most loss tokens fall outside
    coverage = []
    for given in (f"box:{mapping}", str(mapping)):
        rc, out, err = await cli(home, "scan", f"box:{trained.data}", "--vocab-mapping", given, "--json",
                                 "--no-cache")
        assert rc in (0, 1), err
        found = {f["code"]: f for f in _json(out)["findings"]}
        assert "draft_vocab_coverage" in found, (given, err)
        coverage.append(found["draft_vocab_coverage"]["coverage"])
    assert coverage[0] == coverage[1] < 0.5
    rc, out, err = await cli(home, "scan", f"box:{trained.data}", "--vocab-mapping", f"elsewhere:{mapping}")
    assert rc == 2 and "--vocab-mapping elsewhere:" in err and "same machine" in err
