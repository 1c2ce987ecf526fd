"""Which machine the TUI's --model, --drafter and --tokenizer name, for data here or on a box:
the same reading as `identify` and `accept` (a model runs next to the data)."""

from eagle3_tui.target import parse_target
from eagle3_tui.ui.start.analysis import Analysis

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


def test_a_plain_tokenizer_path_decodes_a_boxs_data_here_as_the_cli_does():
    choice = Analysis.from_options(tokenizer="/tok").tokenizer_choice()
    assert choice.on_source(BOX) is None and choice.decodes_here(BOX)  # the box sends ids, text here
    assert choice.on_source(LOCAL) == "/tok" and not choice.decodes_here(LOCAL)
    from_model = Analysis.from_options(model="/models/llama").tokenizer_choice()
    assert from_model.on_source(BOX) == "/models/llama" and not from_model.decodes_here(BOX)
    on_box = Analysis.from_options(tokenizer="box:/models/llama").tokenizer_choice()
    assert on_box.on_source(BOX) == "/models/llama" and not on_box.decodes_here(BOX)
    third = Analysis.from_options(tokenizer="other:/tok").tokenizer_choice()
    assert third.on_source(BOX) is None and not third.decodes_here(BOX)
    assert "another machine" in third.finish({"ids": [1]}, BOX)["text_error"]
