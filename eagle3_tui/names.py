"""File names made safe to show on a terminal, for the CLI and the TUI alike (stdlib only).

A name is bytes the user did not choose: ESC sequences recolour or move the cursor, CR/LF
break a row in two, bidi overrides reorder what follows. Every place that shows a name (or a
message that carries one) passes it through `printable` first.
"""

from __future__ import annotations


def printable(name: str, *, message: bool = False) -> str:
    """A name on one terminal line, unable to steer the terminal: control and format characters
    and non-UTF-8 bytes are shown as escapes (a backslash too, so the result is unambiguous).

    `message=True` is for a sentence that may carry a name (an error, a status line): the
    same escapes, but a backslash is left as it is, so text that already quotes a name with
    its escapes is not doubled.
    """
    if name.isprintable() and (message or "\\" not in name):
        return name  # the usual case, checked in C: browser rows are drawn on every key
    out = []
    for ch in name:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif (ch == "\\" and not message) or not ch.isprintable():  # CR/LF, ESC, bidi overrides
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out)
