"""Training step time of DeCLUTR's objective on the small profile, and the paper's budget (rerun it; not a test).

    SENTEMB_DATA=../shared/datasets .venv/bin/python benchmarks/bench_declutr_step.py [--steps 4] [--max-span 64 128]
    SENTEMB_DATA=../shared/datasets .venv/bin/python benchmarks/bench_declutr_step.py --from-scratch [--keep DIR]

all-MiniLM-L6-v2, 16 mirror documents per step, A = P = 2, fp32, contrastive + MLM (the headline row), for each
l_max given (l_min = l_max / 4, as the small profile's 16-64). Prints seconds per step, spans per second, and what
the small profile's 60 steps and the paper's epoch (30,952 steps of 16 OpenWebText documents) would take here.
``--from-scratch``: ``./run_all.sh --paper declutr`` from an empty temporary store as one command, then cached
(``benchmark_io.from_scratch``; ``--keep DIR`` copies the store's records there). JSON (also written with --output).
"""

from __future__ import annotations

import argparse
import os
import random
import time

import torch
from benchmark_io import emit, from_scratch, machine, require_mirror

SMALL_STEPS = 60
PAPER_STEPS = 495_243 // 16


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=4, help="timed steps per setting (after one warm-up step)")
    parser.add_argument("--max-span", type=int, nargs="+", default=[64], help="l_max values to time")
    parser.add_argument(
        "--from-scratch",
        action="store_true",
        help="also time ./run_all.sh --paper declutr from an empty temporary store, then cached",
    )
    parser.add_argument("--keep", default=None, help="with --from-scratch: copy the temporary store's records here")
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    require_mirror()
    torch.set_num_threads(os.cpu_count() or 1)
    from sentemb.data.documents import load_documents
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.spec import RunSpec
    from sentemb.train.loop import prepare_objective

    documents = load_documents("wikitext2_articles")
    device = torch.device("cpu")
    out = {
        **machine(str(device)),
        "precision": "fp32",
        "documents_per_step": 16,
        "num_anchors": 2,
        "num_positives": 2,
        "timed_steps": args.steps,
    }
    for max_span in args.max_span:
        params = {"min_span_len": max_span // 4, "max_span_len": max_span}
        spec = RunSpec(
            profile="small",
            backbone="all-MiniLM-L6-v2",
            pooler="avg",
            objective="declutr",
            objective_params=params,
            train_data="wikitext2_articles",
            steps=1,
            batch_size=16,
            max_len=max_span + 2,
        )
        model = prepare_objective(spec, SentenceEncoder.from_name(spec.backbone, spec.pooler)).train()
        rows = model.select_rows(documents)
        optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
        times = []
        for step in range(args.steps + 1):
            batch = rows[step * 16 : (step + 1) * 16]
            tick = time.perf_counter()
            loss = model(batch, random.Random(step))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if step:
                times.append(time.perf_counter() - tick)
        per_step = sum(times) / len(times)
        out[f"l_max={max_span}"] = {
            "documents_kept": len(rows),
            "seconds_per_step": per_step,
            "spans_per_second": 16 * model.sequences_per_row / per_step,
            "small_profile_minutes": SMALL_STEPS * per_step / 60,
            "paper_epoch_hours_here": PAPER_STEPS * per_step / 3600,
        }
    if args.from_scratch:
        out.update(from_scratch("declutr", keep=args.keep))
    emit(out, args.output)


if __name__ == "__main__":
    main()
