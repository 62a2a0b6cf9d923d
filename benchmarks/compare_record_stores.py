"""Do run records made again from scratch agree with the committed ones? Rerun it, it is not a test.

    .venv/bin/python benchmarks/compare_record_stores.py FRESH [--committed results/runs/small] [--output f.json]

FRESH is a store of run records (and ``derived/`` records) made from an empty store, e.g. the folder that
``bench_archive_small.py --from-scratch --keep FRESH`` fills. For every record id in both stores, every number the
record computed is compared: a run record's ``metrics``, ``training`` and ``analysis``, a derived record's
``result``; timings (any key holding "second", "wall" or "overhead") are skipped, since they are the machine's, not the
code's.
Per record: how many numbers, how many bit-identical, the largest absolute difference and where, and for a run
record the difference of its 7-task STS average (x100, the number the tables print). Ids in FRESH that
the committed store lacks mean the committed records were made from other specs or code (their run ids differ), and
are listed. Prints a JSON summary (``--output`` writes it too) and, on stderr, the records that differ most.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMPUTED = {"run": ("metrics", "training", "analysis"), "derived": ("result",)}
TIMING_WORDS = ("second", "wall", "overhead")  # e.g. phase_seconds, training/overhead_fraction: the machine's
HEADLINE = "metrics/summary/Avg."  # a run record's 7-task STS average (x100)


def numbers(node, path: str = ""):
    """(path, value) for every number under ``node``, timings left out."""
    if isinstance(node, dict):
        for key, value in node.items():
            if any(word in str(key) for word in TIMING_WORDS):
                continue
            yield from numbers(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from numbers(value, f"{path}[{i}]")
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield path, float(node)


def compare(fresh: dict, committed: dict, kind: str) -> dict:
    a = {p: v for part in COMPUTED[kind] for p, v in numbers(fresh.get(part), part)}
    b = {p: v for part in COMPUTED[kind] for p, v in numbers(committed.get(part), part)}
    shared = sorted(set(a) & set(b))
    worst, where = 0.0, None
    identical = 0
    for path in shared:
        x, y = a[path], b[path]
        if x == y or (math.isnan(x) and math.isnan(y)):
            identical += 1
            continue
        diff = abs(x - y) if not (math.isnan(x) or math.isnan(y)) else math.inf
        if diff > worst:
            worst, where = diff, path
    avg = [(a.get(HEADLINE), b.get(HEADLINE))] if HEADLINE in a and HEADLINE in b else []
    return {
        "numbers": len(shared),
        "identical": identical,
        "max_abs_diff": worst,
        "where": where,
        "only_fresh": len(set(a) - set(b)),
        "only_committed": len(set(b) - set(a)),
        "sts_avg_diff": abs(avg[0][0] - avg[0][1]) if avg else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("fresh", help="a store of records made from an empty store")
    parser.add_argument("--committed", default=str(ROOT / "results" / "runs" / "small"))
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    fresh_root, committed_root = Path(args.fresh), Path(args.committed)
    for folder in (fresh_root, committed_root):
        if not folder.is_dir():
            parser.error(f"{folder} is not a folder of run records")
    per_record, missing = {}, []
    for kind, folder in (("run", ""), ("derived", "derived")):
        for path in sorted((fresh_root / folder).glob("*.json")):
            other = committed_root / folder / path.name
            if not other.is_file():
                missing.append(f"{folder}/{path.name}".lstrip("/"))
                continue
            fresh, committed = (json.loads(p.read_text(encoding="utf-8")) for p in (path, other))
            per_record[f"{folder}/{path.stem}".lstrip("/")] = {"kind": kind, **compare(fresh, committed, kind)}
    diffs = [r["max_abs_diff"] for r in per_record.values()]
    summary = {
        "fresh": str(fresh_root),
        "committed": str(committed_root),
        "records_compared": len(per_record),
        "records_bit_identical": sum(r["identical"] == r["numbers"] for r in per_record.values()),
        "numbers_compared": sum(r["numbers"] for r in per_record.values()),
        "max_abs_diff": max(diffs, default=0.0),
        "max_sts_avg_diff": max(
            (r["sts_avg_diff"] for r in per_record.values() if r["sts_avg_diff"] is not None), default=None
        ),
        "records_over": {f"{t:g}": sum(d > t for d in diffs) for t in (1e-6, 1e-4, 1e-2)},
        "fresh_ids_not_committed": missing,
        "per_record": per_record,
    }
    for rid, r in sorted(per_record.items(), key=lambda kv: -kv[1]["max_abs_diff"])[:15]:
        print(
            f"{rid:30s} {r['kind']:7s} {r['identical']:5d}/{r['numbers']:<5d} identical  "
            f"max |diff| {r['max_abs_diff']:.3g} at {r['where']}",
            file=sys.stderr,
        )
    text = json.dumps(summary, indent=1)
    print(text)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
