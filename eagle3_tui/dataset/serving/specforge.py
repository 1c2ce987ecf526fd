"""SpecForge: what a training run with this drafter config captures (a training reading, not a
serving engine: listed, not counted in serve-check's exit). Read from its repository at a6b6b023
and 507da3e5: no releases."""

from __future__ import annotations

from eagle3_tui.dataset.serving.capture import NESTED, Capture, Config, FailsAt, capture, guess, nested, show, to_b

ENGINE = "specforge"
RELEASES: tuple[str, ...] = ()
SOURCE = ("specforge/algorithms/model_providers.py 188-211 @ a6b6b023; "
          "specforge/modeling/target/eagle3_target_model.py (layers[id] forward hook) @ 507da3e5")


def rule(config: Config, L: int, arch: str | None, v: str | None = None, variant: str | None = None) -> Capture:
    """resolve_eagle_capture_layers (model_providers.py 188-211 @ a6b6b023): the run's
    model.aux_hidden_state_layer_ids (not in the drafter), else eagle_config's ids, else
    [1, L//2-1, L-4]; then exactly three non-negative ints or ValueError (line 206); a layer id
    names the layer's output (a forward hook on layers[id]), b = id + 1."""
    raw = nested(config, "eagle_aux_hidden_state_layer_ids")
    if raw is None:
        ids = [1, L // 2 - 1, L - 4]
        return guess(L, "SpecForge", ids, why=f"no {NESTED}: SpecForge trains on its default ids {ids} (b = id + 1)")
    try:
        values = list(raw)
    except TypeError:
        values = [raw]
    if len(values) != 3 or any(not isinstance(x, int) or x < 0 for x in values):
        return capture(values, [], NESTED, f"{NESTED} {show(raw)}: not three non-negative ints", fc=3,
                       fails="resolve_eagle_capture_layers raises ValueError (exactly three non-negative integers, "
                             "model_providers.py 206)")
    bounds = [to_b(x, 1, 1, L) for x in values]
    fails: str | None = None
    at: FailsAt | None = None
    if None in bounds:  # eagle3_target_model.py 201-207 @ 507da3e5
        fails, at = f"a layer id past the last of {L} layers: ValueError (out of bounds)", "start-up"
    elif len(set(values)) != 3:  # captured_states is a dict keyed by layer: lines 180-228
        fails, at = "equal ids capture one state: RuntimeError (expected to capture 3 layers)", "first forward"
    return capture(values, bounds, NESTED, f"{NESTED} {show(raw)}, read as b = id + 1 (the layer's output; "
                   "its slots are written in the ids' order)", fc=None, fails=fails, fails_at=at)
