"""One parser for every way a user names a folder."""

import pytest

from eagle3_tui.sources.local import LocalSource
from eagle3_tui.sources.ssh import SshSource
from eagle3_tui.sources.opener import open_source
from eagle3_tui.target import Target, TargetError, parse_target


@pytest.mark.parametrize(
    "text, expected, shown",
    [
        ("/data/x", Target(None, None, None, "/data/x"), "/data/x"),
        ("rel/dir", Target(None, None, None, "rel/dir"), "rel/dir"),
        ("./a:b", Target(None, None, None, "./a:b"), "./a:b"),
        ("gpu-box:/data/eagle3", Target("gpu-box", None, None, "/data/eagle3"), "gpu-box:/data/eagle3"),
        ("me@gpu-box:/d", Target("gpu-box", "me", None, "/d"), "me@gpu-box:/d"),
        ("user@host:2222:/x", Target("host", "user", 2222, "/x"), "user@host:2222:/x"),
        ("box:", Target("box", None, None, "."), "box:."),
        ("box:~/runs", Target("box", None, None, "runs"), "box:runs"),
        ("box:a b:c", Target("box", None, None, "a b:c"), "box:a b:c"),
        ("ssh://me@box:2200/data/x", Target("box", "me", 2200, "/data/x"), "me@box:2200:/data/x"),
        ("ssh://box/~/runs", Target("box", None, None, "runs"), "box:runs"),
        ("ssh://box", Target("box", None, None, "."), "box:."),
        ("[::1]:/x", Target("::1", None, None, "/x"), "[::1]:/x"),
        ("me@[fe80::1]:22:/x", Target("fe80::1", "me", 22, "/x"), "me@[fe80::1]:22:/x"),
    ],
)
def test_parse_and_display(text, expected, shown):
    target = parse_target(text)
    assert target == expected
    assert target.display() == shown
    assert parse_target(target.display()) == target  # what we show can be typed back


def test_home_is_expanded_for_local_paths(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert parse_target("~/data").path == str(tmp_path / "data")


@pytest.mark.parametrize("text", ["", "ssh://", "ssh://box:99999/x", "box:70000:/x", "@box:/x"])
def test_bad_targets_say_why(text):
    with pytest.raises(TargetError) as err:
        parse_target(text)
    assert "\n" not in str(err.value) and str(err.value)


def test_open_source_picks_local_or_ssh_without_connecting():
    assert isinstance(open_source(parse_target("/tmp")), LocalSource)
    # An unresolvable host would fail on connect; opening must not touch the network.
    remote = open_source(parse_target("no-such-host.invalid:/data"))
    assert isinstance(remote, SshSource)
    assert remote.label == "no-such-host.invalid"
