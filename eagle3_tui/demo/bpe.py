"""A byte-level BPE in pure Python: train on a small corpus, encode, write Hugging Face's tokenizer.json.

Used by the demo so that its token ids are real text without needing the `tokenizers` package to
write them. The layout is GPT-2's: every UTF-8 byte is one base symbol (the printable
bytes_to_unicode alphabet, space = "Ġ", newline = "Ċ"), text is first split into word-like pieces
(letters with an optional leading space, digits, other symbols, whitespace), and merges are
learned inside those pieces. Special tokens are matched first and never split.

The pre-tokenizing pattern is GPT-2's with \\p{L} spelled [^\\W\\d_] and \\p{N} as \\d (the standard
`re` has no Unicode classes): for text without non-decimal numerals (½, ²) the two split alike, so
`tokenizers` encodes the demo's chats to the same ids as `encode` here.

Demo-only code (stdlib only): not imported by the agent, so not shipped to the remote box.
"""

from __future__ import annotations

import heapq
import json
import re
from collections import Counter
from itertools import pairwise
from typing import Iterable

from eagle3_tui.engines.read.tokens import byte_alphabet

_PIECE = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+""")

_BYTE = byte_alphabet()


def _symbols(piece: str) -> list[str]:
    return [_BYTE[b] for b in piece.encode("utf-8")]


def pieces(text: str) -> list[str]:
    return _PIECE.findall(text)


class ByteBPE:
    """A trained tokenizer: special tokens, then the 256 byte symbols, then the merged tokens."""

    def __init__(self, special: list[str], merges: list[tuple[str, str]]):
        self.special = list(special)
        self.merges = list(merges)
        base = [_BYTE[b] for b in range(256)]
        # two merges may make the same string ("a"+"bc", "ab"+"c"): one token for both
        tokens = list(dict.fromkeys([*self.special, *base, *(a + b for a, b in self.merges)]))
        self.vocab = {t: i for i, t in enumerate(tokens)}
        self.tokens = tokens
        self.rank = {pair: r for r, pair in enumerate(self.merges)}
        self._split = re.compile("(" + "|".join(re.escape(s) for s in sorted(special, key=len, reverse=True)) + ")")
        self._cache: dict[str, list[int]] = {}

    def __len__(self) -> int:
        return len(self.vocab)

    def _word(self, piece: str) -> list[int]:
        if piece in self._cache:
            return self._cache[piece]
        syms = _symbols(piece)
        while len(syms) > 1:
            ranked = [(self.rank.get(p, len(self.rank)), i) for i, p in enumerate(pairwise(syms))]
            r, i = min(ranked)
            if r == len(self.rank):
                break
            syms[i : i + 2] = [syms[i] + syms[i + 1]]
        ids = [self.vocab[s] for s in syms]
        self._cache[piece] = ids
        return ids

    def encode(self, text: str) -> list[int]:
        """Token ids of `text`; the special tokens in it are matched whole."""
        out: list[int] = []
        for part in self._split.split(text) if self.special else [text]:
            if part in self.special:
                out.append(self.vocab[part])
            else:
                for piece in pieces(part):
                    out.extend(self._word(piece))
        return out

    def decode(self, ids: Iterable[int]) -> str:
        """The text of `ids` (special tokens as themselves)."""
        inverse = {c: b for b, c in _BYTE.items()}
        tokens = self.tokens
        out, buf = [], bytearray()
        for i in ids:
            t = tokens[i]
            if t in self.special:
                out.append(buf.decode("utf-8", errors="replace"))
                buf = bytearray()
                out.append(t)
            else:
                buf.extend(inverse[c] for c in t)
        out.append(buf.decode("utf-8", errors="replace"))
        return "".join(out)

    def to_json(self) -> dict:
        """Hugging Face tokenizers' tokenizer.json (model BPE, byte-level pre-tokenizer and decoder)."""
        added = [{"id": self.vocab[s], "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                  "normalized": False, "special": True} for s in self.special]
        byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
        return {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": added,
            "normalizer": None,
            "pre_tokenizer": byte_level,
            "post_processor": None,
            "decoder": byte_level,
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                      "ignore_merges": False, "vocab": self.vocab,
                      # "a b" strings: the form every tokenizers version reads (no byte symbol is a space)
                      "merges": [f"{a} {b}" for a, b in self.merges]},
        }

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f, ensure_ascii=False, indent=1)


def train(texts: Iterable[str], vocab_size: int, special: list[str]) -> ByteBPE:
    """Learn merges on `texts` (special tokens removed first) until the vocabulary holds
    `vocab_size` tokens or no pair of symbols is left. The most frequent pair wins, ties go to
    the pair that sorts first: the same corpus gives the same tokenizer."""
    split = re.compile("|".join(re.escape(s) for s in special)) if special else None
    counts: Counter[str] = Counter()
    for text in texts:
        for part in split.split(text) if split else [text]:
            counts.update(pieces(part))
    words = [_symbols(w) for w in sorted(counts)]
    freq = [counts[w] for w in sorted(counts)]
    pair_count: Counter[tuple[str, str]] = Counter()
    where: dict[tuple[str, str], set[int]] = {}
    for wi, syms in enumerate(words):
        for p in pairwise(syms):
            pair_count[p] += freq[wi]
            where.setdefault(p, set()).add(wi)
    heap = [(-c, p) for p, c in pair_count.items()]
    heapq.heapify(heap)
    merges: list[tuple[str, str]] = []
    known = {*special, *_BYTE.values()}
    while len(known) < vocab_size and heap:
        c, pair = heapq.heappop(heap)
        if pair_count.get(pair, 0) != -c or c == 0:
            continue  # a stale entry: the count changed since it was pushed
        new = pair[0] + pair[1]
        merges.append(pair)
        known.add(new)
        changed: set[tuple[str, str]] = set()
        for wi in sorted(where.pop(pair, ())):
            syms, f = words[wi], freq[wi]
            for p in pairwise(syms):
                pair_count[p] -= f
                changed.add(p)
            out, i = [], 0
            while i < len(syms):
                if i + 1 < len(syms) and (syms[i], syms[i + 1]) == pair:
                    out.append(new)
                    i += 2
                else:
                    out.append(syms[i])
                    i += 1
            words[wi] = out
            for p in pairwise(out):
                pair_count[p] += f
                where.setdefault(p, set()).add(wi)
                changed.add(p)
        pair_count.pop(pair, None)
        for p in changed:
            if pair_count.get(p, 0) > 0:
                heapq.heappush(heap, (-pair_count[p], p))
    return ByteBPE(special, merges)
