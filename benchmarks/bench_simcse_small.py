"""Speed benchmark of the small profile's SimCSE part (rerun it; it is not a test).

    .venv/bin/python benchmarks/bench_simcse_small.py            # micro: training steps + one STS evaluation
    .venv/bin/python benchmarks/bench_simcse_small.py --grid     # + the whole small SimCSE grid, cold and cached

Needs SENTEMB_DATA (the mirror). The grid is run into a temporary results/cache directory, so the
committed records are not touched. Prints a JSON summary (optionally written with --output).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]


def training_throughput(steps: int, batch: int, max_len: int) -> dict:
    from sentemb.data.corpora import load_sentences
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.objectives import UnsupervisedInfoNCE

    sentences = load_sentences("wiki_sentences_combined")
    encoder = SentenceEncoder.from_name("all-MiniLM-L6-v2", "cls_before_pooler").train()
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=3e-5)
    loss_fn = UnsupervisedInfoNCE(0.05)
    times = []
    for step in range(steps + 1):
        rows = sentences[step * batch : (step + 1) * batch]
        tick = time.perf_counter()
        z = encoder(**encoder.tokenize(rows + rows, max_len), training=True)
        loss = loss_fn(z[:batch], z[batch:])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step:  # the first step warms up
            times.append(time.perf_counter() - tick)
    per_step = sum(times) / len(times)
    return {"batch": batch, "max_len": max_len, "seconds_per_step": per_step,
            "sentences_per_second": batch / per_step, "sequences_per_second": 2 * batch / per_step}


def sts_evaluation() -> dict:
    from sentemb.evaluate.sts import run_sts
    from sentemb.models.encoder import SentenceEncoder

    encoder = SentenceEncoder.from_name("all-MiniLM-L6-v2", "avg")
    tick = time.perf_counter()
    result = run_sts(encoder.encode)
    seconds = time.perf_counter() - tick
    return {"seconds": seconds, "unique_sentences": result["n_sentences"],
            "sentences_per_second": result["n_sentences"] / seconds, "avg_spearman": result["summary"]["Avg."]}


def grid() -> dict:
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "SENTEMB_RESULTS": f"{tmp}/results", "SENTEMB_FIGURES": f"{tmp}/figures",
               "SENTEMB_CACHE": f"{tmp}/cache"}
        for label in ("cold", "cached"):
            tick = time.perf_counter()
            subprocess.run([sys.executable, "-m", "sentemb", "run", "--paper", "simcse", "--profile", "small"],
                           cwd=ROOT, env=env, check=True)
            out[f"grid_{label}_seconds"] = time.perf_counter() - tick
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--grid", action="store_true", help="also time the whole small SimCSE grid (~20 min)")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    if not os.environ.get("SENTEMB_DATA"):
        sys.exit("set SENTEMB_DATA to the offline mirror (e.g. ../shared/datasets)")
    torch.set_num_threads(os.cpu_count() or 1)
    from sentemb.runs.provenance import collect

    summary = {"device": collect(torch.device("cpu"))["device"], "threads": torch.get_num_threads(),
               "train_b64_l32": training_throughput(args.steps, 64, 32), "sts_7_tasks": sts_evaluation()}
    if args.grid:
        summary.update(grid())
    text = json.dumps(summary, indent=1)
    print(text)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
