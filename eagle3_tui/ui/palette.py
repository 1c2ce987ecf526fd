"""Command palette provider (ctrl+p): the app's own keys, from the one key table (ui/keys.py).

The entries are the bindings of the app and of the screen the palette was opened on (and of
its widgets, such as the browser), titled by their help line and run as the key would run them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode

from eagle3_tui.ui.keys import OWN_IDS, key_text


class Eagle3Commands(Provider):
    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        app, screen = self.app, self.screen
        out: list[tuple[str, Callable[[], object], str]] = []
        seen: set[str] = set()
        nodes: list[DOMNode] = [*screen.walk_children(with_self=True), app]
        for node in nodes:
            for binding in getattr(type(node), "BINDINGS", ()):
                if binding.id not in OWN_IDS or binding.id in seen or not binding.description:
                    continue
                seen.add(binding.id)
                title = binding.tooltip or binding.description
                out.append((title, partial(app.run_action, binding.action, node), key_text(binding.key)))
        return out

    async def discover(self) -> Hits:
        for name, callback, keys in self._commands():
            yield DiscoveryHit(name, callback, help=f"key: {keys}")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, keys in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=f"key: {keys}")
