"""The sample panel: debounced loading, what it shows for samples, non-samples and bad files."""

from __future__ import annotations

from tests.helpers.tui import hold_key, hold_keys, make_app, screen_text, wait_until


def shown_path(app) -> str | None:
    summary = app.main_screen.sample.summary
    return summary.get("path") if summary else None


async def test_fifty_quick_moves_load_only_the_last_file(many_samples):
    app = make_app(many_samples)
    source = app.test_source
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.main_screen.listing_done, what="listing")
        sample = app.main_screen.sample
        await hold_keys(pilot, ["j", "enter"])  # load data_0 now, so there is a result on screen
        first = str(many_samples / "data_0.ckpt")
        await wait_until(pilot, lambda: shown_path(app) == first, what="first sample")
        assert source.summarized == [first]
        # a slow CI must not turn one rest into several: give the check room, same mechanism
        app.main_screen.debounce_seconds = 0.5
        await hold_key(pilot, "j", 50)
        await wait_until(pilot, lambda: sample.loading_name == "data_50.ckpt", what="50 moves")
        # while the cursor moves, the old result stays, marked as loading the newest file
        assert shown_path(app) == first
        assert sample.loading_name == "data_50.ckpt"
        assert sample.has_class("-stale")
        assert "⟳ loading…" in screen_text(app)  # in the panel's bottom border
        assert "data_50.ckpt · 4," in screen_text(app)  # the status line: the file under the cursor
        last = str(many_samples / "data_50.ckpt")
        await wait_until(pilot, lambda: shown_path(app) == last, what="last sample")
        await app.workers.wait_for_complete()
        assert source.summarized == [first, last]
        assert not sample.has_class("-stale")
        assert "loading…" not in screen_text(app)


async def test_padded_sample_header_rows_strips_and_token_cursor(tree):
    app = make_app(tree / "rows_0-2000" / "data_2.ckpt")  # a file target opens its folder
    async with app.run_test(size=(120, 40)) as pilot:
        target = str(tree / "rows_0-2000" / "data_2.ckpt")
        await wait_until(pilot, lambda: shown_path(app) == target, what="data_2 summary")
        assert app.main_screen.browser.current.name == "data_2.ckpt"
        text = screen_text(app)
        assert "SpecForge offline · bfloat16 · computed local" in text
        assert "T 48 · valid 42 · H 32 · k 3" in text
        assert "6 padding rows" in text
        lines = text.splitlines()
        for label in ("aux0", "aux1", "aux2", "final"):
            assert any(line.split("│")[-2].strip().startswith(label) for line in lines if "│" in line)
        # the mask row shows the prompt (no loss), the answer (loss) and 6 padding columns
        mask_line = next(line for line in lines if "mask  " in line)
        assert "─" * 16 + "━" * 26 + "░" * 6 in mask_line
        assert "token 0/48" in text and "loss off" in text
        await pilot.press("right_curly_bracket", "right_curly_bracket")
        assert "token 32/48" in screen_text(app) and "loss on" in screen_text(app)
        await pilot.press("right_curly_bracket", "right_square_bracket")
        text = screen_text(app)
        assert "token 47/48" in text and "padding" in text.split("token 47/48")[1].splitlines()[0]
        await pilot.press("left_square_bracket")
        assert "token 46/48" in screen_text(app)


async def test_k_changes_the_number_of_first_values(tree):
    app = make_app(tree / "rows_0-2000" / "data_0.ckpt")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: shown_path(app) is not None, what="summary")
        assert app.main_screen.sample.summary["first_k"] == 5
        await pilot.press("plus", "plus")
        await wait_until(pilot, lambda: app.main_screen.sample.summary["first_k"] == 7, what="k=7")
        text = screen_text(app)
        assert "first 7" in text
        aux0 = next(line for line in text.splitlines() if "aux0 " in line and "‥" not in line
                    and "?" not in line)
        assert len(aux0.split("│")[-2].split()) == 1 + 7
        await pilot.press("minus")
        await wait_until(pilot, lambda: app.main_screen.sample.summary["first_k"] == 6, what="k=6")


async def test_bad_file_shows_its_error_and_keys_keep_working(tree):
    app = make_app(tree / "rows_0-2000" / "data_13.ckpt")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: shown_path(app) is not None, what="error summary")
        error = app.main_screen.sample.summary["error"]
        assert error
        assert "✗" in screen_text(app)
        assert error[:30] in " ".join(screen_text(app).split())
        await pilot.press("k")
        assert app.main_screen.browser.current.name == "data_12.ckpt"
        await wait_until(pilot, lambda: shown_path(app).endswith("data_12.ckpt"), what="data_12")
        # data_12 has a NaN in aux0: the row says so in the NaN/Inf column
        aux0 = next(line for line in screen_text(app).splitlines() if "aux0 " in line and "‥" not in line)
        assert "1/0" in aux0


async def test_non_sample_file_lists_its_contents(tree):
    app = make_app(tree / "vocab_mapping" / "vocab_mapping.pt")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: shown_path(app) is not None, what="summary")
        text = screen_text(app)
        assert "Not a sample" in text
        assert "d2t" in text and "[64]" in text and "t2d" in text and "[256]" in text
