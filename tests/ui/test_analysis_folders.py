"""The TUI reads --vocab-mapping by the CLI's one rule for folder options (issue 20, item 5): a
plain path or the data's own host:path is on the data's machine; another host is not used."""

from eagle3_tui.target import parse_target
from eagle3_tui.ui.start.analysis import Analysis

BOX = parse_target("box:/data/rows_0-2000")
LOCAL = parse_target("/data/rows_0-2000")


def test_a_plain_vocab_mapping_path_is_on_the_datas_machine():
    a = Analysis.from_options(vocab_mapping="/maps/vocab_mapping.pt")
    assert a.path_for("vocab_mapping", BOX) == "/maps/vocab_mapping.pt"  # as `scan box:... --vocab-mapping`
    assert a.path_for("vocab_mapping", LOCAL) == "/maps/vocab_mapping.pt"


def test_a_vocab_mapping_on_the_datas_host_or_another():
    assert Analysis.from_options(vocab_mapping="box:/m.pt").path_for("vocab_mapping", BOX) == "/m.pt"
    assert Analysis.from_options(vocab_mapping="other:/m.pt").path_for("vocab_mapping", BOX) is None
    assert Analysis.from_options(vocab_mapping="box:/m.pt").path_for("vocab_mapping", LOCAL) is None
