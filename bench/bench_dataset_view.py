"""Dataset view benchmark (issue 11): 100,000 records streaming into the view.

- dataset_view_key_latency: while 100,000 records stream in (pages of 500, as a remote scan
  sends them), the time from a key press (j/k in the table) to the frame that shows the moved
  cursor, 95th percentile, vs the same key once every record is in. Target: figure < 50 ms.
  The details give when the first rows were drawn (before the scan ended: yes/no) and the
  process's peak RSS (target < 400 MiB), with the RSS before and after the findings (their
  torch part runs in a child process; the details say whether torch came into this one).

Records are copies of one real record of a demo-transformer sample (paths, indices and norms
varied): the view's load without writing 100,000 files on a shared 2-core machine. The record is
built in a child process (torch stays out of the measured one) and
each copy is decoded from JSON, as a remote scan's page is.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COUNT = 100_000


def _rss_mib() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


_TEMPLATE_CODE = r"""
import json, sys
from pathlib import Path
import torch
from eagle3_tui.demo.model import build_model
from eagle3_tui.engines.scan.file_record import scan_file
tmp = Path(sys.argv[1])

model = build_model(seed=0)
ids = torch.randint(20, model.cfg.vocab, (1, 96))
states, final = model.boundaries(ids, torch.float32)
aux = torch.cat([states[b] for b in model.cfg.aux_boundaries], dim=-1)
path = tmp / "data_0.ckpt"
tmp.mkdir(exist_ok=True)
torch.save({"input_ids": ids[0], "loss_mask": torch.ones(96, dtype=torch.long),
            "aux_hidden_state": aux, "hidden_state": final}, path)
st = path.stat()
print(json.dumps(scan_file(str(tmp), "data_0.ckpt", st.st_size, st.st_mtime)))
"""


def _template(tmp: Path) -> dict:
    """One real scan record, built in a child process: torch stays out of the measured one
    (the view runs the findings' torch part in a child process too)."""
    import subprocess

    out = subprocess.run([sys.executable, "-c", _TEMPLATE_CODE, str(tmp / "template")], check=True, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    return json.loads(out.stdout)


async def _run(tmp: Path, template: dict) -> dict:
    from textual import events

    from eagle3_tui.sources.local import LocalSource
    from eagle3_tui.ui.app import Eagle3App
    from eagle3_tui.ui.dataset.screen import DatasetScreen
    from eagle3_tui.ui.start.connect import Opened

    class Stream(LocalSource):
        ended = None

        async def scan(self, path, **kwargs):
            # each record decoded from JSON, as a remote scan's page is (deepcopy cost 4x that
            # on the event loop: the bench's own load, not the view's)
            line = json.dumps(template)
            for start in range(0, COUNT, 500):
                for i in range(start, min(COUNT, start + 500)):
                    r = json.loads(line)
                    r["path"] = f"rows_{i // 2000 * 2000}-{i // 2000 * 2000 + 2000}/data_{i}.ckpt"
                    r["index"], r["fingerprint"] = i, f"{i:024x}"
                    for j, s in enumerate(r["slots"]):
                        s["norm_mean"] *= 1 + ((i * 7919 + j) % 101 - 50) / 1000
                    yield r
                yield {"progress": {"files_done": start + 500, "files_total": COUNT, "bytes_done": 0,
                                    "bytes_total": 0, "seconds": 1.0, "listing_done": True}}
                await asyncio.sleep(0.005)  # the network or the pool between pages
            Stream.ended = time.perf_counter()

    source = Stream()

    async def opener(text, **_kw):
        return Opened(source, str(tmp), "local")

    app = Eagle3App(str(tmp), opener=opener)
    #: (when, the table's cursor row drawn in that frame or None)
    frames: list[tuple[float, int | None]] = []
    drawn: list[int | None] = [None]
    original = app._display

    def display(*args, **kwargs):
        frames.append((time.perf_counter(), drawn[0]))
        drawn[0] = None
        return original(*args, **kwargs)

    app._display = display  # type: ignore[method-assign]
    out: dict = {"streaming": [], "idle": []}
    async with app.run_test(size=(120, 40)):
        main = app.main_screen
        while not main.listing_done:
            await asyncio.sleep(0.01)
        rss_before = _rss_mib()
        app._driver.send_message(events.Key("D", "D"))
        while not isinstance(app.screen, DatasetScreen):
            await asyncio.sleep(0.001)
        screen = app.screen
        screen.use_cache = False
        table = screen.table
        render_line = table.render_line

        def traced(y: int):
            strip = render_line(y)
            if y > 0 and table.scroll_offset.y + y - 1 == table.cursor:
                drawn[0] = table.cursor
            return strip

        table.render_line = traced  # type: ignore[method-assign]
        while not table.lines_rendered:
            await asyncio.sleep(0.001)
        out["first_rows"] = time.perf_counter()

        async def press(key: str) -> float:
            # until the first frame that draws the cursor's row where the key moved it (this
            # loop may notice the move after that frame: waiting then for a frame after it
            # timed the next, unrelated one)
            before = table.cursor
            first = len(frames)
            sent = time.perf_counter()
            app._driver.send_message(events.Key(key, key))
            while table.cursor == before:
                await asyncio.sleep(0.0005)
            target = table.cursor
            while True:
                for when, cursor in frames[first:]:
                    if cursor == target:
                        return when - sent
                await asyncio.sleep(0.0005)

        keys = ["j"] * 3 + ["k"] * 3
        i = 0
        peak = rss_before
        while screen.state == "scanning":
            out["streaming"].append(await press(keys[i % len(keys)]))
            i += 1
            peak = max(peak, _rss_mib())
            await asyncio.sleep(0.02)
        out["rss_streamed"] = _rss_mib()
        for i in range(30):
            out["idle"].append(await press(keys[i % len(keys)]))
            await asyncio.sleep(0.01)
        while screen.state != "done":
            await asyncio.sleep(0.05)
            peak = max(peak, _rss_mib())
        out.update(rss_before=rss_before, rss_peak=peak, rss_findings=_rss_mib(), ended=Stream.ended,
                   rows=len(screen.rows), torch="torch" in sys.modules)
    return out


def bench_dataset_view() -> dict:
    sys.path.insert(0, str(REPO))
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("EAGLE3_TUI_CACHE_DIR", str(Path(tmp) / "cache"))
        template = _template(Path(tmp))
        r = asyncio.run(_run(Path(tmp), template))
    assert r["rows"] == COUNT, r["rows"]

    def p95(xs: list[float]) -> float:
        return sorted(xs)[max(0, int(round(0.95 * len(xs))) - 1)]

    figure, baseline = p95(r["streaming"]) * 1000, p95(r["idle"]) * 1000
    early = r["ended"] is not None and r["first_rows"] < r["ended"]
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "figure": figure,
        "baseline": baseline,
        "unit": "ms",
        "target": "figure < 50 ms; first rows before the scan ends; memory < 400 MiB",
        "details": f"{len(r['streaming'])} presses while {COUNT:,} records streamed in: median "
        f"{statistics.median(r['streaming']) * 1000:.1f} ms, p95 {figure:.1f} ms, max {max(r['streaming']) * 1000:.1f} ms; "
        f"after: p95 {baseline:.1f} ms. First rows drawn before the scan ended: {'yes' if early else 'NO'} "
        f"({(r['ended'] - r['first_rows']):.1f} s before). RSS: {r['rss_before']:.0f} MiB before D, "
        f"{r['rss_streamed']:.0f} MiB with {COUNT:,} records, {r['rss_findings']:.0f} MiB after the findings "
        f"(torch {'imported' if r['torch'] else 'not imported'} here), peak {max(r['rss_peak'], maxrss):.0f} MiB "
        f"(headless driver, 120x40, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)",
    }


BENCHMARKS = {"dataset_view_key_latency": bench_dataset_view}

if __name__ == "__main__":
    for name, fn in BENCHMARKS.items():
        print(name, fn())
