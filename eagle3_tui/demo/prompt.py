"""One chat as token ids: the prompt, then the answer the loss mask covers. Made by the demo
transformer's toy template, the demo's BPE chats and the real model's own answers alike."""

from __future__ import annotations

from dataclasses import dataclass


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
