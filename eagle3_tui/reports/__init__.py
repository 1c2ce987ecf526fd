"""Reports: what a view shows, as Markdown (for a bug report) and as JSON (for a script).

The compare view, the sample view and the dataset view hand the result objects they already
hold (engines/results/: ComparisonResult, Summary, findings, scan records) to the builders
here (compare.py, sample.py, dataset.py); write.py names and writes the two files into the
user's data folder. Plain Python: no Textual, no torch, nothing of the sources (the JSON's
keys are documented in docs/export.md and are kept stable: `version` says when they change).
"""
