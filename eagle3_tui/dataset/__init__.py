"""The whole dataset at once: a scan through a Source (samples/scan.py does the reading next to
the data), records kept in a cache keyed by host, path, size and mtime, and the findings over
them. Used by `eagle3-tui scan` and the TUI's dataset view; imports no Textual.

    scan.py    scan_dataset(source, path, ...) -> records as they come; findings_for(...)
    cache.py   ScanCache: SQLite in the user cache folder, never in the dataset
"""
