"""Issue 44, items 1 and 2 over SSH: the box's agent reads config.json through the same reader, so
a FIFO there is refused unopened and a config nested 100,000 deep is one line, never a
RecursionError or a hang of the agent."""

from __future__ import annotations

import asyncio
import os
import shutil

import pytest

pytestmark = pytest.mark.asyncio(loop_scope="session")

DEEP = "[" * 100_000 + "]" * 100_000


async def test_a_deep_model_config_and_a_fifo_drafter_config_on_the_box_are_one_line(server, shared_box, world, tmp_path):
    model = tmp_path / "deep-model"
    shutil.copytree(world.model, model, copy_function=os.link)
    (model / "config.json").unlink()
    (model / "config.json").write_text(DEEP)
    drafter = tmp_path / "fifo-drafter"
    drafter.mkdir()
    os.mkfifo(drafter / "config.json")
    sample = str(world.specforge("sf.ckpt"))
    box = await shared_box()
    r = await asyncio.wait_for(box.identify(sample, model=str(model)), 120)
    assert r["computed"] == "remote" and "nested 100000 levels deep" in r["error"] and "\n" not in r["error"]
    r = await asyncio.wait_for(box.accept(sample, str(drafter)), 120)
    assert "a FIFO (named pipe), not a regular file: not opened" in r["error"], r
    problems = await asyncio.wait_for(box.check_folders(str(model), str(drafter)), 120)
    assert "nested 100000 levels deep" in problems["model"] and "FIFO" in problems["drafter"], problems
