"""The sample pane: the bordered right half of the main screen, holding the sample view and
the tokens as text under it (ui/sample/view.py, token_table.py).

It owns what follows the sample shown: which file is wanted and which is shown, the debounce
that waits for the cursor to rest, the first-k count, and what the TUI's --drafter and --model
add to a sample: the drafter's acceptance (ui/shared/acceptance.py) and `I`, which identifies
the boundary of the target model each slot holds (engines/model/identify.py, run by the Source next to
the data). Its workers post messages it handles itself; the screen tells it what is open
(`place`) and which file to follow (`follow`, `show_entry`), and hears back `Shown` and the
status lines it hands to `say`.
"""

from __future__ import annotations

import asyncio
import posixpath
from typing import TYPE_CHECKING, Protocol, cast

from textual import work
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.message import Message
from textual.timer import Timer

from eagle3_tui.engines.results.identify import IdentifyBrief, IdentifyResult
from eagle3_tui.engines.results.summary import Summary
from eagle3_tui.names import printable
from eagle3_tui.sources.base import Source, SourceError
from eagle3_tui.ui.sample.messages import SummaryLoaded
from eagle3_tui.ui.sample.text import SampleText
from eagle3_tui.ui.sample.token_table import TokenPanel, TokenTable
from eagle3_tui.ui.sample.view import SampleView
from eagle3_tui.ui.shared import acceptance
from eagle3_tui.ui.start import analysis_check

if TYPE_CHECKING:
    from collections.abc import Callable

    from eagle3_tui.target import Target
    from eagle3_tui.ui.start.analysis import Analysis


class PaneHost(Protocol):
    """What the pane needs of the app: the --drafter/--model/--tokenizer choices."""

    analysis: Analysis


#: cursor rests this long on a sample before it is loaded (moving on cancels the load)
DEBOUNCE_SECONDS = 0.15
K_RANGE = (1, 16)


class Identified(Message):
    """The identification of one file (I) came back: the Source's identify result."""

    def __init__(self, path: str, result: IdentifyResult) -> None:
        super().__init__()
        self.path = path
        self.result = result


class SamplePane(VerticalScroll, can_focus=False):
    """The sample shown, with its loading, acceptance and identification."""

    class Shown(Message):
        """The pane shows a newly loaded `summary` of `path` (bookmarks fill their headline)."""

        def __init__(self, path: str, summary: Summary) -> None:
            super().__init__()
            self.path = path
            self.summary = summary

    @property
    def analysis(self) -> Analysis:
        return cast("PaneHost", self.app).analysis  # the Eagle3App, which the panes do not import

    def __init__(self, say: Callable[..., None], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.say = say  # the screen's status line: say(text, error=False)
        #: what is open, set by the screen (place): the Source, its target and where it runs
        self.source: Source | None = None
        self.target: Target | None = None
        self.where = ""
        self.wanted: str | None = None  # the file the pane should show
        self.shown: str | None = None  # the file it shows
        self.debounce_seconds = DEBOUNCE_SECONDS
        self._debounce: Timer | None = None
        self.k = 5
        self.view = SampleView(id="sample")  # mounted right after the first frame
        self.tokens = TokenPanel(id="tokens")  # the tokens as text, under it
        self._text = SampleText()
        self.acceptance = acceptance.SampleAcceptance()  # --drafter results per file
        #: identified boundaries per file (I), shown again whenever that file is shown
        self.identified: dict[str, IdentifyBrief] = {}
        self.identifying: str | None = None  # the file whose identification runs
        #: --model / --drafter / --tokenizer found unusable at start (ui/start/analysis_check.py)
        self.unusable: dict[str, str] = {}

    def mount_parts(self) -> None:
        """Mount the sample view and the token panel (dozens of styled parts: after the first frame)."""
        self.mount(self.view, self.tokens)

    def place(self, source: Source | None, target: Target | None, where: str) -> None:
        self.source, self.target, self.where = source, target, where
        if source is not None and target is not None:
            self._check_options(source, target)

    # ----- --model, --drafter, --tokenizer: checked once, said once

    @work(exclusive=True, group="check-options")
    async def _check_options(self, source: Source, target: Target) -> None:
        try:
            problems = await analysis_check.check_with(source, self.analysis, target)
        except Exception as err:  # noqa: BLE001 - a check that fails is said, never raised
            problems = {"model": f"the start-up check failed: {type(err).__name__}: {err}"}
        self.post_message(analysis_check.AnalysisChecked(problems))

    def on_analysis_checked(self, message: analysis_check.AnalysisChecked) -> None:
        message.stop()
        self.unusable = message.problems
        if not message.problems:
            return
        self.say(analysis_check.said(message.problems), error=True)
        self.notify(analysis_check.said(message.problems, "\n"), title="Start-up options", severity="error",
                    timeout=20, markup=False)
        off = analysis_check.acceptance_off(message.problems)
        if off is not None and self.shown is not None:
            self.workers.cancel_group(self, "accept")
            self.view.show_acceptance(off)

    # ----- which file is shown

    def show_entry(self, note: str | None, title: str = "sample") -> None:
        """The pane describes what is under the cursor (or shows nothing), never an old file."""
        self.wanted = self.shown = None
        if not self.is_attached:
            return
        if self.tokens.is_attached:
            self.tokens.show(None)
        self.view.clear(note)
        self.border_title = escape(title)
        self.mark_loading(None)

    def reset(self, text: str) -> None:
        """Another target is being opened: nothing is shown nor loaded until it is."""
        self.workers.cancel_group(self, "summary")
        self.workers.cancel_group(self, "accept")
        self._stop_debounce()
        self.shown = self.wanted = None
        self.view.clear(text)
        if self.tokens.is_attached:
            self.tokens.show(None)

    def follow(self, path: str, delay: float | None = None) -> None:
        """Load `path` once the cursor has rested on it; the shown result stays until then."""
        if delay is None:
            delay = self.debounce_seconds
        self.wanted = path
        self.mark_loading(posixpath.basename(path))
        self._stop_debounce()
        if delay <= 0:
            self._load_wanted()
        else:
            self._debounce = self.set_timer(delay, self._load_wanted, name="sample-debounce")

    def mark_loading(self, name: str | None) -> None:
        """Dim the shown result and say a newer one is on its way.

        Runs on every cursor move over samples: the pane's subtitle only changes when loading
        starts or ends (repainting the whole pane per key cost more than the move itself);
        the status line names the file under the cursor.
        """
        self.view.mark_loading(name)
        subtitle = "⟳ loading…" if name else ""
        if self.border_subtitle != subtitle:
            self.border_subtitle = subtitle

    def cancel_pending(self) -> None:
        self._stop_debounce()
        self.workers.cancel_group(self, "accept")
        if self.wanted != self.shown:
            self.workers.cancel_group(self, "summary")
            self.wanted = self.shown
            self.mark_loading(None)

    def _stop_debounce(self) -> None:
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None

    def _load_wanted(self) -> None:
        self._debounce = None
        self.workers.cancel_group(self, "accept")  # the drafter run of the file left behind
        if self.wanted is not None:
            self.load_summary(self.wanted, self.k)

    @work(exclusive=True, group="summary")
    async def load_summary(self, path: str, k: int) -> None:
        assert self.source is not None
        try:
            analysis, target = self.analysis, self.target
            summary: Summary = await self.source.summarize(
                path, k=k, tokenizer=self._text.tokenizer(analysis, target))
            summary = await self._text.finish(summary, analysis=analysis, source=self.source,
                                              target=target, folder=posixpath.dirname(path))
        except SourceError as err:
            summary = {"path": path, "error": str(err)}  # as error_result makes it
        except Exception as err:  # noqa: BLE001 - the panel shows it; the app keeps running
            summary = {"path": path, "error": f"{type(err).__name__}: {err}"}
        self.post_message(SummaryLoaded(path, k, summary))

    def on_summary_loaded(self, message: SummaryLoaded) -> None:
        message.stop()
        if message.path != self.wanted:
            return  # the user has moved on; a newer load is on its way
        self.shown = message.path
        if message.path in self.identified:
            # lazy: identify and its model code (~7 ms) only once a sample was identified
            from eagle3_tui.engines.model.identify import attach

            attach(message.summary, self.identified[message.path])
        self.view.show(message.summary)
        self.tokens.show(message.summary, self.view.token)
        self.post_message(self.Shown(message.path, message.summary))
        self.mark_loading(None)
        self.border_title = escape(printable(posixpath.basename(message.path)))
        self._start_acceptance(message.path, message.summary)

    # ----- token cursor and first-k values

    def move_token(self, delta: int) -> None:
        self.view.move_token(delta)
        self.tokens.table.set_cursor(self.view.token)

    def on_descendant_blur(self, event) -> None:
        # tab into the token table scrolled the pane down to it; once the focus has left the
        # pane, the sample's header (path, drafter line, slot table) is shown again
        self.call_after_refresh(self._header_back)

    def _header_back(self) -> None:
        focused = self.screen.focused if self.is_attached else None
        if focused is None or self not in focused.ancestors:
            self.scroll_home(animate=False, immediate=True)

    def on_token_table_cursor_moved(self, message: TokenTable.CursorMoved) -> None:
        self.view.set_token(message.index)

    def change_k(self, delta: int) -> None:
        k = max(K_RANGE[0], min(K_RANGE[1], self.k + delta))
        if k != self.k:
            self.k = k
            self.say(f"first {k} values per token")
            if self.shown:
                self.follow(self.shown)

    # ----- the drafter's acceptance (--drafter)

    def _start_acceptance(self, path: str, summary: Summary) -> None:
        analysis, target = self.analysis, self.target
        drafter = analysis.path_for("drafter", target) if target is not None else None
        if target is None or drafter is None or summary.get("error") or self.source is None:
            return
        if (off := analysis_check.acceptance_off(self.unusable)) is not None:
            self.view.show_acceptance(off)
            return
        model = analysis.path_for("model", target)
        key = acceptance.cache_key(path, drafter, model, summary=summary)
        cached = self.acceptance.get(key)
        self.view.show_acceptance(cached or acceptance.RUNNING)
        if cached is None:
            self.run_acceptance(key)

    @work(exclusive=True, group="accept")
    async def run_acceptance(self, key: tuple) -> None:
        assert self.source is not None
        path, drafter, model = key[:3]
        result = await acceptance.run_accept(self.source, path, drafter, model)
        shown = await asyncio.to_thread(acceptance.decode_guesses, result, self.analysis, self.target, self.source)
        self.post_message(acceptance.AcceptanceLoaded(key, shown))

    def on_acceptance_loaded(self, message: acceptance.AcceptanceLoaded) -> None:
        message.stop()
        self.acceptance.put(message.key, message.result)
        if message.key[0] == self.shown:
            self.view.show_acceptance(message.result)

    # ----- I: identify each slot's layer (--model)

    def identify(self) -> None:
        """I: identify the sample shown, or stop the identification running."""
        if self.identifying is not None:
            self.cancel_identify()
            return
        path = self.shown
        problem, error, model = self._identify_problem(path)
        if problem is not None or model is None or path is None:
            self.say(problem or "", error=error)
            return
        self.identifying = path
        self.border_subtitle = "⟳ identifying…"
        self.say(f"⟳ identifying {printable(posixpath.basename(path))}: running "
                 f"{printable(posixpath.basename(model.rstrip('/')))} on {self.where}… (esc cancels)")
        self.run_identify(path, model)

    def _identify_problem(self, path: str | None) -> tuple[str | None, bool, str | None]:
        """Why I does not run on `path` (None: it runs), whether that is an error, the model."""
        analysis = self.analysis
        given = analysis.model
        if not given:
            return "no target model: start eagle3-tui with --model DIR (on the data's machine)", True, None
        model = analysis.path_for("model", self.target) if self.target is not None else None
        if "model" in self.unusable:
            return f"I needs a target model: {self.unusable['model']}", True, None
        if model is None:
            return (f"--model {printable(given)} is on another machine than the data: "
                    "the model runs next to the data"), True, None
        summary = self.view.summary
        if path is None or self.source is None or summary is None or "error" in summary:
            return "I identifies the sample shown: move onto a sample file first", True, model
        if path in self.identified:
            return f"{printable(posixpath.basename(path))}: identified already (r reloads the file)", False, model
        return None, False, model

    @work(exclusive=True, group="identify")
    async def run_identify(self, path: str, model: str) -> None:
        assert self.source is not None
        try:
            result = await self.source.identify(path, model=model)
        except SourceError as err:
            result = {"path": path, "model": model, "error": str(err)}  # as error_result makes it
        except Exception as err:  # noqa: BLE001 - the status line shows it; the app keeps running
            result = {"path": path, "model": model, "error": f"{type(err).__name__}: {err}"}
        self.post_message(Identified(path, result))

    def on_identified(self, message: Identified) -> None:
        message.stop()
        if message.path != self.identifying:
            return  # cancelled meanwhile
        self.identifying = None
        self.border_subtitle = ""
        from eagle3_tui.engines.model.identify import attach, brief  # lazy: ~7 ms not paid at start

        got = brief(message.result)
        name = printable(posixpath.basename(message.path))
        if "error" in got:
            text = f"{name}: not identified: {printable(str(got['error']), message=True)}"
            self.say(text, error=True)
            # the status line is one line: the toast wraps the whole reason
            self.notify(text, title="Identify", severity="error", timeout=10, markup=False)
            return
        self.identified[message.path] = got
        if message.path == self.shown and self.view.summary is not None:
            kept = self.view.acceptance  # the drafter's line stays: same file, same result
            self.view.show(attach({**self.view.summary}, got))
            self.view.show_acceptance(kept)
        shown = ", ".join(s["fault"]["short"] if s.get("fault") else "?" if s["boundary"] is None
                          else str(s["boundary"]) for s in got["slots"])
        self.say(f"{name}: slots at b {shown} (b* in the table: identified against the model)")

    def cancel_identify(self) -> None:
        self.workers.cancel_group(self, "identify")
        self.identifying = None
        self.border_subtitle = ""
        self.say("identification cancelled")
