"""Training step time of SimCSE against SimCSE++ (off-dropout + DCL), for SimCSE++ Table 6 (rerun it; not a test).

    SENTEMB_DATA=../shared/datasets .venv/bin/python benchmarks/bench_simcse_pp_step.py [--steps 6] [--precision bf16]

Both objectives train all-MiniLM-L6-v2 at batch 64, length 32 on the mirror's Wikipedia sentences, steps interleaved
in one process (so drift hits both alike). SimCSE++ runs the paper's settings (§5.1: off-dropout negatives, m = 0.9,
DCL with tau_DCL = 5, lambda = 0.1): a third forward pass without dropout per step, and the D x D DCL term.
Prints seconds per step, sentences per second, the SimCSE++/SimCSE ratio next to the paper's (1 h 59 min /
1 h 50 min for one epoch on its GPU, Table 6), and what one epoch of wiki1m (10^6 sentences, 15,625 steps) would
take here. JSON (also written with --output).
"""

from __future__ import annotations

import argparse
import os
import random
import time

import torch
from benchmark_io import emit, machine, require_mirror

PAPER_MINUTES = {"simcse": 110, "simcse_pp": 119}  # papers/simcse_pp/reported/table6.csv
OBJECTIVES = {
    "simcse": ("simcse_unsup", {}),
    "simcse_pp": ("simcse_pp", {"negatives": "off_dropout", "m": 0.9, "dcl_weight": 0.1, "dcl_temperature": 5.0}),
}
WIKI1M_STEPS = 1_000_000 // 64


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=6, help="timed steps per objective (after one warm-up step)")
    parser.add_argument("--precision", default="bf16", choices=("fp32", "bf16"))
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    require_mirror()
    torch.set_num_threads(os.cpu_count() or 1)
    from sentemb import precision as amp
    from sentemb.data.corpora import load_sentences
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.spec import RunSpec
    from sentemb.train.loop import prepare_objective

    sentences = load_sentences("wiki_sentences_combined")
    device = torch.device("cpu")
    runs = {}
    for label, (objective, params) in OBJECTIVES.items():
        spec = RunSpec(
            profile="small",
            backbone="all-MiniLM-L6-v2",
            objective=objective,
            objective_params=params,
            train_data="wiki_sentences_combined",
            steps=1,
            precision=args.precision,
        )
        model = prepare_objective(spec, SentenceEncoder.from_name(spec.backbone, spec.pooler)).train()
        runs[label] = (model, torch.optim.AdamW(model.parameters(), lr=spec.lr), [])
    for step in range(args.steps + 1):
        batch = sentences[step * 64 : (step + 1) * 64]
        for model, optimizer, times in runs.values():
            tick = time.perf_counter()
            with amp.autocast(args.precision, device):
                loss = model(batch, random.Random(step))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if step:
                times.append(time.perf_counter() - tick)
    out = {**machine(str(device)), "precision": args.precision, "batch": 64, "max_len": 32, "timed_steps": args.steps}
    for label, (_, _, times) in runs.items():
        per_step = sum(times) / len(times)
        out[label] = {
            "seconds_per_step": per_step,
            "sentences_per_second": 64 / per_step,
            "wiki1m_epoch_hours": WIKI1M_STEPS * per_step / 3600,
        }
    out["ratio_simcse_pp_to_simcse"] = out["simcse_pp"]["seconds_per_step"] / out["simcse"]["seconds_per_step"]
    out["paper_ratio"] = PAPER_MINUTES["simcse_pp"] / PAPER_MINUTES["simcse"]
    emit(out, args.output)


if __name__ == "__main__":
    main()
