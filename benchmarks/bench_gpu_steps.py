"""Seconds per training step of the papers' backbones at the papers' batch sizes, on a GPU (for the full profile's
GPU plan); rerun it, it is not a test. Needs CUDA; no network and no mirror (the weights are random: a step costs
the same with trained weights).

    python benchmarks/bench_gpu_steps.py [--steps 20]

BERT-base and BERT-large shapes (BertConfig defaults; 24 layers x 1024 for large) with all-MiniLM-L6-v2's
tokenizer (BERT's uncased vocabulary, 30,522 word pieces), through the archive's own SimCSE objectives: unsup.
(batch 64, two dropout views) and sup. (batch 512 NLI triples, SimCSE's 4 GPUs x 128 on one GPU), max length 32,
sentences of 20-30 words drawn from the vocabulary; fp32 and fp16 autocast with the gradient scaler, AdamW. Prints
the median of the timed steps (after 5 warm-up steps) as JSON; a setting that does not fit the GPU's memory says so.

Measured on one H100 80GB (torch 2.11, 2026-11-26, ms per step, fp32 / fp16): BERT-base unsup. b64 66.7 / 43.3,
sup. b512 673.3 / 218.1; BERT-large unsup. b64 190.3 / 93.6; BERT-large sup. b512 fp32 ran out of memory (80 GB), as
SimCSE's 4-GPU setting suggests; fp16 not measured (the run stopped there).
"""

from __future__ import annotations

import argparse
import json
import random
import sys

import torch
from bench_gpu_full_steps import time_steps  # the same timing (this folder is on sys.path when run as a script)
from transformers import AutoTokenizer, BertConfig, BertModel

from sentemb.models.backbone import minilm_dir
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives import registry

SHAPES = {
    "bert-base": {},
    "bert-large": {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096},
}
RUNS = {"simcse_unsup": 64, "simcse_sup": 512}


def sentences(tokenizer, n: int, rng: random.Random) -> list[str]:
    words = [w for w in tokenizer.vocab if w.isalpha() and len(w) > 2]
    return [" ".join(rng.choices(words, k=rng.randint(20, 30))) for _ in range(n)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("needs a CUDA device")
    device = torch.device("cuda")
    tokenizer = AutoTokenizer.from_pretrained(minilm_dir())
    rng = random.Random(0)
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "seconds_per_step": {}}
    for shape, overrides in SHAPES.items():
        for objective_name, batch in RUNS.items():
            text = sentences(tokenizer, batch * 3, rng)
            rows = (
                text[:batch]
                if objective_name == "simcse_unsup"
                else [tuple(text[3 * i : 3 * i + 3]) for i in range(batch)]
            )
            for name in ("fp32", "fp16"):
                torch.manual_seed(0)
                encoder = SentenceEncoder(BertModel(BertConfig(**overrides)), tokenizer, "cls", shape).to(device)
                objective = registry.build_objective(objective_name, {}, [encoder], max_len=32).to(device)
                objective.train()
                key = f"{shape} {objective_name} batch {batch} {name}"
                try:
                    seconds = time_steps(objective, rows, name, args.steps, device, warmup=5)
                except torch.OutOfMemoryError:  # e.g. BERT-large, sup. batch 512, fp32 on 80 GB: needs DDP
                    out["seconds_per_step"][key] = "out of memory"
                    print(f"{key}: out of GPU memory", flush=True)
                else:
                    out["seconds_per_step"][key] = round(seconds, 4)
                    print(f"{key}: {seconds * 1000:.1f} ms/step", flush=True)
                del objective, encoder
                torch.cuda.empty_cache()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
