"""A scan keeps the garbage collector's full collections off the heap it found (torch's modules, the
caller's objects): each walks all of it, ~80 ms with torch imported, and a scan's listing and
records set several off. It leaves that heap as frozen as it was: the TUI, which freezes its
100,000-entry listings and records to keep key presses free of such pauses, keeps them frozen
after a scan (a scan with workers unfroze them all)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers.processes import subprocess_env

_SCRIPT = """
import gc, json, sys
from eagle3_tui.engines.scan.records import scan_tree
root = sys.argv[1]

def scan(workers):
    during = [gc.get_freeze_count() for _ in scan_tree(root, workers=workers)]
    return min(during), len(during)

out = {}
for w in (1, 2):
    (least, files), after = scan(w), gc.get_freeze_count()
    out[f"alone {w}"] = {"least during": least, "files": files, "after": after}
kept = [[i] for i in range(1000)]
gc.freeze()
mine = gc.get_freeze_count()
for w in (1, 2):
    (least, files), after = scan(w), gc.get_freeze_count()
    out[f"caller froze {w}"] = {"least during": least, "files": files, "after": after, "mine": mine}
print(json.dumps(out))
"""


def test_a_scan_freezes_the_heap_it_found_and_leaves_it_as_frozen_as_it_was(clean):
    # a process of its own: this one's freeze count depends on the tests run before
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(clean)], capture_output=True, text=True,
                          timeout=300, env=subprocess_env())
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.splitlines()[-1])
    for workers in (1, 2):
        alone = out[f"alone {workers}"]
        assert alone["files"] == 36
        assert alone["least during"] > 0, alone  # torch's heap out of the full collections while it runs
        assert alone["after"] == 0, alone  # and given back: nothing was frozen before
        theirs = out[f"caller froze {workers}"]
        assert theirs["files"] == 36
        assert theirs["after"] >= theirs["mine"], theirs  # the caller's frozen objects stay frozen
