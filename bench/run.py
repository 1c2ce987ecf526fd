"""Benchmark runner: `python bench/run.py [NAME...]`.

Discovers bench/bench_*.py modules; each exposes BENCHMARKS = {name: callable}. A callable
returns {"figure", "baseline", "unit", "target", "details"} where baseline is measured in the
same run, so the ratio (figure / baseline) is what we track, never an absolute time.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def discover() -> dict[str, object]:
    found = {}
    for path in sorted(HERE.glob("bench_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, str(HERE.parent))
        spec.loader.exec_module(module)
        for name, fn in getattr(module, "BENCHMARKS", {}).items():
            found[name] = fn
    return found


def main(argv: list[str]) -> int:
    as_json = "--json" in argv
    names = [a for a in argv if not a.startswith("-")]
    benches = discover()
    unknown = [n for n in names if n not in benches]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(benches)}", file=sys.stderr)
        return 2
    for name in names or list(benches):
        t0 = time.perf_counter()
        r = benches[name]()
        ratio = r["figure"] / r["baseline"] if r["baseline"] else float("inf")
        r.update(name=name, ratio=ratio, seconds=time.perf_counter() - t0)
        if as_json:
            print(json.dumps(r), flush=True)
        else:
            print(
                f"{name}: {r['figure']:.4g} {r['unit']} vs baseline {r['baseline']:.4g} {r['unit']}"
                f" -> ratio {ratio:.2f} (target {r['target']})\n    {r['details']}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
