"""Token ids as text, with the fast `tokenizers` package (no transformers): one readable string
per token, and the loss-masked spans of a sample decoded whole.

Per token, what a person debugging a drafter needs to see:
  - special tokens as themselves (`<|im_start|>`), never dropped;
  - whitespace made visible (space ␣, newline ↵, tab ⇥, other control characters as \\xNN);
  - byte-level pieces that are not valid UTF-8 on their own (one byte of a multi-byte
    character) as \\xNN escapes instead of U+FFFD, so two different halves never look alike.
Spans are decoded as one piece by the tokenizer's own decoder, so multi-token characters come
out whole; their control characters are escaped, the text itself is left as it is.

Runs on the remote box too (shipped by the agent) where the box's Python has `tokenizers`.
"""

from __future__ import annotations

import os
import re
from typing import Any, cast

from eagle3_tui.engines.read.json_file import TOKENIZER_LIMIT, JsonFileError, parse_json, read_bytes
from eagle3_tui.engines.read.sample import SampleError
from eagle3_tui.engines.results.accept import AcceptResult
from eagle3_tui.engines.results.compare import ComparisonResult
from eagle3_tui.engines.results.summary import LossSpan, Summary, TextRun
from eagle3_tui.engines.results.text import TextResult

TOKENIZER_FILE = "tokenizer.json"
_VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥"}
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


class TokenizerError(SampleError):
    """The tokenizer cannot be used (missing package, not a tokenizer, too small a vocabulary)."""


def tokenizer_file(path: str) -> str:
    """The tokenizer.json a --tokenizer PATH names: the file itself, or the one in a model folder."""
    if os.path.isdir(path):
        inner = os.path.join(path, TOKENIZER_FILE)
        if not os.path.lexists(inner):  # a FIFO or device there is refused by the reader, by name
            raise TokenizerError(f"{path}: no {TOKENIZER_FILE} in this folder")
        return inner
    if not os.path.lexists(path):
        raise TokenizerError(f"{path}: no such tokenizer file or model folder")
    return path


def load_tokenizer(path: str) -> TokenText:
    try:
        # lazy: tokenizers (optional or heavy): loaded only when used
        from tokenizers import Tokenizer
    except ImportError:
        raise TokenizerError(
            "decoding tokens needs the tokenizers package: pip install tokenizers "
            "(or pip install 'eagle3-tui[text]')"
        ) from None
    file = tokenizer_file(path)
    try:
        # read here, not by from_file: a FIFO or device is refused unopened, size and depth bounded
        text = read_bytes(file, TOKENIZER_LIMIT)
        parse_json(text, file)
    except JsonFileError as err:
        raise TokenizerError(f"not a tokenizers tokenizer.json: {err}") from None
    try:
        tok = Tokenizer.from_str(text.decode("utf-8-sig"))
    except Exception as err:  # noqa: BLE001 - the Rust side raises a plain Exception
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise TokenizerError(f"{file}: not a tokenizers tokenizer.json ({first})") from None
    return TokenText(tok, file)


_loaded: dict[tuple, TokenText] = {}


def cached_tokenizer(path: str) -> TokenText:
    """load_tokenizer, once per file version (path, size, mtime): a folder of samples shown one
    after another parses the tokenizer once."""
    file = tokenizer_file(path)
    st = os.stat(file)
    key = (os.path.realpath(file), st.st_size, st.st_mtime_ns)
    if key not in _loaded:
        _loaded.clear()  # one tokenizer at a time is what a session uses
        _loaded[key] = load_tokenizer(file)
    return _loaded[key]


def annotate(result: TextResult, tokenizer: str | None) -> TextResult:
    """A summary, comparison or acceptance result with its token text when `tokenizer` is given
    (a path here); a tokenizer that cannot be used says why in "text_error", the numbers stay."""
    if not tokenizer or "error" in result:
        return result
    try:
        tok = cached_tokenizer(tokenizer)
    except TokenizerError as err:
        result["text_error"] = str(err)
        return result
    if "per_token" in result:  # before "rows": an acceptance result counts its rows there
        return annotate_accept(cast(AcceptResult, result), tok)
    if "rows" in result:
        return annotate_comparison(cast(ComparisonResult, result), tok)
    return annotate_summary(cast(Summary, result), tok)


def annotate_accept(result: AcceptResult, tok: TokenText) -> AcceptResult:
    """A drafter's acceptance result with the text of each scored row's target and guess (ids the
    tokenizer does not know keep their id alone)."""

    def text(v: object, had: str | None) -> str | None:
        return tok.token(v) if had is None and isinstance(v, int) and 0 <= v < tok.vocab_size else None

    for entry in result.get("per_token") or []:
        target = text(entry.get("target"), entry.get("target_text"))
        if target is not None:
            entry["target_text"] = target
        draft = text(entry.get("draft"), entry.get("draft_text"))
        if draft is not None:
            entry["draft_text"] = draft
    return result


def byte_alphabet() -> dict[int, str]:
    """GPT-2's bytes_to_unicode: each byte as the printable character byte-level BPEs store."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars = list(keep)
    extra = 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + extra)
            extra += 1
    return {b: chr(c) for b, c in zip(keep, chars)}


def _byte_decoder() -> dict[str, int]:
    """The byte-level alphabet reversed: the printable stand-in character -> the byte."""
    return {c: b for b, c in byte_alphabet().items()}


def visible(text: str) -> str:
    """Whitespace and control characters made visible (and harmless on a terminal)."""
    out = []
    for ch in text:
        if ch in _VISIBLE:
            out.append(_VISIBLE[ch])
        elif ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def safe_text(text: str) -> str:
    """Decoded text kept as it is, but control characters other than newline and tab escaped
    (a regex: a 4k-token sample's text is escaped in well under a millisecond)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", text)


class TokenText:
    """A loaded tokenizer and a cache of the display string of every id it has shown."""

    def __init__(self, tokenizer: Any, file: str) -> None:
        self.tokenizer = tokenizer
        self.file = file
        self.vocab_size = tokenizer.get_vocab_size(with_added_tokens=True)
        self.special = {i: t.content for i, t in tokenizer.get_added_tokens_decoder().items()}
        kind = type(tokenizer.decoder).__name__ if tokenizer.decoder is not None else ""
        self._bytes_of = _byte_decoder() if kind == "ByteLevel" else None
        self._metaspace = kind in ("Metaspace", "Sequence")
        self._cache: dict[int, str] = {}

    def check(self, ids: list[int], what: str = "the file") -> None:
        """Refuse ids the vocabulary does not have: a wrong tokenizer gives wrong text silently."""
        if not ids:
            return
        top, low = max(ids), min(ids)
        if low < 0:
            raise TokenizerError(f"{what} has a negative token id ({low})")
        if top >= self.vocab_size:
            raise TokenizerError(
                f"{self.file}: a vocabulary of {self.vocab_size} tokens, but {what} has id {top}: "
                "not the tokenizer of the model that made it"
            )

    def piece_bytes(self, i: int) -> bytes:
        piece = self.tokenizer.id_to_token(i)
        if piece is None:
            return b""
        if self._bytes_of is not None and all(c in self._bytes_of for c in piece):
            return bytes(self._bytes_of[c] for c in piece)
        m = _BYTE_PIECE.fullmatch(piece)
        if m:  # SentencePiece byte fallback
            return bytes([int(m[1], 16)])
        if self._metaspace:
            return piece.replace("▁", " ").encode()
        return self.tokenizer.decode([i], skip_special_tokens=False).encode()

    def token(self, i: int) -> str:
        """The display string of one id (see the module docstring)."""
        text = self._cache.get(i)
        if text is None:
            if i in self.special:
                text = self.special[i]
            else:
                raw = self.piece_bytes(i).decode("utf-8", errors="backslashreplace")
                text = visible(raw)
            self._cache[i] = text
        return text

    def tokens(self, ids: list[int]) -> list[str]:
        return [self.token(i) for i in ids]

    def decode(self, ids: list[int]) -> str:
        return safe_text(self.tokenizer.decode(list(ids), skip_special_tokens=False))

    def loss_spans(self, ids: list[int], mask: list[int] | None, valid: int) -> list[LossSpan]:
        """Maximal runs of loss mask 1 over the valid rows, each decoded as one piece."""
        if mask is None:
            return []
        spans: list[LossSpan] = []
        start = None
        for t in range(min(valid, len(mask)) + 1):
            on = t < valid and bool(mask[t])
            if on and start is None:
                start = t
            elif not on and start is not None:
                spans.append({"start": start, "end": t, "text": self.decode(ids[start:t])})
                start = None
        return spans

    def runs(self, ids: list[int], mask: list[int] | None, valid: int) -> list[TextRun]:
        """The whole sample as consecutive runs {"start", "end", "loss", "text"}: maximal runs of
        equal loss mask over the valid rows, each decoded as one piece (the loss runs are exactly
        the loss_spans), then the padding as one run with "pad": True and no text."""
        out: list[TextRun] = []
        start = 0
        valid = min(valid, len(ids))
        for t in range(1, valid + 1):
            if t == valid or (mask is not None and bool(mask[t]) != bool(mask[start])):
                loss = mask is not None and bool(mask[start])
                out.append({"start": start, "end": t, "loss": loss, "text": self.decode(ids[start:t])})
                start = t
        if valid < len(ids):
            out.append({"start": valid, "end": len(ids), "loss": False, "pad": True, "text": ""})
        return out


def annotate_summary(summary: Summary, tok: TokenText) -> Summary:
    """Add "text" (one string per token) and "loss_spans" to a summary that carries ids; a
    tokenizer that does not fit the ids says so in "text_error" instead of giving wrong text."""
    ids = summary.get("ids")
    if "error" in summary or ids is None:
        return summary
    try:
        tok.check(ids)
    except TokenizerError as err:
        summary["text_error"] = str(err)
        return summary
    summary["text"] = tok.tokens(ids)
    valid = summary.get("valid_tokens", len(ids))
    runs = summary["runs"] = tok.runs(ids, summary.get("mask"), valid)
    summary["loss_spans"] = [{"start": r["start"], "end": r["end"], "text": r["text"]} for r in runs if r["loss"]]
    summary["tokenizer"] = tok.file
    return summary


def annotate_comparison(result: ComparisonResult, tok: TokenText) -> ComparisonResult:
    """Add the text of both sides' aligned ids ("rows": "a_text", "b_text") to a comparison."""
    rows = result.get("rows")
    if "error" in result or not rows:
        return result
    a_ids, b_ids = rows.get("a_ids"), rows.get("b_ids")
    try:
        if a_ids is not None:
            tok.check(a_ids, what="A")
        if b_ids is not None:
            tok.check(b_ids, what="B")
    except TokenizerError as err:
        result["text_error"] = str(err)
        return result
    if a_ids is not None:
        rows["a_text"] = tok.tokens(a_ids)
    if b_ids is not None:
        rows["b_text"] = tok.tokens(b_ids)
    for f in result.get("findings", []):
        if f.get("code") == "token_divergence" and f.get("a_id") is not None and f.get("b_id") is not None:
            f["a_text"], f["b_text"] = tok.token(f["a_id"]), tok.token(f["b_id"])
            f["message"] += f' (A "{f["a_text"]}", B "{f["b_text"]}")'
    result["tokenizer"] = tok.file
    return result
