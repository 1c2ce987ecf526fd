"""Running one command module (eagle3_tui.commands.X) in-process, as `eagle3-tui X ...` would."""

from __future__ import annotations

import argparse


def run_command(command, argv, capsys) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `command.run` on argv (paths may be Path objects)."""
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    rc = command.run(parser.parse_args([str(a) for a in argv]))
    out = capsys.readouterr()
    return rc, out.out, out.err
