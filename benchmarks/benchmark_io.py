"""What every benchmark script shares: it needs the mirror, it prints its summary as JSON (and writes it with
``--output``), and a paper's small-profile budget is measured the same way (:func:`from_scratch`). Imported by the
scripts as a sibling module (``python benchmarks/bench_<x>.py`` puts this folder on the path)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def require_mirror() -> None:
    if not os.environ.get("SENTEMB_DATA"):
        sys.exit("set SENTEMB_DATA to the offline mirror (e.g. ../shared/datasets)")


def emit(summary: dict, output: str | None) -> None:
    text = json.dumps(summary, indent=1)
    print(text)
    if output:
        Path(output).write_text(text + "\n", encoding="utf-8")


def machine(device: str = "cpu") -> dict:
    """The header of every benchmark's summary: the device, as run records name it, and torch's thread count."""
    import torch

    from sentemb.runs.provenance import collect

    return {"device": collect(torch.device(device))["device"], "threads": torch.get_num_threads()}


def from_scratch(paper: str, before: tuple[str, str] | None = None, keep: str | None = None) -> dict:
    """A paper's small-profile budget, as one command: ``./run_all.sh --paper <paper>`` into an empty temporary store
    (results, figures and executed notebooks; the committed ones are not touched), then again cached. ``before``
    (paper, run names) runs another paper's shared runs into that store first and times them apart (a budget that
    excludes them): they leave their checkpoints and evaluation embeddings in this machine's cache, as
    ``./run_all.sh`` does. ``keep``: a folder that receives the temporary store's run records (and derived records)
    when the command has finished, e.g. to commit records of exactly this code. Returns the seconds and, per record,
    its phases."""
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results"
        (results / "runs" / "small").mkdir(parents=True)
        env = {
            **os.environ,
            "SENTEMB_RESULTS": str(results),
            "SENTEMB_FIGURES": f"{tmp}/figures",
            "SENTEMB_NOTEBOOKS": f"{tmp}/notebooks",
        }
        out: dict = {"paper": paper}
        try:
            if before is not None:
                other, only = before
                tick = time.perf_counter()
                subprocess.run(
                    [
                        str(ROOT / ".venv" / "bin" / "python"),
                        "-m",
                        "sentemb",
                        "run",
                        "--paper",
                        other,
                        "--profile",
                        "small",
                        "--only",
                        only,
                    ],
                    cwd=ROOT,
                    env=env,
                    check=True,
                )
                out[f"{other}_{only.replace(',', '_')}_seconds"] = time.perf_counter() - tick
            for label in ("from_scratch", "cached"):
                tick = time.perf_counter()
                subprocess.run(["./run_all.sh", "--paper", paper], cwd=ROOT, env=env, check=True)
                out[f"run_all_{label}_seconds"] = time.perf_counter() - tick
        finally:  # a failed notebook loses none of the records made before it
            out["runs"] = record_phases(results)
            if keep:
                shutil.copytree(results / "runs" / "small", Path(keep), dirs_exist_ok=True)
    return out


def record_phases(results: Path) -> list[dict]:
    """Per record of a store's small profile: run id, objective, seed, wall, steps, dev and final evaluation seconds."""
    rows = []
    for path in sorted((results / "runs" / "small").glob("*.json")):
        record = json.loads(path.read_text())
        phase = (record["training"] or {}).get("phase_seconds", {})
        rows.append(
            {
                "run_id": record["run_id"],
                "objective": record["spec"]["objective"],
                "seed": record["spec"]["seed"],
                "wall": record["timing"]["total_seconds"],
                "steps": phase.get("steps", 0.0),
                "dev_evaluation": phase.get("dev_evaluation", 0.0),
                "final_eval": record["timing"]["final_eval_seconds"],
            }
        )
    return rows
