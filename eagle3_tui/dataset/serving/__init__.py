"""Will it serve right? The boundaries each serving engine, range of releases and runner will
capture for a drafter's config.json, against the boundaries the dataset holds (`scan --model`'s
layers); `eagle3-tui serve-check` and the dataset view's serve-check.

    data = data_from_layers(layers_entries)            # the majority's boundaries, the other groups
    result = check(drafter_config, data, arch="LlamaForCausalLM", asked={"vllm": "0.33.0"})
    text = format_check(result)                        # the verdict, the fix, the rows, the findings

One module per idea: capture.py (the Capture shape and the helpers a rule builds it with),
versions.py (release numbers, ranges, --engine), one module per engine with its hand-read CHANGES
(vllm.py, sglang.py, tokenspeed.py, trtllm.py, specforge.py), table.py (the ranges run and merged),
findings.py, norm.py, fix.py, check.py, result.py (the answer's shape), report.py (the text).
Plain Python (no Textual, no torch); docs/serving.md says it for users, with every source.
"""

from eagle3_tui.dataset.serving.capture import bset
from eagle3_tui.dataset.serving.check import check, data_from_layers, exit_code, in_force_bad
from eagle3_tui.dataset.serving.report import format_check, mark, table_rows, verdict
from eagle3_tui.dataset.serving.result import ServingCheck, ServingData
from eagle3_tui.dataset.serving.table import EngineCapture
from eagle3_tui.dataset.serving.versions import NAMES, label, parse_engine

__all__ = ["NAMES", "EngineCapture", "ServingCheck", "ServingData", "bset", "check", "data_from_layers",
           "exit_code", "format_check", "in_force_bad", "label", "mark", "parse_engine", "table_rows", "verdict"]
