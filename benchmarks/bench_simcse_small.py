"""Speed of the small profile's SimCSE part (rerun it; it is not a test). Needs SENTEMB_DATA (the mirror).

    .venv/bin/python benchmarks/bench_simcse_small.py              # steps fp32 vs bf16, encoding, 7-task STS
    .venv/bin/python benchmarks/bench_simcse_small.py --records    # + per-run seconds of the committed records
    .venv/bin/python benchmarks/bench_simcse_small.py --grid       # + the whole small grid, cold and cached
    SENTEMB_CACHE=$(mktemp -d) .venv/bin/python benchmarks/bench_simcse_small.py --from-scratch [--keep DIR]

- Training steps: SimCSE unsup. (batch 64 x 2 views) and sup. (64 x 3) steps of all-MiniLM-L6-v2 through the
  archive's objectives, fp32 and bf16 autocast interleaved in one process (so drift hits both alike).
- Encoding: the STS-B dev sentences in fp32 at batch 32/64/128 and in bf16 (the dev evaluation during training).
- The 7-task STS evaluation in fp32 at batch 64 (the default now) and 128 (the default before).
- ``--records``: per run of ``results/runs/small``: wall, training phase, steps, overhead outside
  forward/backward/optimizer, final evaluation, and the totals.
- ``--grid``: the whole small SimCSE grid into a temporary results/cache directory (the committed records are
  not touched), cold and then cached.
- ``--from-scratch``: the issue's budget as one command, ``./run_all.sh --paper simcse`` (core rows, derived records,
  notebook) from an empty temporary store, then cached (``benchmark_io.from_scratch``; with an empty ``SENTEMB_CACHE``
  nothing comes from an earlier run's checkpoints or embeddings); ``--keep DIR`` copies the store's records there.
Prints a JSON summary (also written with --output).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from benchmark_io import emit, from_scratch, machine, require_mirror

ROOT = Path(__file__).resolve().parents[1]


def training_steps(steps: int) -> dict:
    from papers.simcse.experiments import grid
    from sentemb import precision as amp
    from sentemb.data.corpora import load_rows
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.train.loop import prepare_objective

    out = {}
    for name in ("unsup", "sup"):
        spec = grid("small")[name][0]
        objective = prepare_objective(spec, SentenceEncoder.from_name(spec.backbone, spec.pooler))
        rows = load_rows(objective.rows, spec.train_data)
        optimizer = torch.optim.AdamW(objective.parameters(), lr=spec.lr)
        times: dict[str, list[float]] = {"fp32": [], "bf16": []}
        for step in range(steps + 1):
            for precision in ("fp32", "bf16"):
                batch = rows[step * spec.batch_size : (step + 1) * spec.batch_size]
                tick = time.perf_counter()
                with amp.autocast(precision, torch.device("cpu")):
                    loss = objective(batch, random.Random(step))
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                if step:  # the first step of each warms up
                    times[precision].append(time.perf_counter() - tick)
        sequences = spec.batch_size * objective.sequences_per_row
        out[name] = {
            p: {"seconds_per_step": sum(t) / len(t), "sequences_per_second": sequences * len(t) / sum(t)}
            for p, t in times.items()
        }
        out[name]["bf16_speedup"] = out[name]["fp32"]["seconds_per_step"] / out[name]["bf16"]["seconds_per_step"]
    return out


def encoding() -> dict:
    from sentemb.data.sts import load_task
    from sentemb.models.encoder import SentenceEncoder

    sentences = list(dict.fromkeys(load_task("STSBenchmark").parts["dev"].sentences()))
    encoder = SentenceEncoder.from_name("all-MiniLM-L6-v2", "avg")
    encoder.encode(sentences[:64])  # warm-up
    out = {"sentences": len(sentences)}
    for label, kwargs in (
        ("fp32_b32", {"batch_size": 32}),
        ("fp32_b64", {"batch_size": 64}),
        ("fp32_b128", {"batch_size": 128}),
        ("bf16_b64", {"batch_size": 64, "precision": "bf16"}),
    ):
        tick = time.perf_counter()
        encoder.encode(sentences, **kwargs)
        seconds = time.perf_counter() - tick
        out[label] = {"seconds": seconds, "sentences_per_second": len(sentences) / seconds}
    return out


def sts_evaluation() -> dict:
    from sentemb.evaluate.suite import evaluate_model
    from sentemb.models.encoder import SentenceEncoder

    encoder = SentenceEncoder.from_name("all-MiniLM-L6-v2", "avg")
    out = {}
    for batch in (64, 128):
        tick = time.perf_counter()
        result, _ = evaluate_model(lambda s: encoder.encode(s, batch_size=batch), ["sts"])
        seconds = time.perf_counter() - tick
        out[f"fp32_b{batch}"] = {
            "seconds": seconds,
            "unique_sentences": result["n_sentences"],
            "sentences_per_second": result["n_sentences"] / seconds,
            "avg_spearman": result["sts_simcse"]["summary"]["Avg."],
        }
    return out


def records() -> dict:
    from sentemb.runs.store import all_records

    runs, totals = [], {"wall": 0.0, "training_phase": 0.0, "steps": 0.0, "final_eval": 0.0}
    for record in all_records("small"):
        training = record["training"] or {}
        phase = training.get("phase_seconds", {})
        runs.append(
            {
                "run_id": record["run_id"],
                "objective": record["spec"]["objective"],
                "seed": record["spec"]["seed"],
                "wall": record["timing"]["total_seconds"],
                "training_phase": phase.get("total", 0.0),
                "steps": phase.get("steps", 0.0),
                "dev_evaluation": phase.get("dev_evaluation", 0.0),
                "checkpoint": phase.get("checkpoint", 0.0),
                "overhead_fraction": training.get("overhead_fraction"),
                "final_eval": record["timing"]["final_eval_seconds"],
            }
        )
        for key in totals:
            totals[key] += runs[-1][key]
    overheads = [r["overhead_fraction"] for r in runs if r["overhead_fraction"] is not None]
    return {"runs": runs, "totals": totals, "max_overhead_fraction": max(overheads, default=None)}


def whole_grid() -> dict:
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "SENTEMB_RESULTS": f"{tmp}/results",
            "SENTEMB_FIGURES": f"{tmp}/figures",
            "SENTEMB_CACHE": f"{tmp}/cache",
        }
        for label in ("cold", "cached"):
            tick = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "sentemb", "run", "--paper", "simcse", "--profile", "small"],
                cwd=ROOT,
                env=env,
                check=True,
            )
            out[f"grid_{label}_seconds"] = time.perf_counter() - tick
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", action="store_true", help="per-run seconds of the committed small records")
    parser.add_argument("--grid", action="store_true", help="also time the whole small SimCSE grid (~30 min)")
    parser.add_argument(
        "--from-scratch",
        action="store_true",
        help="time ./run_all.sh --paper simcse from an empty store (the 45-min budget), then cached",
    )
    parser.add_argument("--keep", default=None, help="with --from-scratch: copy the temporary store's records here")
    parser.add_argument("--steps", type=int, default=4, help="timed training steps per precision and objective")
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    require_mirror()
    if args.from_scratch:  # nothing else in the process: the measurement is the command alone
        emit({**machine(), **from_scratch("simcse", keep=args.keep)}, args.output)
        return
    torch.set_num_threads(os.cpu_count() or 1)
    summary = {
        **machine(),
        "training_steps": training_steps(args.steps),
        "encoding_stsb_dev": encoding(),
        "sts_7_tasks": sts_evaluation(),
    }
    if args.records:
        summary["records"] = records()
    if args.grid:
        summary.update(whole_grid())
    emit(summary, args.output)


if __name__ == "__main__":
    main()
