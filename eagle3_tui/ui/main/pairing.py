"""P on an inference capture: find the training sample that holds its prompt (dataset/pair.py,
from the scan records: a second pairing reads no sample), pin it as A, the capture as B, and
open the compare view. P on a training sample (loss mask on, where the capture has none) pins it
as A and the capture that holds its prompt as B. The main screen holds one (its `pairing`)."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Protocol

from eagle3_tui.names import printable
from eagle3_tui.sources.base import Source, SourceError
from eagle3_tui.ui.browser.pins import ComparePins, Pin
from eagle3_tui.ui.main.host import Parts
from eagle3_tui.ui.shared.format import human_size

if TYPE_CHECKING:
    from textual.worker import Worker

    from eagle3_tui.engines.results.scan import ScanProgressData
    from eagle3_tui.target import Target


def pair_dataset(root: str, capture: str) -> str:
    """Where P looks for the capture's training sample: the folder the app was opened on, unless the
    capture sits right in it (or outside it): then the folder above the capture's."""
    root = root.rstrip("/") or "/"
    folder = posixpath.dirname(capture)
    if folder.rstrip("/") == root or not capture.startswith(root.rstrip("/") + "/"):
        return posixpath.dirname(folder) or "/"
    return root


class PairsCaptures(Parts, Protocol):
    """What P needs of the main screen besides its parts: the cursor's file, the pins, the compare view."""

    pins: ComparePins

    def file_under_cursor(self) -> str | None: ...

    def canonical_target(self) -> Target | None: ...

    def action_open_compare(self) -> None: ...


class Pairing:
    """P on the main screen (its source, target, pins, status line)."""

    def __init__(self, screen: PairsCaptures) -> None:
        self.screen = screen
        self._worker: Worker[None] | None = None

    def start(self) -> None:
        screen = self.screen
        capture = screen.file_under_cursor()
        say = screen.status_line.say
        if screen.source is None or screen.target is None or capture is None:
            say("put the cursor on an inference capture (or a training sample), then P pairs it", error=True)
            return
        dataset = pair_dataset(screen.target.path, capture)
        say(f"pairing {printable(posixpath.basename(capture))} with the samples under {printable(dataset)}… "
            "(the first time scans them; esc cancels)")
        self._worker = screen.run_worker(self._run(screen.source, capture, dataset), name="run_pairing",
                                         group="pair", exclusive=True)

    def cancel(self) -> bool:
        """esc while P runs: stop its scan (the records read so far stay in the cache)."""
        worker = self._worker
        if worker is None or worker.is_finished:
            return False
        worker.cancel()
        self._worker = None
        self.screen.status_line.say("pairing cancelled")
        return True

    async def _run(self, source: Source, capture: str, dataset: str) -> None:
        # lazy: hashlib and the pairing, off the first frame
        from eagle3_tui.dataset.pair import pair_either

        screen = self.screen
        say = screen.status_line.say
        name = printable(posixpath.basename(capture))

        def scanning(progress: ScanProgressData) -> None:
            done, total = progress.get("files_done") or 0, progress.get("files_total") or 0
            of = f" of {total:,}" if progress.get("listing_done") else ""
            say(f"pairing {name}: {done:,}{of} files scanned, {human_size(progress.get('bytes_read') or 0)} read… "
                "esc cancels")

        try:
            result = await pair_either(source, capture, dataset, progress=scanning)
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
        its_capture = result.get("sample_capture")  # P on a training sample: the capture that holds its prompt
        if "sample_capture" in result and its_capture is None:
            say(f"{name}: a training sample (loss on {result.get('capture_loss_ones')} rows) that no capture under "
                f"{printable(dataset)} pairs with (P on a capture pairs it)", error=True)
            return
        best = its_capture or result["matches"][0]
        other = posixpath.join(dataset, best["path"])
        place = screen.canonical_target()
        sample, capture_path = (capture, other) if its_capture else (other, capture)
        screen.pins.pin_training(Pin.at(sample, screen.where, place))
        screen.pins.choose_inference(Pin.at(capture_path, screen.where, place))
        screen.action_open_compare()
        how = "token ids" if best["how"] == "ids" else "hidden states"
        if result.get("capture_ids_blank"):  # all padding: not used, and said
            how += f" ({result['capture_ids_blank']})"
        if its_capture:
            said = f"training sample {name} paired with capture {printable(best['path'])}"
        else:
            said = f"{name} paired with {printable(best['path'])}"
        say(f"{said} by {how}: {best['shared_tokens']} shared tokens, "
            f"score {best['score']:.2f} ({result['files_read']} of {result['files']} files read)")
