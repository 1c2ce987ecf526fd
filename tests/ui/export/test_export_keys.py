"""e and y in the sample view, the compare view and the dataset view: the report is written into
the user's data folder (DATA_DIR/exports, never the dataset), the status line says where, and
its Markdown and JSON hold the findings and the numbers the view shows; y hands the Markdown to
the clipboard (App.copy_to_clipboard: OSC 52)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eagle3_tui.ui.compare.screen import CompareScreen
from eagle3_tui.userdirs import data_dir
from tests.helpers.compare_view import SHARD, compare_done, go_to, started
from tests.helpers.dataset_view import open_dataset, scan_done
from tests.helpers.tui import make_app, screen_text, wait_until

SIZES = [(120, 40), (80, 24)]


def exported() -> list[Path]:
    folder = data_dir() / "exports"
    return sorted(folder.glob("*.md")) if folder.is_dir() else []


def status_of(app, selector: str) -> str:
    return app.screen.query_one(selector).text


def read_pair(md: Path) -> tuple[str, dict]:
    js = md.with_suffix(".json")
    assert js.is_file(), "the JSON is written next to the Markdown"
    data = json.loads(js.read_text(), parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))
    assert data["format"] == "eagle3-tui-export" and data["version"] == 1
    return md.read_text(), data


def without_time(md: str) -> str:
    return "\n".join(line for line in md.splitlines() if not line.startswith("Exported "))


def nothing_written_under(root: Path) -> None:
    assert not [p for p in root.rglob("*") if p.suffix in (".md", ".json") and "exports" in p.parts]


@pytest.mark.parametrize("size", SIZES)
async def test_e_and_y_in_the_sample_view(demo, size):
    app = make_app(demo / SHARD / "data_0.ckpt")
    async with app.run_test(size=size) as pilot:
        main = app.main_screen
        await wait_until(pilot, lambda: (main.sample.summary or {}).get("path", "").endswith("data_0.ckpt"),
                         what="the sample view")
        summary = main.sample.summary
        await pilot.press("e")
        files = exported()
        assert len(files) == 1 and "data_0.ckpt" in files[0].name and files[0].name.endswith(".md")
        said = status_of(app, "#status")
        assert "exported" in said and "exports" in said and files[0].stem[:15] in said
        md, data = read_pair(files[0])
        assert data["view"] == "sample" and data["sample"]["path"].endswith("data_0.ckpt")
        parts = {p["label"]: p for p in data["parts"]}
        assert set(parts) == {"aux0", "aux1", "aux2", "final"}
        for label, part in zip(("aux0", "aux1", "aux2"), summary["slots"]):
            assert parts[label]["norm_mean"] == pytest.approx(part["norm_mean"])
            assert f"| {label} |" in md and f"{part['norm_mean']:.4g}" in md
        assert f"T {summary['tokens']:,} (valid {summary['valid_tokens']:,})" in md
        nothing_written_under(demo)

        await pilot.press("y")
        assert without_time(app.clipboard) == without_time(md)
        assert "clipboard" in status_of(app, "#status")


async def test_e_with_nothing_shown_says_so(demo):
    app = make_app(demo)
    async with app.run_test(size=(80, 24)) as pilot:
        await started(pilot)
        await go_to(pilot, demo, "infer")
        await pilot.press("e")
        assert exported() == []
        assert "nothing to export" in status_of(app, "#status")


@pytest.mark.parametrize("size", SIZES)
async def test_e_and_y_in_the_compare_view(demo, size):
    app = make_app(demo)
    async with app.run_test(size=size) as pilot:
        await started(pilot)
        await go_to(pilot, demo / SHARD, "data_9.ckpt")
        await pilot.press("t")
        await go_to(pilot, demo / "infer", "fault_layers_some_s9.pt")
        await pilot.press("c")
        assert isinstance(app.screen, CompareScreen)
        await compare_done(pilot)
        view = app.screen
        result = view.result
        codes = [f["code"] for f in result["findings"]]
        assert "slot_mismatch" in codes
        worst = result["slots"][2]
        shown = f"{worst['cos_mean']:.4f}"
        if size[1] >= 40:
            assert shown in screen_text(app), "the view shows the pair's mean cosine"
        await pilot.press("e")
        files = exported()
        assert len(files) == 1 and "data_9.ckpt-vs-fault_layers_some_s9.pt" in files[0].name
        assert "exported" in status_of(app, "#cmp-status")
        md, data = read_pair(files[0])
        assert [f["code"] for f in data["findings"]] == codes
        assert data["slots"][2]["cos_mean"] == pytest.approx(worst["cos_mean"])
        for got, want in zip(data["matrix"], result["matrix"], strict=True):
            assert got == pytest.approx(want)
        assert "slot_mismatch" in md and f"| B2 ~ A2 | {shown} |" in md
        assert result["findings"][0]["message"].split(";")[0] in md
        nothing_written_under(demo)

        await pilot.press("y")
        assert without_time(app.clipboard) == without_time(md)
        assert "clipboard" in status_of(app, "#cmp-status")


@pytest.mark.parametrize("size", SIZES)
async def test_e_and_y_in_the_dataset_view(planted, size):
    app = make_app(planted)
    async with app.run_test(size=size) as pilot:
        screen = await open_dataset(pilot, planted, on="README.txt")
        await pilot.press("e")  # most often still scanning: nothing yet, and it says why
        if not exported():
            # the status line may already show the scan's progress again: the toast stays
            toasts = " ".join(str(n.message) for n in app._notifications)
            assert "nothing to export yet" in toasts
        # else the small scan had ended before the key arrived, and that press exported
        await scan_done(pilot, screen)
        before = set(exported())
        await pilot.press("e")
        files = sorted(set(exported()) - before)
        assert len(files) == 1 and "_dataset_" in files[0].name
        assert "exported" in status_of(app, "#ds-status")
        md, data = read_pair(files[0])
        assert data["view"] == "dataset" and data["counts"]["files"] == len(screen.rows)
        assert [f["code"] for f in data["findings"]] == [f["code"] for f in screen.findings]
        for f in screen.findings:
            assert f"`{f['code']}`" in md
        nan = next(f for f in data["files"] if f["path"] == "rows_0-12/data_2.ckpt")
        record = next(r for r in screen.rows.records if r.path == "rows_0-12/data_2.ckpt")
        assert nan["status"] == "error"
        assert [s["nan"] for s in nan["slots"]] == [s.nan for s in record.slots] and sum(s.nan for s in record.slots)
        assert "rows_0-12/data_2.ckpt" in md
        nothing_written_under(planted)

        await pilot.press("y")
        assert without_time(app.clipboard) == without_time(md)
        assert "clipboard" in status_of(app, "#ds-status")
