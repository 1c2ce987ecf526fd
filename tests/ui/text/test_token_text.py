"""The sample panel's tokens as text, the compare rows' text and the draft vocabulary, driven
through the real app at fixed sizes."""

from __future__ import annotations

import pytest

from eagle3_tui.ui.compare.tokens import AlignedTokenTable as CompareTable
from eagle3_tui.ui.sample.view import SampleView
from eagle3_tui.ui.sample.token_table import LossText, TokenTable
from tests.helpers.tokens import CHATS
from tests.helpers.tui import screen_text, text_app, wait_until

SIZE = (120, 50)


async def open_sample(pilot, index: int) -> None:
    app = pilot.app
    await wait_until(pilot, lambda: app.screen.listing_done and app.screen.browser.entries, what="listing")
    name = f"data_{index}.ckpt"
    await wait_until(pilot, lambda: app.screen.browser.current is not None, what="cursor")
    while app.screen.browser.current.name != name:
        await pilot.press("j")
    await wait_until(pilot, lambda: (app.screen.sample.summary or {}).get("path", "").endswith(name),
                     what=f"{name} loaded")


def table_rows(app) -> list[str]:
    table = app.screen.query_one(TokenTable)
    return [table.render_line(y).text for y in range(table.size.height)]


@pytest.mark.asyncio
async def test_table_shows_each_tokens_text_and_the_text_highlights_the_loss_span(
        chats, tokenizer_dir, chat_samples, hf_tokenizer, tmp_path):
    app = text_app(chats / "rows_0-2000", tokenizer_dir, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_sample(pilot, 0)
        _path, ids, mask = chat_samples[0]
        rows = table_rows(app)
        assert rows[0].split()[:4] == ["#", "id", "text", "loss"]
        # row 1 of the table is token 0: <|im_start|>, its id, loss off
        assert rows[1].split()[:4] == ["0", str(ids[0]), "<|im_start|>", "off"]
        # the first answer token, as the tokenizer itself decodes it
        t = mask.index(1)
        await pilot.press(*["right_curly_bracket"] * (t // 16), *["right_square_bracket"] * (t % 16))
        assert app.screen.sample.token == t and app.screen.query_one(TokenTable).cursor == t
        row = next(r for r in table_rows(app)[1:] if r.split() and r.split()[0] == str(t))
        assert hf_tokenizer.decode([ids[t]]).replace(" ", "␣") in row and " on " in row
        # what is trained, highlighted, is exactly the answer (decoded whole)
        highlighted = app.screen.query_one(LossText).highlighted()
        assert highlighted == [(CHATS[0][1] + "<|im_end|>")]
        assert "draft vocab:" in screen_text(app)


@pytest.mark.asyncio
async def test_slash_in_the_table_jumps_to_the_token_holding_the_word_and_n_goes_on(
        chats, tokenizer_dir, chat_samples, tmp_path):
    app = text_app(chats / "rows_0-2000", tokenizer_dir, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_sample(pilot, 0)
        table = app.screen.query_one(TokenTable)
        table.focus()
        await pilot.press("slash", *"Paris", "enter")
        await pilot.pause()
        texts = app.screen.sample.summary["text"]
        hit = table.cursor
        assert "Par" in texts[hit] or texts[hit].endswith("P") or texts[hit] == "␣P"
        assert "".join(texts[hit:hit + 3]).lstrip("␣").lower().startswith("p")
        assert app.screen.sample.token == hit  # the panel's cursor follows the table's
        # "capital" appears in the question and in the answer: n goes to the second, N back
        await pilot.press("slash", *"capital", "enter")
        first = table.cursor
        await pilot.press("n")
        second = table.cursor
        assert second > first and "capital" in "".join(texts[second:second + 3])
        await pilot.press("N")
        assert table.cursor == first
        # after esc, n is the app's "next sample" again
        await pilot.press("escape", "n")
        await wait_until(pilot, lambda: (app.screen.sample.summary or {}).get("path", "").endswith("data_1.ckpt"),
                         what="next sample")


@pytest.mark.asyncio
async def test_without_a_tokenizer_the_table_shows_ids(chats, chat_samples, tmp_path):
    app = text_app(chats / "rows_0-2000", None, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_sample(pilot, 0)
        rows = table_rows(app)
        assert rows[1].split()[:3] == ["0", str(chat_samples[0][1][0]), "off"]
        assert "--tokenizer" in screen_text(app)


@pytest.mark.asyncio
async def test_the_vocab_mapping_file_shows_its_draft_size(chats, draft_ids, hf_tokenizer, tmp_path):
    app = text_app(chats / "vocab_mapping", None, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.screen.listing_done and app.screen.browser.entries, what="listing")
        await wait_until(pilot, lambda: (app.screen.sample.summary or {}).get("vocab_mapping") is not None,
                         what="mapping summary")
        text = screen_text(app)
        assert f"draft {len(draft_ids):,} tokens · target {hf_tokenizer.get_vocab_size():,} tokens" in text
        assert "Not a sample" not in text


@pytest.mark.asyncio
async def test_per_sample_share_and_outside_tokens_as_text(chats, tokenizer_dir, chat_samples, draft_ids, tmp_path):
    app = text_app(chats / "rows_0-2000", tokenizer_dir, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_sample(pilot, 3)
        _path, ids, mask = chat_samples[3]
        loss = [i for i, m in zip(ids, mask) if m]
        inside = sum(i in set(draft_ids) for i in loss)
        text = screen_text(app)
        assert f"draft vocab: {inside / len(loss):.1%} of {len(loss)} loss tokens" in text
        first_out = next(t for t, (i, m) in enumerate(zip(ids, mask)) if m and i not in set(draft_ids))
        assert f"{app.screen.sample.summary['text'][first_out]}@{first_out}" in text


@pytest.mark.asyncio
async def test_compare_rows_show_both_sides_text_and_the_divergence(chats, tokenizer_dir, tmp_path):
    app = text_app(chats / "rows_0-2000", tokenizer_dir, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_sample(pilot, 0)
        await pilot.press("t", "j", "i", "c")
        await wait_until(pilot, lambda: getattr(app.screen, "result", None) is not None, what="comparison")
        table = app.screen.query_one(CompareTable)
        head = table.render_line(0).text
        assert "A text" in head and "B text" in head
        row = table.render_line(2).text  # aligned row 1: "system" on both sides
        assert row.count("system") == 2
        text = screen_text(app)
        # data_0 and data_1 part at the user's question: both tokens' text is quoted
        assert 'A "Wh", B "' in text.replace("\n", " ") or 'A "Wh"' in text
