"""What the sample pane's summary worker adds to a summary: the tokens as text and the draft
vocabulary's coverage (no widget: it reads files through the Source and the engines)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from eagle3_tui.engines.results.summary import Summary

if TYPE_CHECKING:
    from eagle3_tui.sources.base import Source
    from eagle3_tui.target import Target
    from eagle3_tui.ui.start.analysis import Analysis


class SampleText:
    """The tokenizer and vocab mapping a folder's samples are read with: the tokenizer from
    --tokenizer/--model, the mapping from --vocab-mapping or found once per folder by walking up
    (local data: the mapping is read here)."""

    def __init__(self) -> None:
        self._found: dict[str, str | None] = {}

    def tokenizer(self, analysis: Analysis, target: Target | None) -> str | None:
        """The tokenizer path the data's Source decodes with (None: none, or decoded in finish)."""
        return analysis.tokenizer_choice().on_source(target)

    async def finish(self, summary: Summary, *, analysis: Analysis, source: Source | None, target: Target | None,
                     folder: str) -> Summary:
        if target is not None:
            choice = analysis.tokenizer_choice()
            if choice.decodes_here(target):  # a tokenizer here, the data on a box: decode here
                summary = await asyncio.to_thread(choice.finish, summary, target)
            else:
                summary = choice.finish(summary, target)
        if source is None or getattr(source, "host", None) is not None or summary.get("ids") is None:
            return summary
        mapping = analysis.path_for("vocab_mapping", target) if target is not None else None
        if mapping is None:
            if folder not in self._found:
                from eagle3_tui.engines.model.vocab import find_mapping  # lazy: ~12 ms not paid at start

                self._found[folder] = await asyncio.to_thread(find_mapping, folder)
            mapping = self._found[folder]
        if mapping is None:
            return summary

        def run() -> Summary:
            from eagle3_tui.engines.model.vocab import annotate_summary  # lazy: ~12 ms not paid at start

            return annotate_summary(summary, mapping)

        return await asyncio.to_thread(run)
