"""Compare a training sample (A) with an inference capture (B): align, measure, name the mismatch.

    compare_files(a_path, b_path)   -> the comparison JSON object (`eagle3-tui compare --json`)
    compare(a, b)                   -> the same for two loaded Samples

run.py's Comparison owns the steps, each an object with its own inputs and typed result:
align.py's Aligner lines B's rows up with A's; metrics.py's Measurer makes the numbers (cosines,
norm ratios, errors, the cross-slot matrix) into a Measures (measures.py), each pair's by
pair_metrics.py; judge.py's Judge names the mismatch, each judgement in the file named for what
it judges: layers.py (which layers B's slots hold: order, shift), slot_noise.py (a slot noisier
than its siblings), norm.py (one side taken after a norm), final.py (the final states),
zero_states.py, nonfinite.py, padding.py; identified.py and faults.py say compare --model's exact
boundaries and capture faults. sides.py holds what they all read (the Sides) and the FindingList
they add to; thresholds.py holds every threshold with the noise it was measured against;
rounding.py how a number is written into the JSON and the messages.
"""

from eagle3_tui.engines.compare.run import compare, compare_files
from eagle3_tui.engines.compare.thresholds import (
    BF16_ATOL,
    BF16_RTOL,
    FIRST_K,
    LAG_ROWS,
    MATCH_COS,
    MAX_LAG,
    NORM_FIT_RESIDUAL,
    RATIO_CV,
    SCALE_TOL,
    SHIFT_GAIN,
    UNRELATED_COS,
)

__all__ = [
    "BF16_ATOL", "BF16_RTOL", "FIRST_K", "LAG_ROWS", "MATCH_COS", "MAX_LAG", "NORM_FIT_RESIDUAL",
    "RATIO_CV", "SCALE_TOL", "SHIFT_GAIN", "UNRELATED_COS", "compare", "compare_files",
]
