"""The first bytes of a file as text: what the TUI's text viewer shows (README.txt, config.json).

Every Source reads a bounded head (Source.read_head: LocalSource from the disk, SshSource over
SFTP), and `as_text` says whether those bytes are text: UTF-8 with no NUL byte and few control
characters. A torch zip, a pickle or a safetensors header fails that at once (NUL bytes, or
bytes that are not UTF-8), so binary files keep the loader's "not a torch file" message.
"""

from __future__ import annotations

#: the viewer reads at most this much of a file (and says when the file is longer)
TEXT_LIMIT = 256 * 1024
#: control characters other than tab, newline, carriage return and form feed a text may hold
_ALLOWED_CONTROL = {9, 10, 12, 13}


def as_text(head: bytes, truncated: bool) -> str | None:
    """The text of `head`, or None when it is not text. A multi-byte character cut by the
    bound (`truncated`) is dropped, not held against the file."""
    if b"\0" in head:
        return None
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as err:
        # only a character cut at the very end of a truncated head is forgiven
        if not truncated or err.start < len(head) - 3:
            return None
        text = head[: err.start].decode("utf-8", errors="strict")
    control = sum(1 for ch in text[:4096] if ord(ch) < 32 and ord(ch) not in _ALLOWED_CONTROL)
    if control > max(2, len(text[:4096]) // 100):
        return None
    return text.removeprefix("\ufeff")
