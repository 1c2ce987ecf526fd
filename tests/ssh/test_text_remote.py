"""Token text over SSH: decoded on the box when its Python has `tokenizers`, else the box's
tokenizer.json is fetched once and decoded here; the same text either way."""

from __future__ import annotations

import sys

import pytest

from eagle3_tui.sources.local import LocalSource
from tests.helpers.tokens import CHATS

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.fixture(scope="session")
def python_without_tokenizers(tmp_path_factory) -> str:
    """This Python, with `tokenizers` made unimportable (as on a box that only has torch)."""
    folder = tmp_path_factory.mktemp("no-tokenizers")
    (folder / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Gone:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'tokenizers':\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, _Gone())\n")
    return f"env PYTHONPATH={folder} {sys.executable}"


async def test_decoded_on_the_box_when_it_has_tokenizers(server, open_box, chat_samples, tokenizer_dir):  # noqa: F811
    box = await open_box("/")
    assert box._agent.hello["tokenizers"]
    path, ids, _ = chat_samples[1]
    remote = await box.summarize(str(path), tokenizer=str(tokenizer_dir))
    local = await LocalSource().summarize(str(path), tokenizer=str(tokenizer_dir))
    assert remote["computed"] == "remote"
    assert remote["text"] == local["text"] and len(remote["text"]) == len(ids)
    assert remote["loss_spans"] == local["loss_spans"]
    assert [s["text"] for s in remote["loss_spans"]] == [CHATS[1][1] + "<|im_end|>"]
    assert not any(s.startswith("fetching") for s in box.statuses)  # nothing was downloaded


async def test_fetched_once_and_decoded_here_without_tokenizers_on_the_box(
        server, open_box, chat_samples, tokenizer_dir, python_without_tokenizers):  # noqa: F811
    box = await open_box("/", remote_python=python_without_tokenizers)
    assert box._agent.hello["tokenizers"] is None and box.computed == "remote"
    expected = [await LocalSource().summarize(str(p), tokenizer=str(tokenizer_dir)) for p, _, _ in chat_samples]
    for (path, _, _), local in zip(chat_samples, expected):
        remote = await box.summarize(str(path), tokenizer=str(tokenizer_dir))
        assert remote["computed"] == "remote"  # the numbers still come from the box
        assert remote["text"] == local["text"] and remote["loss_spans"] == local["loss_spans"]
    fetches = [s for s in box.statuses if s.startswith("fetching")]
    assert len(fetches) == 1 and "tokenizer.json" in fetches[0]  # fetched once, then cached


async def test_a_missing_tokenizer_on_the_box_is_one_line_and_the_numbers_stay(
        server, open_box, chat_samples, python_without_tokenizers):  # noqa: F811
    box = await open_box("/", remote_python=python_without_tokenizers)
    path, _, _ = chat_samples[0]
    result = await box.summarize(str(path), tokenizer="/no/such/model")
    assert "error" not in result and result["slots"]
    assert "no such file" in result["text_error"] and "\n" not in result["text_error"]
