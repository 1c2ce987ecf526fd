"""Tokens as text in the TUI when the data is on an SSH box and the tokenizer is a plain path, so on
this machine (as the CLI reads --tokenizer): the box computes and sends the ids, the text is
decoded here, in the sample view (table, trained text, `/` search) and in the compare view; a
tokenizer that cannot be used says why on the screen and the app keeps going."""

from __future__ import annotations

import functools

import pytest
import pytest_asyncio

from eagle3_tui.engines.read.tokens import visible
from eagle3_tui.ui.app import Eagle3App
from eagle3_tui.ui.compare.panels import CompareFindings
from eagle3_tui.ui.compare.screen import CompareScreen
from eagle3_tui.ui.compare.tokens import AlignedTokenTable as CompareTable
from eagle3_tui.ui.sample.token_table import LossText, TokenTable
from eagle3_tui.ui.shared.status import StatusLine
from eagle3_tui.ui.start.analysis import Analysis
from eagle3_tui.ui.start.connect import open_target
from tests.helpers.ssh import require_sshd
from tests.helpers.ssh_servers import InProcessServer, Keys, Sshd, write_client_files
from tests.helpers.tokens import CHATS
from tests.helpers.tui import screen_text, wait_until
from tests.helpers.warm_cli import warm_box_python
from tests.ui.text.test_token_text import table_rows

SIZE = (120, 50)


@pytest.fixture(scope="module")
def openssh(tmp_path_factory):
    require_sshd()
    keys = Keys(tmp_path_factory.mktemp("text-sshd-keys"))
    server = Sshd(tmp_path_factory.mktemp("text-sshd"), keys).start()
    yield server.port, keys
    server.stop()


@pytest_asyncio.fixture
async def asyncssh_box(tmp_path_factory):
    keys = Keys(tmp_path_factory.mktemp("text-asyncssh-keys"))
    server = await InProcessServer(keys).start()
    yield server.port, keys
    await server.stop()


@pytest.fixture(params=["openssh", "asyncssh"])
def any_box(request):
    return request.getfixturevalue("openssh" if request.param == "openssh" else "asyncssh_box")


@pytest.fixture(autouse=True)
def _no_ssh_agent(monkeypatch):
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)


def box_app(box, tmp_path, folder, tokenizer: str) -> Eagle3App:
    """The TUI on box:FOLDER with --tokenizer TOKENIZER (a plain path: this machine)."""
    port, keys = box
    config, known = write_client_files(tmp_path / "client", "box", port, keys)
    opener = functools.partial(open_target, ssh_config=config, known_hosts=known)
    return Eagle3App(f"box:{folder}", remote_python=warm_box_python(), opener=opener,
                     data_dir=str(tmp_path / "data"), analysis=Analysis.from_options(tokenizer))


async def open_remote_sample(pilot, index: int) -> dict:
    app = pilot.app
    main = app.main_screen
    await wait_until(pilot, lambda: main.listing_done and main.browser.entries, what="listing")
    name = f"data_{index}.ckpt"
    while main.browser.current is None or main.browser.current.name != name:
        await pilot.press("j")
    await wait_until(pilot, lambda: (main.sample.summary or {}).get("path", "").endswith(name), what=f"{name} summarised on the box")
    return main.sample.summary


async def test_sample_view_decodes_the_boxs_ids_with_the_tokenizer_here(
        any_box, chats, tokenizer_dir, chat_samples, hf_tokenizer, tmp_path):
    app = box_app(any_box, tmp_path, chats / "rows_0-2000", str(tokenizer_dir))
    async with app.run_test(size=SIZE) as pilot:
        summary = await open_remote_sample(pilot, 0)
        _path, ids, mask = chat_samples[0]
        assert summary["computed"] == "remote"  # the numbers came from the box
        assert len(summary["text"]) == len(ids) and summary["text"][0] == "<|im_start|>"
        rows = table_rows(app)
        assert rows[1].split()[:4] == ["0", str(ids[0]), "<|im_start|>", "off"]
        t = mask.index(1)
        await pilot.press(*["right_curly_bracket"] * (t // 16), *["right_square_bracket"] * (t % 16))
        row = next(r for r in table_rows(app)[1:] if r.split() and r.split()[0] == str(t))
        assert hf_tokenizer.decode([ids[t]]).replace(" ", "␣") in row and " on " in row
        # what is trained, highlighted: the answer, decoded whole by the tokenizer here
        assert app.main_screen.query_one(LossText).highlighted() == [CHATS[0][1] + "<|im_end|>"]
        # `/` in the table finds a word of the answer
        table = app.main_screen.query_one(TokenTable)
        table.focus()
        await pilot.press("slash", *"Paris", "enter")
        await pilot.pause()
        hit = table.cursor
        assert "".join(summary["text"][hit:hit + 3]).lstrip("␣").startswith("P")
        assert app.main_screen.sample.token == hit and hit > t


async def test_compare_view_shows_both_sides_text_from_the_tokenizer_here(
        asyncssh_box, chats, tokenizer_dir, chat_samples, hf_tokenizer, tmp_path):
    app = box_app(asyncssh_box, tmp_path, chats / "rows_0-2000", str(tokenizer_dir))
    async with app.run_test(size=SIZE) as pilot:
        await open_remote_sample(pilot, 0)
        await pilot.press("t", "j", "i", "c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.result is not None, what="comparison on the box")
        result = app.screen.result
        assert result.get("computed") == "remote", result.get("error")
        rows = result["rows"]
        for side, index in (("a", 0), ("b", 1)):
            ids = rows[f"{side}_ids"]
            assert ids == chat_samples[index][1][rows[f"{side}_start"]:][:len(ids)]
            assert rows[f"{side}_text"][1:6] == [visible(hf_tokenizer.decode([i])) for i in ids[1:6]]
        table = app.screen.query_one(CompareTable)
        assert "A text" in table.render_line(0).text and "B text" in table.render_line(0).text
        assert table.render_line(2).text.count("system") == 2  # aligned row 1, both sides
        # the two chats part at the user's question: the finding quotes both tokens' text
        assert 'A "Wh"' in " ".join(screen_text(app).split())


@pytest.mark.parametrize("kind", ["missing", "not a tokenizer", "third machine"])
async def test_an_unusable_tokenizer_is_one_line_on_screen_and_the_app_goes_on(
        kind, asyncssh_box, chats, tmp_path):
    if kind == "missing":
        tokenizer, said = str(tmp_path / "no-such-model"), "no such tokenizer file or model folder"
    elif kind == "not a tokenizer":
        (tmp_path / "tokenizer.json").write_text('{"hello": "world"}')
        tokenizer, said = str(tmp_path / "tokenizer.json"), "not a tokenizers tokenizer.json"
    else:
        tokenizer, said = "elsewhere:/models/llama", "is on another machine than the data"
    app = box_app(asyncssh_box, tmp_path, chats / "rows_0-2000", tokenizer)
    async with app.run_test(size=SIZE) as pilot:
        summary = await open_remote_sample(pilot, 0)
        assert summary["slots"] and "text" not in summary  # the numbers stay, no wrong text
        drawn = app.main_screen.query_one(LossText).last.plain  # under the sample's numbers
        assert drawn.startswith("text: ") and said in drawn and "\n" not in drawn
        await pilot.press("n")  # the app keeps going: the next sample loads, same one line
        summary = await open_remote_sample(pilot, 1)
        assert said in summary["text_error"] and "\n" not in summary["text_error"]


async def test_a_tokenizer_too_small_for_the_ids_is_refused_on_screen(asyncssh_box, chats, chat_samples, tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    small = Tokenizer(models.BPE())
    small.pre_tokenizer = pre_tokenizers.ByteLevel()
    small.train_from_iterator(["tiny"], trainers.BpeTrainer(vocab_size=50, initial_alphabet=list("tiny")))
    small.save(str(tmp_path / "tokenizer.json"))
    app = box_app(asyncssh_box, tmp_path, chats / "rows_0-2000", str(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await open_remote_sample(pilot, 0)
        top = max(chat_samples[0][1])
        drawn = app.main_screen.query_one(LossText).last.plain
        assert drawn.startswith("text: ") and f"has id {top}: not the tokenizer of the model that made it" in drawn
        assert app.main_screen.query_one(LossText).highlighted() == []
        await pilot.press("t", "j", "i", "c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.result is not None, what="comparison on the box")
        assert app.screen.result.get("computed") == "remote"
        findings = app.screen.query_one(CompareFindings).render().plain
        assert "no token text: " in findings and "not the tokenizer of the model that made it" in findings
        assert app.screen.query_one(StatusLine).text.startswith("no token text: ")
        assert "A text" not in app.screen.query_one(CompareTable).render_line(0).text
