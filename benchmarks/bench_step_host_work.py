"""The host (CPU) work of one training step of each kind the GPU benchmark times, without the model: what a GPU step
cannot take less than unless the next step's host work overlaps the device's (``sync_free``); rerun it, it is not a
test. Each kind's work is the objective's own code: tokenising its sentences into a padded CPU batch
(``SentenceEncoder.cpu_batch``), and for DeCLUTR sampling the spans of 16 documents, padding them and drawing the MLM
masks. No mirror needed: generated rows of the full profile's sizes (``bench_gpu_full_steps.rows_for``), MiniLM's
tokenizer (fast, Rust), the tiny random BERT's encoder and objective for their code (no forward pass).

    python benchmarks/bench_step_host_work.py --output benchmarks/results/step_host_work_2cores_avx512.json

Per kind: the median ms of ``--repeats`` steps (each with its own augmentation/span generator), the sequences
tokenised or padded, and the step's device time from ``gpu_full_steps_h100*.json`` for scale (the fraction is
host / device: above about 0.3 a per-step synchronisation leaves the device idle for a visible share).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

import torch
from bench_gpu_full_steps import rows_for  # this folder is on sys.path when run as a script
from benchmark_io import emit, machine

from sentemb.objectives.masked_lm import mask_tokens_for_mlm

RESULTS = Path(__file__).resolve().parent / "results"
DEVICE_STEP_KEYS = {  # kind -> the full grid's configuration key in gpu_full_steps_h100*.json
    "unsup": "bert-base-uncased simcse_unsup b64 len32 fp16 ",
    "sup": "bert-base-uncased simcse_sup b512 len32 fp16 ",
    "simcsepp": "bert-base-uncased simcse_pp b64 len32 fp16 negatives=off_dropout positive_noise=none "
    "negative_noise=none noise_samples=10 bt_weight=off dcl_weight=on",
    "declutr": "roberta-base declutr b16 len514 fp16 mlm_weight=on num_anchors=2 num_positives=2 max_span_len=512 "
    "min_span_len=32 memory_size=off contrastive=True",
}


def declutr_work(documents, max_span: int):
    """DeCLUTR's host work as ``DeCLUTR.forward`` does it: spans, the anchors' padded batch and its MLM masks, the
    positives' padded batch (the objective around the tiny random BERT: its weights are never used here; its 512
    positions cut the longest spans to 510 tokens)."""
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.objectives.registry import build_objective

    encoder = SentenceEncoder.from_name("tiny-random-bert", "avg")
    params = {"min_span_len": 32, "max_span_len": max_span}
    objective = build_objective("declutr", params, [encoder], max_span + 2)
    rows = objective.select_rows(documents)
    tokenizer = encoder.tokenizer
    specials = set(tokenizer.all_special_ids)

    def work(rng: random.Random):
        anchors, positives = objective.sample_spans(rows, rng)
        anchor_inputs = objective._inputs(anchors)
        mask_tokens_for_mlm(
            anchor_inputs["input_ids"],
            mask_token_id=tokenizer.mask_token_id,
            vocab_size=len(tokenizer),
            special_token_ids=specials,
            generator=torch.Generator().manual_seed(rng.getrandbits(63)),
        )
        objective._inputs([span for spans in positives for span in spans])

    return work


def device_step_seconds() -> dict[str, float]:
    found: dict[str, float] = {}
    for path in sorted(RESULTS.glob("gpu_full_steps_h100*.json")):
        found.update(json.loads(path.read_text())["seconds_per_step"])
    return {kind: found[key] for kind, key in DEVICE_STEP_KEYS.items() if isinstance(found.get(key), (int, float))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--max-span", type=int, default=512, help="DeCLUTR's longest span")
    parser.add_argument("--output", default=None)
    args = parser.parse_args(argv)
    from sentemb.models.encoder import SentenceEncoder

    encoder = SentenceEncoder.from_name("tiny-random-bert", "avg")  # MiniLM's tokenizer; the weights are not used
    tokenizer = encoder.tokenizer
    rng = random.Random(0)
    unsup = rows_for("sentences", 64, tokenizer, rng)
    triples = rows_for("nli_triples", 512, tokenizer, rng)
    work = {
        "unsup": (lambda r: encoder.cpu_batch(unsup + unsup, 32), 128),
        "sup": (lambda r: encoder.cpu_batch([s for row in triples for s in row[:3]], 32), 1536),
        "simcsepp": (lambda r: (encoder.cpu_batch(unsup + unsup, 32), encoder.cpu_batch(unsup, 32)), 192),
        "declutr": (declutr_work(rows_for("documents", 16, tokenizer, rng), args.max_span), 96),
    }
    device = device_step_seconds()
    out = {**machine(), "torch": torch.__version__, "repeats": args.repeats, "kinds": {}}
    for kind, (step, sequences) in work.items():
        seconds = []
        for repeat in range(args.repeats + 1):
            tick = time.perf_counter()
            step(random.Random(repeat))
            seconds.append(time.perf_counter() - tick)
        host = statistics.median(seconds[1:])  # the first warms the tokenizer's caches
        out["kinds"][kind] = {
            "sequences": sequences,
            "host_ms": round(1000 * host, 2),
            "h100_device_step_ms": round(1000 * device[kind], 1) if kind in device else None,
            "host_over_device": round(host / device[kind], 3) if kind in device else None,
        }
        print(f"{kind}: {1000 * host:.1f} ms of host work a step", file=sys.stderr, flush=True)
    emit(out, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
