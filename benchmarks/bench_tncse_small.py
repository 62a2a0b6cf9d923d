"""Speed of TNCSE's small profile (rerun it; it is not a test). Needs SENTEMB_DATA (the mirror).

    .venv/bin/python benchmarks/bench_tncse_small.py              # a TNCSE step against a SimCSE step
    .venv/bin/python benchmarks/bench_tncse_small.py --records    # + per-run seconds of the committed TNCSE records
    .venv/bin/python benchmarks/bench_tncse_small.py --from-scratch   # + ./run_all.sh --paper tncse, empty store

- Steps: one stage-2 TNCSE step (two all-MiniLM-L6-v2 encoders, batch 64, every sentence twice through each: 256
  sequences) against one unsupervised SimCSE step (64 x 2 = 128 sequences), fp32 as the small profile trains,
  interleaved in one process so that drift hits both alike.
- ``--records``: per TNCSE-grid run of ``results/runs/small`` (the SimCSE stage-1 runs excluded): wall, training
  steps, dev evaluation, final evaluation, and the totals of the core rows and of every recorded row.
- ``--from-scratch``: the budget measurement, as one command. First SimCSE's ``unsup`` runs (the stage-1 encoders;
  the issue's budget excludes SimCSE's shared runs, so they are timed apart) run into an empty temporary results
  directory, leaving their checkpoints and evaluation embeddings in this machine's cache as ``./run_all.sh`` does;
  then ``./run_all.sh --paper tncse`` (runs + notebook) is timed as one command, then again cached. The summary
  lists every record of the temporary store with its phases. The committed records and figures are not touched.
Prints a JSON summary (also written with --output).
"""

from __future__ import annotations

import argparse
import random
import time

import torch
from benchmark_io import emit, from_scratch, machine, require_mirror


def training_steps(steps: int) -> dict:
    from papers.simcse.experiments import grid as simcse_grid
    from papers.tncse.experiments import grid
    from sentemb.data.corpora import load_rows
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.train.loop import prepare_objective

    specs = {"tncse": grid("small")["tncse"][0], "simcse_unsup": simcse_grid("small")["unsup"][0]}
    objectives = {}
    for name, spec in specs.items():  # the backbone stands in for the stage-1 checkpoints: the same cost
        encoders = [
            SentenceEncoder.from_name(spec.backbone, spec.pooler, dropout=spec.dropout)
            for _ in range(2 if name == "tncse" else 1)
        ]
        objectives[name] = prepare_objective(spec, *encoders)
    rows = load_rows("sentences", specs["tncse"].train_data)
    optimizers = {n: torch.optim.AdamW(o.parameters(), lr=specs[n].lr) for n, o in objectives.items()}
    times: dict[str, list[float]] = {n: [] for n in objectives}
    for step in range(steps + 1):
        for name, objective in objectives.items():
            batch = rows[step * 64 : (step + 1) * 64]
            tick = time.perf_counter()
            loss = objective(batch, random.Random(step))
            loss.backward()
            optimizers[name].step()
            optimizers[name].zero_grad()
            if step:  # the first step of each warms up
                times[name].append(time.perf_counter() - tick)
    out = {}
    for name, t in times.items():
        sequences = 64 * objectives[name].sequences_per_row
        out[name] = {
            "seconds_per_step": sum(t) / len(t),
            "sequences_per_step": sequences,
            "sequences_per_second": sequences * len(t) / sum(t),
        }
    out["tncse_over_simcse"] = out["tncse"]["seconds_per_step"] / out["simcse_unsup"]["seconds_per_step"]
    return out


def records() -> dict:
    from papers.tncse.experiments import CORE, grid
    from sentemb.runs.store import load

    runs = []
    for name, specs in grid("small", extended=True).items():
        if name == "simcse":
            continue  # SimCSE's shared runs: counted in SimCSE's budget
        for spec in specs:
            record = load("small", spec.run_id)
            if record is None:
                continue
            phase = (record["training"] or {}).get("phase_seconds", {})
            runs.append(
                {
                    "run": name,
                    "seed": spec.seed,
                    "run_id": spec.run_id,
                    "core": name in CORE,
                    "wall": record["timing"]["total_seconds"],
                    "steps": phase.get("steps", 0.0),
                    "dev_evaluation": phase.get("dev_evaluation", 0.0),
                    "final_eval": record["timing"]["final_eval_seconds"],
                    "started_utc": record["provenance"]["started_utc"],
                }
            )
    return {
        "runs": runs,
        "core_wall_seconds": sum(r["wall"] for r in runs if r["core"]),
        "all_wall_seconds": sum(r["wall"] for r in runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", action="store_true", help="per-run seconds of the committed TNCSE records")
    parser.add_argument(
        "--from-scratch",
        action="store_true",
        help="also time ./run_all.sh --paper tncse from an empty store (after SimCSE's unsup runs, timed apart), "
        "then cached",
    )
    parser.add_argument("--steps", type=int, default=3, help="timed training steps per objective")
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    require_mirror()
    summary = {**machine(), "training_steps": training_steps(args.steps)}
    if args.records:
        summary["records"] = records()
    if args.from_scratch:
        summary.update(from_scratch("tncse", before=("simcse", "unsup")))
    emit(summary, args.output)


if __name__ == "__main__":
    main()
