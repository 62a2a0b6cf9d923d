"""The whole small profile, as one command (its 3-hour budget); rerun it, it is not a test. Needs SENTEMB_DATA.

    .venv/bin/python benchmarks/bench_archive_small.py --cached          # ./run_all.sh over the committed records
    .venv/bin/python benchmarks/bench_archive_small.py --from-scratch    # ./run_all.sh into an empty store and cache

- ``--cached``: ``./run_all.sh`` in this checkout, over the committed records (the README's main command on a fresh
  clone; budget: 2 min), then ``git status --porcelain``: the run must leave the working tree clean.
- ``--from-scratch``: ``./run_all.sh`` with results, figures, notebooks, site and ``SENTEMB_CACHE`` all in one new
  temporary folder (no checkpoint, embedding or record of an earlier run is reused; budget: 3 h on 2 cores), then
  once more over what it made (cached). Per paper, the wall time and the runs trained/loaded come from run_all's
  own closing table (``sentemb summary``, its run events).
``--jobs N`` passes ``--jobs N`` to ``./run_all.sh`` (runs side by side; their records then differ from the committed
ones, which were made one at a time: see ``sentemb.runs.side_by_side``). Prints a JSON summary (also written with
--output); ``--keep DIR`` copies the fresh store's records there, with
run_all's ``walls.tsv`` (the papers finished so far), also when the run fails or is stopped (Ctrl-C or SIGTERM).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmark_io import emit, machine, require_mirror

ROOT = Path(__file__).resolve().parents[1]


def _per_paper(cache: Path) -> dict:
    """The newest run_all event folder's walls.tsv: paper -> seconds."""
    folders = sorted((cache / "run_all").glob("*"), key=lambda p: p.stat().st_mtime)
    if not folders:
        return {}
    lines = (folders[-1] / "walls.tsv").read_text().splitlines() if (folders[-1] / "walls.tsv").is_file() else []
    return {paper: float(seconds) for paper, seconds in (line.split("\t") for line in lines)}


def run_all(env: dict, jobs: int = 1) -> tuple[float, str]:
    """Runs ./run_all.sh; its output goes to this process's stdout/stderr as it comes (a run of hours shows its
    progress, and a failure keeps its log) and the closing table is parsed from a copy of stdout."""
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as copy:
        # its own process group: when this benchmark is stopped, run_all.sh and every process it started stop too
        proc = subprocess.Popen(
            ["./run_all.sh", "--jobs", str(jobs)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            for line in proc.stdout:
                sys.stderr.write(line)
                copy.write(line)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait()
        if proc.wait() != 0:
            raise SystemExit(f"./run_all.sh failed (exit {proc.returncode}); its output is above")
        copy.seek(0)
        return time.perf_counter() - started, copy.read()[-3000:]


def cached() -> dict:
    env = dict(os.environ)
    seconds, tail = run_all(env)
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    cache = Path(env.get("SENTEMB_CACHE", Path.home() / ".cache" / "sentemb"))
    return {
        "cached_seconds": seconds,
        "per_paper_seconds": _per_paper(cache),
        "tree_clean": not dirty.strip(),
        "dirty": dirty.splitlines()[:20],
        "summary": tail,
    }


def _stop_on_sigterm(signum, frame):
    raise SystemExit(f"stopped by signal {signum}")


def from_scratch(keep: str | None, jobs: int = 1) -> dict:
    signal.signal(signal.SIGTERM, _stop_on_sigterm)  # `kill` runs the finally below, as Ctrl-C does
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "SENTEMB_RESULTS": f"{tmp}/results",
            "SENTEMB_FIGURES": f"{tmp}/figures",
            "SENTEMB_NOTEBOOKS": f"{tmp}/notebooks",
            "SENTEMB_SITE": f"{tmp}/site",
            "SENTEMB_CACHE": f"{tmp}/cache",
        }
        out: dict = {}
        try:
            out["from_scratch_seconds"], out["from_scratch_summary"] = run_all(env, jobs)
            out["from_scratch_per_paper_seconds"] = _per_paper(Path(tmp) / "cache")
            out["cached_seconds"], out["cached_summary"] = run_all(env)
        finally:
            if keep and (Path(tmp) / "results" / "runs" / "small").is_dir():
                shutil.copytree(Path(tmp) / "results" / "runs" / "small", Path(keep), dirs_exist_ok=True)
            if keep:  # the per-paper walls of the papers finished so far, also when the run stopped halfway
                walls = _per_paper(Path(tmp) / "cache")
                Path(keep).mkdir(parents=True, exist_ok=True)
                (Path(keep) / "walls.tsv").write_text("".join(f"{p}\t{s:.1f}\n" for p, s in walls.items()))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cached", action="store_true")
    parser.add_argument("--from-scratch", action="store_true")
    parser.add_argument("--keep", default=None)
    parser.add_argument("--jobs", type=int, default=1, help="run_all.sh --jobs for the from-scratch run (default 1)")
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    if not (args.cached or args.from_scratch):
        parser.error("choose --cached, --from-scratch or both")
    require_mirror()
    summary = {"benchmark": "archive_small", "machine": machine(), "jobs": args.jobs}
    if args.cached:
        summary["cached"] = cached()
    if args.from_scratch:
        summary["from_scratch"] = from_scratch(args.keep, args.jobs)
    emit(summary, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
