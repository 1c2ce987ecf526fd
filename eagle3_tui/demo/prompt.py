"""One chat as token ids: the prompt, then the answer the loss mask covers. Made by the demo
transformer's toy template (below: random ids, for test data that needs no text), the demo's BPE
chats and the real model's own answers alike."""

from __future__ import annotations

import random
from dataclasses import dataclass

# The toy template's special ids (tests import these); the demo itself is made of tokenized chats.
PAD, BOS, EOS = 0, 1, 2
SYSTEM = [3, 10, 11, 12, 4]  # <|system|> ... <|end|>
USER = [5]
ASSISTANT = [6, 13, 7]  # <|assistant|> header; the response follows
FIRST_WORD = 20  # ordinary tokens are drawn from [FIRST_WORD, vocab)


@dataclass
class Prompt:
    ids: list[int]
    response_start: int  # first position with loss_mask 1

    @property
    def loss_mask(self) -> list[int]:
        return [0] * self.response_start + [1] * (len(self.ids) - self.response_start)

    @property
    def prompt_ids(self) -> list[int]:
        return self.ids[: self.response_start]


def toy_prompt(rng: random.Random, vocab: int) -> Prompt:
    """A random-id prompt in the toy template (test data; the demo tokenizes chats instead)."""
    user = [rng.randrange(FIRST_WORD, vocab) for _ in range(rng.randint(14, 110))]
    head = [BOS, *SYSTEM, *USER, *user, *ASSISTANT]
    resp = [rng.randrange(FIRST_WORD, vocab) for _ in range(rng.randint(18, 80))]
    return Prompt(head + resp + [EOS], len(head))
