"""Make the README's SVG screenshots from the demo dataset: `python scripts/screenshots.py [OUT]`.

Writes the demo dataset (seed 0) to a temporary folder, drives the real app headless at
120x40 with the keys a user would press, and saves:
  screenshots/browser.svg   browser with the sample view of data_0.ckpt
  screenshots/padded.svg    a right-padded sample, token cursor in the padding
  screenshots/help.svg      the help screen
  screenshots/compare_permuted_{120x40,80x24}.svg
                            the compare view: data_10.ckpt against a capture with permuted slots
Paths on screen are relative to the demo folder, so the images do not depend on where it ran.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SIZE = (120, 40)


async def wait_for(pilot, condition, timeout: float = 60.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise TimeoutError("the app did not reach the expected state")
        await pilot.pause(0.05)
    await pilot.pause()


async def shoot(out: Path) -> list[Path]:
    from eagle3_tui.sources.local import LocalSource
    from eagle3_tui.ui.app import Eagle3App
    from eagle3_tui.ui.start.connect import Opened

    async def relative(text, **_options):  # keep the temporary folder's name off the pictures
        return Opened(LocalSource(), text, "local")

    written: list[Path] = []

    def save(app, name: str, title: str) -> None:
        path = out / name
        path.write_text(app.export_screenshot(title=title))
        written.append(path)

    app = Eagle3App("train/rows_0-2000", opener=relative)
    async with app.run_test(size=SIZE) as pilot:
        main = app.main_screen

        def showing(name: str):
            return lambda: (main.shown or "").endswith(name) and main.sample.loading_name is None

        await wait_for(pilot, showing("data_0.ckpt"))
        await pilot.press(*["right_square_bracket"] * 5)
        save(app, "browser.svg", "eagle3-tui: browser and sample view")

        await pilot.press("n", "n")  # data_2.ckpt: 47 padding rows after 104 real tokens
        await wait_for(pilot, showing("data_2.ckpt"))
        await pilot.press(*["right_curly_bracket"] * 7)
        save(app, "padded.svg", "eagle3-tui: a right-padded SpecForge sample")

        await pilot.press("question_mark")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "HelpScreen")
        save(app, "help.svg", "eagle3-tui: keys")

    for size in (SIZE, (80, 24)):
        app = Eagle3App("train/rows_0-2000/data_10.ckpt", opener=relative)
        async with app.run_test(size=size) as pilot:
            main = app.main_screen
            await wait_for(pilot, lambda: (main.shown or "").endswith("data_10.ckpt"))
            await pilot.press("t", "h", "h", "g", "l")  # pin A, then up to the demo root and into infer/
            await wait_for(pilot, lambda: main.path.endswith("infer") and main.listing_done)
            await pilot.press("slash", *"permuted", "enter", "i", "c")
            await wait_for(pilot, lambda: getattr(app.screen, "result", None) is not None)
            await pilot.press("w")
            save(app, f"compare_permuted_{size[0]}x{size[1]}.svg",
                 "eagle3-tui: compare view, slots in another order")
    return written


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else REPO / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    out = out.resolve()
    from eagle3_tui.demo.dataset import write_demo

    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "eagle3-demo"
        write_demo(str(demo), seed=0)
        os.chdir(demo)
        for path in asyncio.run(shoot(out)):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
