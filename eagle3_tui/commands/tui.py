"""`eagle3-tui [TARGET]`: open the TUI. Imports Textual only when the app starts; never torch."""

from __future__ import annotations

import argparse
import os
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="eagle3-tui",
        description="Browse EAGLE-3 hidden-state files locally or over SSH. "
        "Subcommands (summary, ls, compare, demo, bookmarks) run without the TUI; "
        "see `eagle3-tui --help`.",
    )
    parser.add_argument("target", nargs="?", default=".", metavar="TARGET",
                        help="folder or file: /data/x, host:/data/x, user@host:2222:/data/x (default: .)")
    parser.add_argument("--remote-python", metavar="P",
                        help="Python on the remote host that has torch (default: python3)")
    parser.add_argument("--accept-new-host-key", action="store_true",
                        help="trust an SSH host key seen for the first time without asking")
    parser.add_argument("--data-dir", metavar="D",
                        help="where bookmarks and settings live (default: the user data folder)")
    parser.add_argument("--tokenizer", metavar="PATH",
                        help="tokenizer.json or a model folder with one: a plain path is on this "
                        "machine (it decodes a box's data here too), host:/path on the data's host; "
                        "tokens as text (default: $EAGLE3_TUI_TOKENIZER, else --model's)")
    parser.add_argument("--model", metavar="DIR",
                        help="the target model's Hugging Face folder, on the data's host: which layer "
                        "each slot holds")
    parser.add_argument("--drafter", metavar="DIR",
                        help="the trained EAGLE-3 drafter's folder, on the data's host: acceptance")
    parser.add_argument("--vocab-mapping", metavar="FILE",
                        help="the drafter's vocab_mapping.pt, on the data's host: per sample, the share of loss tokens in the "
                        "draft vocabulary (default: DATASET/vocab_mapping/vocab_mapping.pt above the folder)")
    return parser


def run_app(target: str = ".", *, remote_python: str | None = None,
            accept_new_host_key: bool = False, data_dir: str | None = None,
            tokenizer: str | None = None, model: str | None = None, drafter: str | None = None,
            vocab_mapping: str | None = None) -> int:
    from eagle3_tui.ui.analysis import Analysis
    from eagle3_tui.ui.app import Eagle3App

    app = Eagle3App(target, remote_python=remote_python, accept_new_host_key=accept_new_host_key,
                    data_dir=data_dir, analysis=Analysis.from_options(tokenizer, model, drafter, vocab_mapping))
    app.run()
    return int(app.return_code or 0)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    data_dir = os.path.abspath(args.data_dir) if args.data_dir else None
    return run_app(args.target, remote_python=args.remote_python,
                   accept_new_host_key=args.accept_new_host_key, data_dir=data_dir,
                   tokenizer=args.tokenizer, model=args.model, drafter=args.drafter,
                   vocab_mapping=args.vocab_mapping)
