"""Odd but loadable files: a known key of the wrong type, slots of different widths, float ids.

Each must give one line that names what is wrong (in `summary` and its JSON), never a reading as
some other schema. Valid neighbours (int32 ids, a float loss mask) must still load.
"""

from __future__ import annotations

import json
import sys

import pytest
import torch

from eagle3_tui.engines.read.stats import summarize_file
from tests.helpers import warm_cli

T, H = 9, 16


def _states(k=3, h=H, t=T):
    g = torch.Generator().manual_seed(3)
    return [torch.randn(t, h, generator=g) * (i + 1) for i in range(k)]


def _summary_json(*paths):
    out = warm_cli.run(
        [sys.executable, "-m", "eagle3_tui", "summary", "--json", *map(str, paths)],
        capture_output=True, text=True,
    )
    return out.returncode, [json.loads(line) for line in out.stdout.splitlines()], out.stderr


def _wrong_types():
    aux, final = torch.cat(_states(), -1), _states(1)[0]
    ids = torch.arange(T)
    return {
        # was read silently as EAGLE-1/2 with k = 0
        "aux_str": ({"input_ids": ids, "aux_hidden_state": "see other file", "hidden_state": final},
                    "aux_hidden_state holds a str where a tensor is expected"),
        "ids_list": ({"input_ids": list(range(T)), "aux_hidden_state": aux},
                     "input_ids holds a list of int where a tensor is expected"),
        "final_none": ({"aux_hidden_state": aux, "hidden_state": None},
                       "hidden_state holds a NoneType where a tensor is expected"),
        "mask_dict": ({"loss_mask": {"a": 1}, "aux_hidden_state": aux},
                      "loss_mask holds a dict where a tensor is expected"),
        "hs_strings": ({"token_ids": ids, "hidden_states": ["a", "b"]},
                       "hidden_states holds a list of str where a tensor or a list of tensors is expected"),
        "scales_float": ({"hidden_states": torch.randn(T, 4, H), "hidden_states_scales": 0.5},
                         "hidden_states_scales holds a float where a tensor is expected"),
        "modelopt_aux_str": ({"input_ids": ids, "hidden_states": final, "aux_hidden_states": "x",
                              "conversation_id": "c"},
                             "aux_hidden_states holds a str where a tensor is expected"),
    }


@pytest.mark.parametrize("name", list(_wrong_types()))
def test_known_key_of_the_wrong_type_names_key_and_type(tmp_path, name):
    obj, message = _wrong_types()[name]
    torch.save(obj, tmp_path / f"{name}.pt")
    s = summarize_file(str(tmp_path / f"{name}.pt"))
    assert s.get("error") == message, s.get("error") or s["schema"]


def test_wrong_types_in_summary_cli_are_one_line_each(tmp_path):
    paths = []
    for name, (obj, _) in _wrong_types().items():
        torch.save(obj, tmp_path / f"{name}.pt")
        paths.append(tmp_path / f"{name}.pt")
    code, lines, err = _summary_json(*paths)
    assert code == 1 and "Traceback" not in err
    assert [line["error"] for line in lines] == [m for _, m in _wrong_types().values()]


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda a, b: [a, b], "list items have different widths: 16, 32 (one H expected)"),
        (lambda a, b: (a, b), "list items have different widths: 16, 32 (one H expected)"),
        # a dict with an unknown key used to say "no floating-point tensor of rank 2 or 3"
        (lambda a, b: {"captured": [a, b]}, "captured items have different widths: 16, 32 (one H expected)"),
        # speculators legacy: used to read slots of H 16 and a final of H 32 without a word
        (lambda a, b: {"input_ids": torch.arange(T), "hidden_states": [a, a, b]},
         "hidden_states items have different widths: 16, 16, 32 (one H expected)"),
    ],
)
def test_lists_of_different_widths_say_the_widths(tmp_path, build, message):
    a, b = _states(1)[0], _states(1, h=32)[0]
    torch.save(build(a, b), tmp_path / "w.pt")
    assert summarize_file(str(tmp_path / "w.pt")).get("error") == message


def test_lists_of_different_lengths_say_the_lengths(tmp_path):
    torch.save([_states(1)[0], _states(1, t=T + 2)[0]], tmp_path / "l.pt")
    assert summarize_file(str(tmp_path / "l.pt")).get("error") == "list items have different lengths: 9, 11 rows"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64, torch.bool])
def test_non_integer_input_ids_are_refused(tmp_path, dtype):
    """Refused even when integral: bf16 holds ids only up to 256 exactly, so a float ids tensor
    has usually lost its ids already; reading it would report token drift that is not there."""
    ids = (torch.arange(T) % 2).to(dtype)
    torch.save({"input_ids": ids, "aux_hidden_state": torch.cat(_states(), -1)}, tmp_path / "f.pt")
    name = str(dtype).removeprefix("torch.")
    assert summarize_file(str(tmp_path / "f.pt")).get("error") == (
        f"input_ids holds {name} values: token ids must be integers"
    )


def test_float_token_ids_in_speculators_file_are_refused(tmp_path):
    torch.save({"token_ids": torch.arange(T).float(), "hidden_states": torch.randn(T, 4, H)}, tmp_path / "s.pt")
    assert summarize_file(str(tmp_path / "s.pt")).get("error") == (
        "token_ids holds float32 values: token ids must be integers"
    )


def test_integer_ids_of_any_width_and_float_masks_still_load(tmp_path):
    aux = torch.cat(_states(), -1)
    mask = torch.ones(T)
    mask[:3] = 0
    torch.save({"input_ids": torch.arange(T, dtype=torch.int32), "loss_mask": mask, "aux_hidden_state": aux},
               tmp_path / "ok.pt")
    s = summarize_file(str(tmp_path / "ok.pt"))
    assert s["schema"] == "SpecForge offline" and len(s["slots"]) == 3
    assert s["ids"] == list(range(T)) and s["loss_mask"] == {"ones": T - 3, "total": T}


def test_conversation_id_string_is_not_a_wrong_type(tmp_path):
    """ModelOpt stores conversation_id as a string: a known non-tensor key, not an error."""
    final, aux = _states(1)[0], torch.cat(_states(), -1)
    torch.save({"input_ids": torch.arange(T), "hidden_states": final, "aux_hidden_states": aux,
                "loss_mask": torch.ones(T, dtype=torch.long), "conversation_id": "abc"}, tmp_path / "abc.pt")
    s = summarize_file(str(tmp_path / "abc.pt"))
    assert s["schema"] == "ModelOpt offline" and len(s["slots"]) == 3
