"""The folder browser, driven by keys as a user would: order, moving, opening, filtering, n/p."""

from __future__ import annotations

import re

from eagle3_tui.ui.browser.browser import BrowserList
from tests.helpers.tui import hold_keys, make_app, screen_text, wait_until


def names(app) -> list[str]:
    return [e.name for e in app.main_screen.browser.rows]


def current(app) -> str | None:
    entry = app.main_screen.browser.current
    return entry.name if entry else None


async def open_at(pilot, size_done=True):
    app = pilot.app
    await wait_until(pilot, lambda: app.main_screen.listing_done, what="listing")
    return app


async def test_natural_order_dirs_first_on_screen(tree):
    app = make_app(tree)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_at(pilot)
        assert names(app) == [
            "rows_0-2000", "rows_2000-4000", "rows_10000-12000", "vocab_mapping",
            "dangling.ckpt", "README.txt",
        ]
        text = screen_text(app)
        # host and path are always visible; sizes and dead links are shown per entry
        assert "local" in text.splitlines()[0] and str(tree) in text.splitlines()[0]
        assert text.index("rows_2000-4000/") < text.index("rows_10000-12000/")
        assert "dead" in text and "5B" in text


async def test_shard_files_in_natural_order(tree):
    app = make_app(tree / "rows_0-2000")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_at(pilot)
        assert names(app) == [f"data_{i}.ckpt" for i in (0, 1, 2, 10, 11, 12, 13)]


async def test_keys_move_open_and_go_up(tree):
    app = make_app(tree)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_at(pilot)
        await pilot.press("j", "j")
        assert current(app) == "rows_10000-12000"
        await pilot.press("k")
        assert current(app) == "rows_2000-4000"
        await pilot.press("G")
        assert current(app) == "README.txt"
        await pilot.press("g")
        assert current(app) == "rows_0-2000"
        await pilot.press("down", "up", "enter")
        await open_at(pilot)
        assert app.main_screen.path == str(tree / "rows_0-2000")
        assert current(app) == "data_0.ckpt"
        assert str(tree / "rows_0-2000") in screen_text(app).splitlines()[0]
        await pilot.press("h")
        await open_at(pilot)
        assert app.main_screen.path == str(tree)
        assert current(app) == "rows_0-2000"  # back on the folder we came from
        await pilot.press("j", "l")
        await open_at(pilot)
        assert app.main_screen.path == str(tree / "rows_2000-4000")
        await pilot.press("backspace")
        await open_at(pilot)
        assert current(app) == "rows_2000-4000"


async def test_incremental_filter(tree):
    app = make_app(tree / "rows_0-2000")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_at(pilot)
        await pilot.press("slash", "1")
        assert names(app) == ["data_1.ckpt", "data_10.ckpt", "data_11.ckpt", "data_12.ckpt",
                              "data_13.ckpt"]
        await pilot.press("2")
        assert names(app) == ["data_12.ckpt"]
        assert "1 of 7 entries match /12" in screen_text(app)
        await pilot.press("backspace")
        assert len(names(app)) == 5
        await pilot.press("enter")  # back to the list, filter kept
        assert isinstance(app.focused, BrowserList)
        await pilot.press("j")
        assert current(app) == "data_10.ckpt"
        await pilot.press("escape")
        assert len(names(app)) == 7
        assert current(app) == "data_10.ckpt"  # clearing the filter keeps the cursor's entry


async def test_filter_typed_in_one_burst_loses_no_key(tree):
    app = make_app(tree / "rows_0-2000")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_at(pilot)
        await hold_keys(pilot, ["slash", "1", "2"])
        await wait_until(pilot, lambda: app.main_screen.browser.filter == "12", what="filter")
        assert names(app) == ["data_12.ckpt"]


async def test_next_and_previous_sample_skip_other_entries(tree):
    app = make_app(tree)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_at(pilot)
        await pilot.press("n")
        # folders and a dead link named .ckpt are not sample files: the cursor stays put
        assert current(app) == "rows_0-2000"
        # (the temp folder's name ends in a number: its numbered siblings are looked in too)
        await wait_until(pilot, lambda: "no next sample file in" in screen_text(app), what="status")
        assert app.main_screen.path == str(tree)
    app = make_app(tree / "rows_0-2000")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_at(pilot)
        await pilot.press("n", "n")
        assert current(app) == "data_2.ckpt"
        await pilot.press("p")
        assert current(app) == "data_1.ckpt"
        # n/p are app-wide keys: they work with the focus away from the browser too
        app.set_focus(None)
        await pilot.press("n")
        assert current(app) == "data_2.ckpt"
        app.main_screen.browser.focus()
        await pilot.press("G")
        assert current(app) == "data_13.ckpt"
        await pilot.press("n")  # past the end: on into the next shard folder (test_walk_shards)
        await wait_until(pilot, lambda: current(app) == "data_2000.ckpt", what="next shard")


async def test_big_folder_is_virtual_and_reaches_the_end(big_folder):
    app = make_app(big_folder)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_at(pilot)
        browser = app.main_screen.browser
        assert len(browser.entries) == 3000
        assert len(browser.children) == 0  # rows are drawn, not built as widgets
        assert current(app) == "data_0.ckpt"
        await pilot.press("G")
        assert current(app) == "data_2999.ckpt"
        assert "data_2999.ckpt" in screen_text(app)
        page = len(re.findall(r"^│  data_\d+\.ckpt", screen_text(app), re.M))  # rows a person sees
        assert page >= 10
        await pilot.press("pageup")
        assert current(app) == f"data_{2999 - page}.ckpt"  # one page up
        await pilot.press("r")
        await open_at(pilot)
        assert len(browser.entries) == 3000
        assert current(app) == app.main_screen.browser.current.name


async def test_missing_folder_message_and_app_keeps_answering(tmp_path):
    app = make_app(tmp_path / "nope")
    async with app.run_test(size=(80, 24)) as pilot:
        browser = app.main_screen.browser
        await wait_until(pilot, lambda: browser.message and "no such file" in browser.message[0],
                         what="error message")
        # shown in the browser panel, wrapped to its width, where the user is looking
        panel = "".join(line[1:29] for line in screen_text(app).splitlines()[2:8])
        assert "no such file or folder" in " ".join(panel.split())
        await pilot.press("question_mark")
        assert app.screen.__class__.__name__ == "HelpScreen"


async def test_names_that_look_like_markup_are_shown_literally(tmp_path):
    weird = tmp_path / "[weird]"
    weird.mkdir()
    (weird / "[red]x[.txt").write_text("x")
    app = make_app(weird)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_at(pilot)
        text = screen_text(app)
        assert "─ [weird] ─" in text  # the panel title
        assert "[red]x[.txt" in text  # the row
        assert "[red]x[.txt · 1 bytes" in text.splitlines()[-2]  # the status line


def test_parent_of_a_home_relative_remote_path_stays_relative():
    """box:data/eagle3 is relative to the login's home: going up must not jump to "/"."""
    from eagle3_tui.ui.main.screen import parent_folder

    assert parent_folder("/data/eagle3/rows_0-2000") == "/data/eagle3"
    assert parent_folder("/data") == "/" and parent_folder("/") == "/"
    assert parent_folder("data/eagle3") == "data"
    assert parent_folder("data") == "."
    assert parent_folder(".") == ".."
    assert parent_folder("..") == "../.."
