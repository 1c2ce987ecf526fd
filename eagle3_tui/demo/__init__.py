"""The demo dataset and the test data: a small seeded transformer whose hidden states look like a
real model's (model.py), chats in a template (chats.py) tokenized by a byte-level BPE trained here
in pure Python (bpe.py), and the writer of SpecForge shards, inference captures with known faults,
a tokenizer and a drafter (dataset.py). Runs on this machine only: never sent to a remote box.
"""
