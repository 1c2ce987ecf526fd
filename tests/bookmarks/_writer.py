"""A bookmark writer run as a separate process by the concurrency tests.

    _writer.py DATA_DIR NAME COUNT [SHARED]

Creates DATA_DIR/ready-NAME once imported and DATA_DIR/opened-NAME once the store is open, waits
for DATA_DIR/go (a barrier: the test says go once every writer has opened the store), then adds COUNT bookmarks /data/NAME/data_I.ckpt, printing each key
only after add() returned (i.e. committed). On stderr: the monotonic clock (one clock for all
processes on Linux) as its first add() begins, then at each commit, so the test can see that the
writers were writing at the same time.
With SHARED, each step also adds the tag NAME-I to the one bookmark every writer shares.
"""

import os
import sys
import time

from eagle3_tui.bookmarks import open_store

data_dir, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
shared = len(sys.argv) > 4
go = os.path.join(data_dir, "go")
open(os.path.join(data_dir, f"ready-{name}"), "w").close()
with open_store(data_dir) as store:
    open(os.path.join(data_dir, f"opened-{name}"), "w").close()
    while not os.path.exists(go):
        time.sleep(0.002)
    print(time.monotonic_ns(), file=sys.stderr, flush=True)
    for i in range(count):
        b = store.add(f"/data/{name}/data_{i}.ckpt", note=f"{name} {i} " + "x" * (i % 50) * 40, tags=[name])
        if shared:
            store.add("gpu:/data/shared.ckpt", tags=[f"{name}-{i}"])
        print(b.target, flush=True)
        print(time.monotonic_ns(), file=sys.stderr, flush=True)
