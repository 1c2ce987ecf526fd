"""The quick reader against torch's loader on many crafted files: the suite's differential test
(tests/hostile/test_quick_vs_torch.py, 3 fixed seeds) on many random seeds, with many more byte
flips of real files per seed.

    python scripts/quick_vs_torch.py [--seeds 40] [--flips 200] [--first-seed N]

Prints, per class, the files read, how many the quick reader took itself, and every disagreement
with torch (exit status 1 when there is one). docs/scan.md keeps the count of the last long run.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from tests.helpers import crafted_torch  # noqa: E402
from tests.helpers.quick_vs_torch import compare  # noqa: E402


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--flips", type=int, default=200, help="byte-flipped real files per seed")
    ap.add_argument("--first-seed", type=int, default=1000)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    files, taken = Counter(), Counter()
    problems: list[str] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            rng = random.Random(seed)
            crafted = list(crafted_torch.crafted(seed))
            reals = [(n, d) for k, n, d in crafted if k == "real"]
            for i in range(args.flips):
                name, data = rng.choice(reals)
                crafted.append(("mutation", f"{name}_flip{i}", crafted_torch._flipped(data, rng)))
            for i, (kind, name, data) in enumerate(crafted):
                path = folder / f"data_{i}.pt"
                path.write_bytes(data)
                verdict = compare(path, deterministic=kind != "torch-nondeterministic")
                files[kind] += 1
                taken[kind] += verdict.taken
                found = [f"seed {seed} {kind}/{name}: {p}" for p in verdict.problems]
                for line in found:
                    print("  DISAGREES " + line, flush=True)
                problems += found
                path.unlink()
            print(f"seed {seed}: {sum(files.values())} files so far, {len(problems)} disagreements", flush=True)
    print(f"\n{sum(files.values())} files in {time.monotonic() - started:.0f} s, torch {torch.__version__}")
    for kind in sorted(files):
        print(f"  {kind:24s} {files[kind]:6d} files, {taken[kind]:6d} read by the quick reader itself")
    print(f"disagreements with torch: {len(problems)}")
    for p in problems[:50]:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
