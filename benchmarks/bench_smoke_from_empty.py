"""The smoke profile as one command from an empty store (budget: 10 minutes on 2 cores); rerun it, it is not a test.

    SENTEMB_DATA=../shared/datasets HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_smoke_from_empty.py

Runs ``./run_all.sh --profile smoke`` (every paper's runs and notebook, then the HTML site) with results, figures,
executed notebooks, the site and ``SENTEMB_CACHE`` (embeddings, checkpoints, run events) all in one new temporary
folder, so nothing of an earlier run is reused and nothing is written into the repository: ``git status --porcelain``
is taken before and after, and the entries the run added are listed (``new_in_tree``; it must be empty). The wall is
the whole command's; per paper it is run_all's own ``walls.tsv`` (its runs and its notebook; a run several papers
need is trained once, by the first), and the site is what is left. Pause other CPU work first (the measurement
shares the cores with it): the summary keeps the load average at the start. Writes the JSON summary to
``benchmarks/results/smoke_from_empty_2cores.json`` (``--output`` elsewhere) and prints it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmark_io import emit, machine, require_mirror

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUTPUT = ROOT / "benchmarks" / "results" / "smoke_from_empty_2cores.json"
BUDGET_SECONDS = 600


def tree_status() -> set[str]:
    """``git status --porcelain`` of the repository, one entry per changed or untracked path."""
    out = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(out.stdout.splitlines())


def store_env(folder: Path) -> dict[str, str]:
    """This process's environment with every location the command writes to under ``folder``."""
    return {
        **os.environ,
        "SENTEMB_RESULTS": str(folder / "results"),
        "SENTEMB_FIGURES": str(folder / "figures"),
        "SENTEMB_NOTEBOOKS": str(folder / "notebooks"),
        "SENTEMB_SITE": str(folder / "site"),
        "SENTEMB_CACHE": str(folder / "cache"),
    }


def paper_walls(cache: Path) -> dict[str, float]:
    """run_all's ``walls.tsv`` in the (only) run events folder of ``cache``: paper -> seconds, in the order run."""
    walls = sorted((cache / "run_all").glob("*/walls.tsv"))
    if not walls:
        return {}
    lines = walls[-1].read_text().splitlines()
    return {paper: float(seconds) for paper, seconds in (line.split("\t") for line in lines)}


def run_smoke(env: dict[str, str]) -> tuple[float, str]:
    """``./run_all.sh --profile smoke``: (seconds, run_all's closing line and table, the end of its output). Its
    output also goes to this process's stderr as it comes."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        ["./run_all.sh", "--profile", "smoke"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    tail: list[str] = []
    for line in proc.stdout:
        sys.stderr.write(line)
        tail = (tail + [line])[-40:]
    if proc.wait() != 0:
        raise SystemExit(f"./run_all.sh --profile smoke failed (exit {proc.returncode}); its output is above")
    closing = [k for k, line in enumerate(tail) if line.startswith("run_all: ")]
    return time.perf_counter() - started, "".join(tail[closing[-1] if closing else 0 :])


def measure() -> dict:
    before = tree_status()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="smoke_from_empty_") as tmp:
        seconds, tail = run_smoke(store_env(Path(tmp)))
        per_paper = paper_walls(Path(tmp) / "cache")
    return {
        "total_seconds": round(seconds, 1),
        "within_budget": seconds <= BUDGET_SECONDS,
        "budget_seconds": BUDGET_SECONDS,
        "per_paper_seconds": per_paper,
        "site_and_start_seconds": round(seconds - sum(per_paper.values()), 1),
        "load_average_at_start": [round(x, 2) for x in load],
        "new_in_tree": sorted(tree_status() - before),
        "summary": tail,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT), help=f"the JSON summary (default {DEFAULT_OUTPUT})")
    args = parser.parse_args()
    require_mirror()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    summary = {
        "benchmark": "smoke_from_empty",
        "command": "./run_all.sh --profile smoke",
        "machine": machine(),
        "cpu_count": os.cpu_count(),
        "commit": commit.stdout.strip(),
        "date": time.strftime("%Y-%m-%d"),
        "uncommitted_paths": len(tree_status()),  # the tree measured is the commit plus these
        **measure(),
    }
    emit(summary, args.output)
    return 0 if summary["within_budget"] and not summary["new_in_tree"] else 1


if __name__ == "__main__":
    sys.exit(main())
