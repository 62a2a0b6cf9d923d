"""The pretraining step before and after issue 65's recipe, as a ratio measured in one process.

    SENTEMB_DATA=../shared/datasets .venv/bin/python benchmarks/bench_pretrain_speedup.py [--blocks 5] [--output F]

Each variant is the real step of ``sentemb pretrain`` (``mini``, batch 32 x 128 tokens, bf16 autocast, no dropout,
the real text and masks): the optimizer step included. ``before`` is the run that made ``sentemb-bert-mini-mlm``
(MiniLM's 30,522-token vocabulary, SDPA attention, AdamW's default kernel, 15 % masked); ``after`` the new recipe's
speed options (``wordpiece-8192``, eager attention, fused AdamW), alone and together, and the masking rate's cost
(25 %: more positions through the MLM head). The variants run in interleaved blocks (each block: a few warm-up
steps, then timed steps), so a change in the machine's load falls on all of them alike; the summary gives each
variant's median step and its ratio to ``before``, and tokens of text a second (the 8k vocabulary cuts a word into
more tokens: ``words_per_token`` from the training text). Measure with nothing else on the cores.
"""

from __future__ import annotations

import argparse
import statistics
import time

from benchmark_io import emit, machine, require_mirror

BASE = {"size": "mini", "batch_size": 32, "lr": 1e-3, "warmup": 10, "dropout": 0.0, "steps": 1000}
VARIANTS = {
    "before": {},
    "vocab 8k": {"vocab": "wordpiece-8192"},
    "eager": {"attention": "eager"},
    "fused AdamW": {"fused_adamw": True},
    "after (all three)": {"vocab": "wordpiece-8192", "attention": "eager", "fused_adamw": True},
    "after, 25 % masked": {"vocab": "wordpiece-8192", "attention": "eager", "fused_adamw": True, "mask_rate": 0.25},
}


def variant(fields: dict):
    import torch

    from sentemb.pretrain import vocabulary
    from sentemb.pretrain.configs import PretrainConfig
    from sentemb.pretrain.corpus import load_corpus
    from sentemb.pretrain.model import build_model, collator, mask, masked_lm_loss
    from sentemb.pretrain.run import optimization_for
    from sentemb.train.resumable import EpochOrder

    config = PretrainConfig(**{**BASE, **fields})
    tokenizer = vocabulary.load(config.vocab)
    corpus = load_corpus(tokenizer, config.max_len)
    model = build_model(config.size, len(tokenizer), 0, config.dropout, config.attention)
    optimization = optimization_for(model, config, torch.device("cpu"))
    collate, order = collator(tokenizer, config.mask_rate), EpochOrder(len(corpus.train), config.batch_size, 0)
    state = {"step": 0}

    def step() -> None:
        state["step"] += 1
        inputs, labels = mask(collate, corpus.train[torch.from_numpy(order.indices(state["step"]))], 0, state["step"])
        with optimization.autocast():
            loss = masked_lm_loss(model, inputs, labels)
        optimization.step(loss)

    return step, corpus


def words_per_token(corpus) -> float:
    from sentemb.pretrain.corpus import training_units

    units, _ = training_units()
    words = sum(len(u.split()) for u in units)
    return words / corpus.counts["train_tokens"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blocks", type=int, default=5, help="interleaved blocks (default %(default)s)")
    parser.add_argument("--steps", type=int, default=12, help="timed steps a block (default %(default)s)")
    parser.add_argument("--output", help="also write the summary here")
    args = parser.parse_args()
    require_mirror()
    steps, corpora = {}, {}
    for name, fields in VARIANTS.items():
        steps[name], corpora[name] = variant(fields)
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for _ in range(args.blocks):
        for name, step in steps.items():
            for _ in range(3):
                step()
            for _ in range(args.steps):
                start = time.perf_counter()
                step()
                times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(t) for name, t in times.items()}
    tokens = BASE["batch_size"] * 128
    summary = {
        **machine(),
        "settings": BASE,
        "timed_steps_each": args.blocks * args.steps,
        "variants": {
            name: {
                "fields": VARIANTS[name],
                "median_step_s": round(medians[name], 4),
                "ratio_to_before": round(medians["before"] / medians[name], 3),
                "words_per_token": round(words_per_token(corpora[name]), 4),
                "words_a_second": round(tokens * words_per_token(corpora[name]) / medians[name]),
            }
            for name in VARIANTS
        },
    }
    emit(summary, args.output)


if __name__ == "__main__":
    main()
