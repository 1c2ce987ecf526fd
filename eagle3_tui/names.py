"""File names and text made safe to show on a terminal, for the CLI and the TUI alike (stdlib only).

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


def terminal_text(text: str) -> str:
    """Text for a terminal, many lines at once: each line through `printable(message=True)`;
    the newlines and tabs between them stay. What every CLI output goes through (TerminalSafe)."""
    if text.isprintable():
        return text
    return "\n".join("\t".join(printable(part, message=True) for part in line.split("\t"))
                     for line in text.split("\n"))


def json_for_terminal(text: str) -> str:
    """JSON text with every character a terminal would act on written as a \\u escape: the same
    JSON value, but nothing in it can steer the terminal (json.dumps leaves DEL, C1 controls,
    bidi overrides and, without ensure_ascii, lone surrogates as they are)."""
    if text.isascii():
        return text.replace("\x7f", "\\u007f")
    out = []
    for ch in text:
        if ch.isprintable() or ch == "\n":
            out.append(ch)
        elif ord(ch) > 0xFFFF:
            code = ord(ch) - 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{ord(ch):04x}")
    return "".join(out)


class TerminalSafe:
    """sys.stdout / sys.stderr while a command runs (cli.main): every write goes through
    `terminal_text`, so no message, note, tag, path or token text can retitle, recolour or move
    the terminal, whoever forgot to escape it. `raw` is the stream underneath, for the few
    writes that are bytes on purpose (the progress line's carriage return, NUL-separated paths)."""

    def __init__(self, stream) -> None:
        self.raw = stream

    def write(self, text: str) -> int:
        return self.raw.write(terminal_text(text))

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):
        return getattr(self.raw, name)


def unfiltered(stream):
    """The stream under a TerminalSafe (the stream itself otherwise)."""
    return getattr(stream, "raw", stream) if isinstance(stream, TerminalSafe) else stream
