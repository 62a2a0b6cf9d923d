"""How the small profile's work scales with CPU threads: one process with every core, one with one thread, and one
single-thread process per core side by side (rerun it; not a test; nothing else may run on the machine meanwhile).

    SENTEMB_DATA=../shared/datasets .venv/bin/python benchmarks/bench_thread_scaling.py [--steps 8] [--output F]

Two kinds of work, as a small-profile run does them (fp32, all-MiniLM-L6-v2):
- training: unsup. SimCSE steps at batch 64, length 32 on the mirror's Wikipedia sentences (one warm-up step);
- encoding: the final evaluation's forward passes, 2,048 STS-B sentences sorted by length, batch 64.

Each configuration runs in fresh processes (torch fixes its thread pool per process). The summary gives seconds per
step (per 2,048 sentences) in each process and the machine's throughput: steps (sentences) per second summed over
the processes running at once. The question it answers: would running the grid's runs side by side, one thread
each, finish the small profile sooner than running them one after the other with every core (its 3-hour budget)?
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time

from benchmark_io import emit, machine, require_mirror

BATCH, MAX_LEN, N_ENCODE = 64, 32, 2048


def work(kind: str, steps: int, threads: int) -> dict:
    """One process's share: ``steps`` timed training steps, or ``steps`` encodings of the sentences, with
    ``threads`` torch threads."""
    import torch

    torch.set_num_threads(threads)
    from sentemb.data.corpora import load_sentences
    from sentemb.data.sts import load_task
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.spec import RunSpec
    from sentemb.train.loop import prepare_objective

    spec = RunSpec(
        profile="small",
        backbone="all-MiniLM-L6-v2",
        objective="simcse_unsup",
        train_data="wiki_sentences_combined",
        steps=1,
        batch_size=BATCH,
        max_len=MAX_LEN,
        precision="fp32",
    )
    encoder = SentenceEncoder.from_name(spec.backbone, spec.pooler)
    times = []
    if kind == "train":
        sentences = load_sentences("wiki_sentences_combined")
        model = prepare_objective(spec, encoder).train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=spec.lr)
        for step in range(steps + 1):
            tick = time.perf_counter()
            loss = model(sentences[step * BATCH : (step + 1) * BATCH], random.Random(step))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if step:
                times.append(time.perf_counter() - tick)
    else:
        stsb = load_task("STSBenchmark")
        sentences = sorted(dict.fromkeys(s for p in stsb.parts.values() for s in p.sentences()), key=len)[:N_ENCODE]
        encoder.encode(sentences[:BATCH], batch_size=BATCH, precision="fp32")  # warm-up
        for _ in range(steps):
            tick = time.perf_counter()
            encoder.encode(sentences, batch_size=BATCH, precision="fp32")
            times.append(time.perf_counter() - tick)
    return {"threads": torch.get_num_threads(), "seconds": sum(times) / len(times)}


def side_by_side(kind: str, steps: int, processes: int, threads: int) -> dict:
    """``processes`` fresh processes started together, each doing :func:`work` with ``threads``."""
    command = [sys.executable, __file__, "--worker", kind, "--steps", str(steps), "--threads", str(threads)]
    started = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True) for _ in range(processes)]
    results = []
    for proc in started:
        out, _ = proc.communicate()
        if proc.returncode:
            raise SystemExit(f"worker failed ({' '.join(command)}), exit {proc.returncode}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    per_process = [r["seconds"] for r in results]
    unit = 1 if kind == "train" else N_ENCODE
    return {
        "processes": processes,
        "threads_each": threads,
        "seconds_per_unit": per_process,
        "throughput": sum(unit / s for s in per_process),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=8, help="timed steps (encodings) per process")
    parser.add_argument("--output", default=None)
    parser.add_argument("--worker", choices=("train", "encode"), default=None, help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    require_mirror()
    if args.worker:
        print(json.dumps(work(args.worker, args.steps, args.threads)))
        return
    cores = os.cpu_count() or 1
    out = {
        **machine(),
        "cores": cores,
        "batch": BATCH,
        "max_len": MAX_LEN,
        "steps": args.steps,
        "units": {"train": "steps per second", "encode": "sentences per second"},
    }
    for kind in ("train", "encode"):
        configs = {
            "one process, every core": side_by_side(kind, args.steps, 1, cores),
            "one process, one thread": side_by_side(kind, args.steps, 1, 1),
            "one single-thread process per core": side_by_side(kind, args.steps, cores, 1),
        }
        best = configs["one process, every core"]["throughput"]
        out[kind] = {name: {**c, "relative_to_every_core": c["throughput"] / best} for name, c in configs.items()}
    emit(out, args.output)


if __name__ == "__main__":
    main()
