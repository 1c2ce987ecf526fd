"""One module per CLI subcommand, each with add_arguments(parser) and run(args) -> exit code.

Keep module-level imports cheap (no torch, no textual): `eagle3-tui --help` imports them all.
"""
