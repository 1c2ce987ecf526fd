"""The whole dataset at once, on this machine: a scan through a Source (engines/scan/records.py does the
reading next to the data), records kept in a cache, the findings over them, then the layers and
the acceptance of a few representatives. Used by `eagle3-tui scan` and the TUI's dataset view,
both through pipeline.py; imports no Textual.

    pipeline.py        DatasetPipeline(source, path, ScanOptions).events(): the steps as typed events
    shapes.py          the TypedDicts the steps hand on: DatasetRecord, the layers entry, the acceptance plan
    stream.py          scan_dataset(source, path, options, cache=) -> records; findings_for(...)
    findings.py        the dataset findings over the records; layer_group.py the change-point search
    cache.py           ScanCache: SQLite in the user cache folder, never in the dataset
    layers.py          --model: the representatives identified, the layers named
    acceptance.py      --accept: a few files per group scored with the drafter
    findings_child.py  the layer_group search in a child process (the TUI never imports torch)
    ray_runner.py      scan --ray: RaySource, the scan's files read as Ray tasks (engines/scan/ray_tasks.py)
    ray_models.py      scan --ray --model/--accept: the model work on Ray actors, one model each
    ahead.py           the model steps' calls kept in flight on a source that runs several at once
"""
