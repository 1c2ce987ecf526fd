"""Two identifications at once in one process score each its own states: serve-check --live
identifies what the engine fed in a thread while the dataset's layers are identified in another,
both on the one cached model, whose hooks then fed each run the other's rows ("The size of tensor a
(103) must match the size of tensor b (101)", a CI failure over SSH)."""

from __future__ import annotations

import threading

import torch

from eagle3_tui.engines.model.identify_run import score_states
from tests.helpers.hf_target import make_target


def test_two_runs_at_once_on_one_model_each_score_their_own_rows(tmp_path):
    target = make_target(tmp_path / "llama")
    layers = target.cfg.layers
    runs = {}
    for n in (101, 103):
        ids = torch.randint(5, target.cfg.vocab, (n,), generator=torch.Generator().manual_seed(n))
        states = target.boundaries(ids[None])[0]
        runs[n] = (ids, [states[b][0] for b in (2, 5, 7)])
    alone = {n: _best(score_states(str(target.folder), ids, parts, layers, device="cpu")) for n, (ids, parts) in runs.items()}
    errors: list[BaseException] = []
    got: dict[int, list] = {101: [], 103: []}

    def many(n: int) -> None:
        ids, parts = runs[n]
        try:
            for _ in range(15):
                got[n].append(_best(score_states(str(target.folder), ids, parts, layers, device="cpu")))
        except BaseException as err:  # noqa: BLE001 - the test's verdict
            errors.append(err)

    threads = [threading.Thread(target=many, args=(n,)) for n in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for n in runs:
        assert got[n] == [alone[n]] * 15


def _best(scores) -> list[int]:
    """The boundary each part matches best (its cosine's argmax over b = 0..L)."""
    return [int(i) for i in scores.cos[:, :-1].argmax(dim=1)]
