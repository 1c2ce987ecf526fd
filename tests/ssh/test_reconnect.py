"""A dropped connection: the call in flight fails with one line or is retried; the next call reconnects."""

import asyncio
import os
import sys

import pytest

from eagle3_tui.sources.base import SourceError
from eagle3_tui.sources.opener import open_source
from eagle3_tui.target import parse_target
from tests.helpers.ssh_servers import InProcessServer, write_client_files

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_server_dropped_during_a_listing_then_the_next_call_reconnects(server, open_box, big_folder):
    box = await open_box(str(big_folder))
    pages = 0
    with pytest.raises(SourceError) as err:
        async for _page in box.list_pages(str(big_folder), page_size=200):
            pages += 1
            if pages == 2:
                server.drop_connections()
    assert str(err.value) == f"{box.where}: connection lost while listing {big_folder}"
    # the next call reconnects on its own and completes
    entries = await box.list_all(str(big_folder))
    assert len(entries) == 20_003
    assert box.statuses.count("connecting to box…") == 2  # a fresh connection, made by that call


async def test_idempotent_calls_are_retried_across_a_drop(server, open_box, dataset):
    box = await open_box(str(dataset))
    server.drop_connections()
    entry = await box.stat(f"{dataset}/rows_0-2000/data_0.ckpt")
    assert entry.kind == "file"
    result = await box.summarize(f"{dataset}/rows_0-2000/data_0.ckpt")
    assert "error" not in result and result["computed"] == "remote"


async def test_server_restarted_on_the_same_port_is_found_again(keys, tmp_path, dataset):
    first = await InProcessServer(keys).start()
    config, known = write_client_files(tmp_path, "box", first.port, keys)
    statuses = []
    box = open_source(parse_target("box:/"), ssh_config=config, known_hosts=known,
                      remote_python=sys.executable, on_status=statuses.append)
    await box.connect()
    try:
        await first.stop()  # down: listener closed and sessions killed
        second = await InProcessServer(keys, port=first.port).start()
        try:
            names = [e.name for e in await box.list_all(str(dataset))]
            assert names[0] == "rows_0-2000"
            assert any(s.startswith("connection lost, reconnecting (1/") for s in statuses)
        finally:
            await second.stop()
    finally:
        await box.close()


async def test_gives_up_with_one_line_when_the_server_stays_down(keys, tmp_path, dataset):
    server = await InProcessServer(keys).start()
    config, known = write_client_files(tmp_path, "box", server.port, keys)
    box = open_source(parse_target("box:/"), ssh_config=config, known_hosts=known, remote_python=sys.executable)
    box.backoff = (0.05, 0.1)  # the schedule is the only thing shortened; the path is the real one
    await box.connect()
    await server.stop()
    with pytest.raises(SourceError) as err:
        await box.stat(str(dataset))
    assert str(err.value) == f"{box.where}: connection lost while reading {dataset}; gave up after 2 reconnects"
    await box.close()


async def _gone(pid: int, timeout: float = 5.0) -> bool:
    for _ in range(int(timeout / 0.05)):
        if not os.path.exists(f"/proc/{pid}"):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_the_agent_exits_when_its_connection_closes_or_drops(server, open_box, dataset):
    cold = {"remote_python": sys.executable}  # sshd's session's own child, as on a box
    box = await open_box(str(dataset), **cold)
    pid = box._agent.hello["pid"]
    assert os.path.exists(f"/proc/{pid}")
    await box.close()
    assert await _gone(pid), "agent outlived a closed connection"

    box = await open_box(str(dataset), **cold)
    pid = box._agent.hello["pid"]
    server.drop_connections()
    assert await _gone(pid), "agent outlived a dropped connection"
