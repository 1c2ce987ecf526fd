"""The dataset view's progress line says what the scan read, not the files' sizes: a quick scan
of 64 MiB samples reads ~0.5 MiB of each (issue 25), and the time left follows the files read
this run (cached files cost nothing)."""

from __future__ import annotations

from eagle3_tui.dataset.pipeline import progress_text

MIB = 1 << 20


def test_the_line_counts_bytes_read_and_times_the_rest_by_files_read():
    p = {"files_total": 100, "files_done": 20, "files_read": 10, "listing_done": True, "seconds": 2.0,
         "bytes_done": 20 * 64 * MIB, "bytes_total": 100 * 64 * MIB, "bytes_read": 10 * 465 * 1024}
    text = progress_text(p, 20, 2.0, cancelled=False)
    assert "20% · 20/100 files" in text
    assert "read 4.54 MiB (0.45 MiB a file, 2.27 MiB/s)" in text
    assert "640" not in text and "1280" not in text  # the sizes of the files are not what was read
    assert text.endswith("ETA 16 s")  # 80 files left at 10 files per 2 s


def test_before_any_file_is_read_no_rate_is_made_up():
    p = {"files_total": 0, "files_done": 0, "listing_done": False, "seconds": 0.5}
    text = progress_text(p, 0, 0.5, cancelled=False)
    assert text == " 0/0+ files"
