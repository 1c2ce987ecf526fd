"""P on an inference capture: find the training sample that holds its prompt (dataset/pair.py,
from the scan records: a second pairing reads no sample), pin it as A, the capture as B, and
open the compare view. A part of the main screen (MainScreen inherits it)."""

from __future__ import annotations

import posixpath
from typing import Any

from textual import work

from eagle3_tui.names import printable
from eagle3_tui.sources.base import SourceError
from eagle3_tui.ui.shared.format import human_size
from eagle3_tui.ui.browser.pins import Pin


def pair_dataset(root: str, capture: str) -> str:
    """Where P looks for the capture's training sample: the folder the app was opened on, unless the
    capture sits right in it (or outside it): then the folder above the capture's."""
    root = root.rstrip("/") or "/"
    folder = posixpath.dirname(capture)
    if folder.rstrip("/") == root or not capture.startswith(root.rstrip("/") + "/"):
        return posixpath.dirname(folder) or "/"
    return root


class PairCapture:
    """action_pair_capture for the main screen (its source, target, pins, status line)."""

    source: Any
    target: Any
    where: str

    def action_pair_capture(self) -> None:
        capture = self.file_under_cursor()  # type: ignore[attr-defined]
        say = self.status_line.say  # type: ignore[attr-defined]
        if self.source is None or self.target is None or capture is None:
            say("put the cursor on an inference capture, then P finds its training sample", error=True)
            return
        dataset = pair_dataset(self.target.path, capture)
        say(f"pairing {printable(posixpath.basename(capture))} with the samples under {printable(dataset)}… "
            "(the first time scans them; esc cancels)")
        self._pairing = self.run_pairing(capture, dataset)

    def cancel_pairing(self) -> bool:
        """esc while P runs: stop its scan (the records read so far stay in the cache)."""
        worker = getattr(self, "_pairing", None)
        if worker is None or worker.is_finished:
            return False
        worker.cancel()
        self._pairing = None
        self.status_line.say("pairing cancelled")  # type: ignore[attr-defined]
        return True

    @work(exclusive=True, group="pair")
    async def run_pairing(self, capture: str, dataset: str) -> None:
        from eagle3_tui.dataset.pair import pair_capture

        say = self.status_line.say  # type: ignore[attr-defined]
        name = printable(posixpath.basename(capture))

        def scanning(progress: dict[str, Any]) -> None:
            done, total = progress.get("files_done") or 0, progress.get("files_total") or 0
            of = f" of {total:,}" if progress.get("listing_done") else ""
            say(f"pairing {name}: {done:,}{of} files scanned, {human_size(progress.get('bytes_read') or 0)} read… "
                "esc cancels")

        try:
            result = await pair_capture(self.source, capture, dataset, top=1, skip_folder=True, progress=scanning)
        except SourceError as err:
            say(f"cannot pair {name}: {err}", error=True)
            return
        except Exception as err:  # noqa: BLE001 - shown in the status line; the app keeps running
            say(f"cannot pair {name}: {type(err).__name__}: {err}", error=True)
            return
        if result.get("error") or not result["matches"]:
            why = result.get("error") or f"no training sample holds its prompt (none under {printable(dataset)})"
            say(f"{name}: {why}", error=True)
            return
        best = result["matches"][0]
        place = self._place()  # type: ignore[attr-defined]
        self.pins.pin_training(Pin.at(posixpath.join(dataset, best["path"]), self.where, place))  # type: ignore[attr-defined]
        self.pins.choose_inference(Pin.at(capture, self.where, place))  # type: ignore[attr-defined]
        self.action_open_compare()  # type: ignore[attr-defined]
        how = "token ids" if best["how"] == "ids" else "hidden states"
        if result.get("capture_ids_blank"):  # all padding: not used, and said
            how += f" ({result['capture_ids_blank']})"
        say(f"{name} paired with {printable(best['path'])} by {how}: {best['shared_tokens']} shared tokens, "
            f"score {best['score']:.2f} ({result['files_read']} of {result['files']} files read)")
