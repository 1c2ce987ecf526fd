"""One file typed different ways must be one bookmark; different files must never share one."""

from __future__ import annotations

import os

import pytest

from eagle3_tui.target import Target, TargetError, parse_target, target_key


@pytest.mark.parametrize(
    "spellings",
    [
        ["gpu-box:/data/eagle3/rows_0-2000/data_0.ckpt", "gpu-box:/data//eagle3/./rows_0-2000/data_0.ckpt",
         "ssh://gpu-box/data/eagle3/rows_0-2000/data_0.ckpt"],
        ["me@gpu:runs/a.pt", "me@gpu:~/runs/a.pt", "ssh://me@gpu/~/runs/a.pt"],
        ["ssh://me@gpu:2222/data/a.pt", "me@gpu:2222:/data/a.pt"],
        ["ssh://[::1]:22/x.pt", "[::1]:22:/x.pt"],
    ],
)  # fmt: skip
def test_spellings_of_one_remote_file_share_a_key(spellings):
    keys = {target_key(s) for s in spellings}
    assert len(keys) == 1, keys


def test_local_relative_paths_become_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert target_key("rows_0/data_0.pt") == str(tmp_path / "rows_0" / "data_0.pt")
    assert target_key("./a:b.pt") == str(tmp_path / "a:b.pt")  # a colon after ./ is a file name
    assert target_key("dir/x:y.pt") == str(tmp_path / "dir" / "x:y.pt")  # scp's rule: slash first
    assert target_key("~/x.pt") == os.path.expanduser("~/x.pt")


@pytest.mark.parametrize(
    "a, b",
    [
        ("gpu:/data/a.pt", "/data/a.pt"),  # remote vs local
        ("gpu:/data/a.pt", "other:/data/a.pt"),
        ("me@gpu:/data/a.pt", "you@gpu:/data/a.pt"),
        ("ssh://gpu:2222/a.pt", "ssh://gpu:2223/a.pt"),
        ("gpu:/a.pt", "gpu:a.pt"),  # root vs home
    ],
)
def test_different_files_get_different_keys(a, b):
    assert target_key(a) != target_key(b)


@pytest.mark.parametrize(
    "text",
    ["/data/x y.pt", "gpu:/d/$(touch PWNED).pt", "me@gpu:rel/p.pt", "ssh://me@gpu:2222/~/rel.pt",
     "ssh://gpu:2222/abs.pt", "[fe80::1]:/x.pt", "gpu:", "gpu:/"],
)  # fmt: skip
def test_a_key_is_itself_a_target_with_the_same_key(text):
    key = target_key(text)
    assert target_key(key) == key
    parts = parse_target(key).canonical()
    assert Target(parts.host, parts.user, parts.port, parts.path).key == key


def test_parts_of_a_remote_target():
    p = parse_target("ssh://me@gpu:2222/data/a.pt").canonical()
    assert (p.host, p.user, p.port, p.path) == ("gpu", "me", 2222, "/data/a.pt")
    p = parse_target("gpu-box:/data/b.pt").canonical()
    assert (p.host, p.user, p.port, p.path) == ("gpu-box", None, None, "/data/b.pt")


@pytest.mark.parametrize("text", ["", "ssh://gpu:99999/x", "ssh://gpu:abc/x", "ssh:///x", "@:x", "a\0b"])
def test_bad_targets_are_refused_with_a_reason(text):
    with pytest.raises(TargetError) as e:
        target_key(text)
    assert str(e.value) and "\n" not in str(e.value)
