"""Safe loading over SSH: the agent on the box and the SFTP fallback (a box Python without torch:
the file is fetched and loaded here) refuse every pickle path with the same line, and run nothing."""

import pytest

from eagle3_tui.sources.local import LocalSource
from tests.helpers.evil_files import write_evil_files

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.fixture(scope="module")
def evil(tmp_path_factory):
    root = tmp_path_factory.mktemp("evil-remote")
    marker = root / "MARKER"
    return root / "files", write_evil_files(root / "files", marker), marker


async def test_agent_and_sftp_fallback_refuse_and_run_nothing(server, shared_box, evil, python_without_torch):
    folder, files, marker = evil
    agent = await shared_box()
    fallback = await shared_box(python_without_torch)
    assert agent.computed == "remote" and fallback.computed == "local"
    for name, words in files.items():
        path = f"{folder}/{name}"
        local = await LocalSource().summarize(path)
        assert words in local["error"], (name, local)
        for box in (agent, fallback):
            result = await box.summarize(path)
            assert result["path"] == path
            assert result["error"] == local["error"], (box.computed, name, result)
    assert not marker.exists(), "a refused file ran its payload on the box or here"
