"""The demo dataset and the test data: a small seeded transformer whose hidden states look like a
real model's (model.py), chats in a template (chats.py) tokenized by a byte-level BPE trained here
in pure Python (bpe.py); the writer of SpecForge shards, inference captures with known faults
(faults.py) and the model folder (hf_folder.py) in dataset.py, with its layout (layout.py),
README.txt (readme.py) and manifest (manifest.py); the demo's drafter (drafter.py, trained by
train_drafter.py); its folder (folder.py: refuse a folder that is not a demo, reopen a finished
one by its stamp); one chat as ids and the toy template of test data (prompt.py); the real-model
demo (real_demo.py, real_model.py). Runs on this machine only: never sent to a remote box.
"""
