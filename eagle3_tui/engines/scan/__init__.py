"""The per-file part of a dataset scan, shipped to the box: scan_tree (records.py) over the listing
(walk.py), read here (local_run.py, pool.py) or as Ray tasks (ray_tasks.py); one file's record
(file_record.py) and one sample's numbers (measure.py: the rows row_reads.py picks and reads,
rows_pass.py's pass over them, rows.py's statistics and signature, fingerprint.py, budget.py's
counted reads); options, the pairing print, the drafter's agreement."""
