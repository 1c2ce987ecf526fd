"""Which machine the TUI's --model, --drafter and --tokenizer name, for data here or on a box:
the same reading as `identify` and `accept` (a model runs next to the data)."""

from eagle3_tui.target import parse_target
from eagle3_tui.ui.analysis import Analysis

BOX = parse_target("box:/data/rows_0-2000")
LOCAL = parse_target("/data/rows_0-2000")


def test_a_plain_model_or_drafter_path_is_on_the_datas_machine():
    a = Analysis.from_options(model="/models/llama", drafter="/drafters/d", tokenizer="/tok")
    assert a.path_for("model", BOX) == "/models/llama"  # as `identify box:... --model /m` reads it
    assert a.path_for("drafter", BOX) == "/drafters/d"
    assert a.path_for("model", LOCAL) == "/models/llama"
    assert a.path_for("tokenizer", LOCAL) == "/tok"
    assert a.path_for("tokenizer", BOX) is None  # a plain tokenizer path is on this machine


def test_a_tokenizer_taken_from_the_model_folder_is_where_the_model_is():
    a = Analysis.from_options(model="/models/llama")
    assert a.tokenizer_from_model and a.path_for("tokenizer", BOX) == "/models/llama"


def test_a_folder_on_another_host_is_not_used():
    a = Analysis.from_options(model="other:/models/llama", drafter="box:/drafters/d")
    assert a.path_for("model", BOX) is None
    assert a.path_for("drafter", BOX) == "/drafters/d"
    assert a.path_for("drafter", LOCAL) is None
