"""Command palette provider (ctrl+p) for the app's own actions."""

from __future__ import annotations

from collections.abc import Callable

from textual.command import DiscoveryHit, Hit, Hits, Provider

from eagle3_tui.ui.screens.compare import compare_commands


class Eagle3Commands(Provider):
    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        app = self.app
        main = app.main_screen  # type: ignore[attr-defined]
        browser = main.browser
        return [
            ("Help: list every key", app.action_help, "? or F1"),
            ("Next sample file", lambda: app.action_step_sample(1), "n"),
            ("Previous sample file", lambda: app.action_step_sample(-1), "p"),
            ("Filter this folder", main.action_filter, "/"),
            ("Clear the filter", main.action_clear_filter, "esc"),
            ("Reload folder and sample", app.action_reload, "r"),
            ("Up one folder", browser.action_parent, "h or backspace"),
            ("First entry", browser.action_first, "g"),
            ("Last entry", browser.action_last, "G"),
            ("Show more first-k values", lambda: main.action_k(1), "+"),
            ("Show fewer first-k values", lambda: main.action_k(-1), "-"),
            ("Bookmarks: list, filter, edit and jump", main.action_bookmarks, "B"),
            ("Bookmark the sample under the cursor (or remove it)", main.action_toggle_bookmark, "b"),
            ("Bookmark note: add or edit", main.action_bookmark_note, "N"),
            ("Quit eagle3-tui", app.exit, "q"),
        ] + compare_commands(app)

    async def discover(self) -> Hits:
        for name, callback, keys in self._commands():
            yield DiscoveryHit(name, callback, help=f"key: {keys}")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, keys in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=f"key: {keys}")
