"""What a backbone costs the small profile on CPUs: the raw backbone's candidate sizes against all-MiniLM-L6-v2.

    SENTEMB_DATA=../shared/datasets .venv/bin/python benchmarks/bench_backbone_cost.py [--output FILE]

For each backbone (the pretraining sizes of ``sentemb.pretrain.configs.SIZES`` with random weights, and MiniLM; the
cost of a step does not depend on the weights' values): the median seconds of an unsupervised SimCSE step (batch 64
x 2 views, length 32, fp32, through the archive's objective and AdamW) and of encoding the STS-B dev sentences
(batch 64, fp32), interleaved in one process so that drift hits every backbone alike. Prints a JSON summary (also
written with --output). It chose the raw backbone's size (docs/raw-backbone.md).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import torch
from benchmark_io import emit, machine, require_mirror


def encoders() -> dict:
    from sentemb.models.backbone import MINILM, load_backbone, load_tokenizer
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.pretrain.configs import SIZES
    from sentemb.pretrain.model import build_model

    tokenizer = load_tokenizer(MINILM)
    out = {}
    for size in SIZES:
        if size != "tiny":
            backbone = build_model(size, len(tokenizer), seed=0).bert
            out[f"{size} ({SIZES[size].layers}x{SIZES[size].hidden})"] = SentenceEncoder(
                backbone, tokenizer, "cls_before_pooler", name=size
            )
    _, minilm = load_backbone(MINILM)
    out["all-MiniLM-L6-v2 (6x384)"] = SentenceEncoder(minilm, tokenizer, "cls_before_pooler", name=MINILM)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--output")
    args = parser.parse_args()
    require_mirror()
    from sentemb.data.corpora import load_rows
    from sentemb.data.sts import load_task
    from sentemb.objectives import registry

    rows = load_rows("sentences", "wiki_sentences_combined")[: 64 * (args.steps + 1)]
    dev = load_task("STSBenchmark").parts["dev"].sentences()[:1000]
    models = encoders()
    objectives = {name: registry.build_objective("simcse_unsup", {}, [e], max_len=32) for name, e in models.items()}
    optimizers = {name: torch.optim.AdamW(o.parameters(), lr=3e-5) for name, o in objectives.items()}
    step_s: dict[str, list[float]] = {name: [] for name in models}
    encode_s: dict[str, list[float]] = {name: [] for name in models}
    for step in range(args.steps + 1):
        for name, objective in objectives.items():
            tick = time.perf_counter()
            loss = objective(rows[step * 64 : (step + 1) * 64], random.Random(step))
            loss.backward()
            optimizers[name].step()
            optimizers[name].zero_grad(set_to_none=True)
            if step:  # the first step warms up
                step_s[name].append(time.perf_counter() - tick)
    for _ in range(2):
        for name, encoder in models.items():
            tick = time.perf_counter()
            encoder.encode(dev, batch_size=64)
            encode_s[name].append(time.perf_counter() - tick)
    minilm = next(name for name in models if name.startswith("all-MiniLM"))
    result = {
        "machine": machine(),
        "simcse_unsup_step_s": {name: statistics.median(t) for name, t in step_s.items()},
        "encode_stsb_dev_1000_s": {name: min(t) for name, t in encode_s.items()},
        "parameters": {name: sum(p.numel() for p in e.backbone.parameters()) for name, e in models.items()},
    }
    result["step_ratio_to_minilm"] = {
        name: result["simcse_unsup_step_s"][name] / result["simcse_unsup_step_s"][minilm] for name in models
    }
    emit(result, args.output)


if __name__ == "__main__":
    main()
