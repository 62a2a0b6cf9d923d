"""Seconds per training step of every kind of run in the full profile's grids, on a GPU (for the GPU plan,
``benchmarks/gpu_plan.py``); rerun it, it is not a test. Needs CUDA; no network and no mirror: backbones are random
weights of the papers' shapes (a step costs the same with trained weights), rows are generated text of the papers'
lengths.

    python benchmarks/gpu_plan.py configs            # here: the step configurations of the full grids (JSON)
    python benchmarks/bench_gpu_full_steps.py benchmarks/results/gpu_plan_configs.json --out steps.json  # on a GPU

Each configuration is one objective with the parameters that change a step's cost (off-dropout's third pass, the
10 dropout samples of a "-Noise" view, the 8192-wide projector, DeCLUTR's anchors, positives and MLM head), at its
spec's batch, maximum length and precision, with the spec's number of encoders. Tokenizer: all-MiniLM-L6-v2's
(BERT's uncased vocabulary); RoBERTa shapes keep RoBERTa's 50,265-entry embedding and MLM output layers, fed ids of
that tokenizer. Timed: the median of ``--steps`` steps after 3 warm-up steps (forward, backward, AdamW; fp16 with
the gradient scaler).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time

import torch
from transformers import AutoTokenizer, BertConfig, BertModel, RobertaConfig, RobertaModel

from sentemb import precision as amp
from sentemb.data.documents import Document
from sentemb.models.backbone import minilm_dir
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives import registry

ARCHITECTURES = {  # the published configs' shapes (no download)
    "bert-base-uncased": (BertModel, BertConfig, {}),
    "bert-large-uncased": (
        BertModel,
        BertConfig,
        {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16, "intermediate_size": 4096},
    ),
    "roberta-base": (
        RobertaModel,
        RobertaConfig,
        {"vocab_size": 50265, "max_position_embeddings": 514, "type_vocab_size": 1, "pad_token_id": 1},
    ),
    "roberta-large": (
        RobertaModel,
        RobertaConfig,
        {
            "vocab_size": 50265,
            "max_position_embeddings": 514,
            "type_vocab_size": 1,
            "pad_token_id": 1,
            "hidden_size": 1024,
            "num_hidden_layers": 24,
            "num_attention_heads": 16,
            "intermediate_size": 4096,
        },
    ),
    "distilroberta-base": (
        RobertaModel,
        RobertaConfig,
        {
            "vocab_size": 50265,
            "max_position_embeddings": 514,
            "type_vocab_size": 1,
            "pad_token_id": 1,
            "num_hidden_layers": 6,
        },
    ),
}


def words(tokenizer) -> list[str]:
    return [w for w in tokenizer.vocab if w.isalpha() and len(w) > 2]


def rows_for(kind: str, batch: int, tokenizer, rng: random.Random) -> list:
    pool = words(tokenizer)
    sentence = lambda: " ".join(rng.choices(pool, k=rng.randint(20, 30)))  # noqa: E731 - ~32 word pieces
    if kind == "sentences":
        return [sentence() for _ in range(batch)]
    if kind == "nli_triples":  # with the neutral hypothesis as a 4th column (Table 7's rows); the others ignore it
        return [(sentence(), sentence(), sentence(), sentence()) for _ in range(batch)]
    if kind == "sentence_windows":
        return [tuple(sentence() for _ in range(4)) for _ in range(batch)]
    if kind == "documents":  # long enough for 2 anchors of up to 512 tokens
        return [Document(id=f"doc{i}", text=" ".join(rng.choices(pool, k=3000))) for i in range(batch)]
    raise ValueError(f"no generated rows of kind {kind!r}")


def time_steps(
    objective, rows, precision: str, steps: int, device, warmup: int = 3, losses: list[float] | None = None
) -> float:
    """The median seconds of ``steps`` training steps after ``warmup`` untimed ones; each step's loss is appended
    to ``losses`` when given (read after the step's clock stops)."""
    optimizer = torch.optim.AdamW(objective.parameters(), lr=3e-5)
    scaler = amp.grad_scaler(precision, device)
    times = []
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    for step in range(steps + warmup):
        sync()
        tick = time.perf_counter()
        with amp.autocast(precision, device):
            loss = objective(rows, random.Random(step))
        if scaler:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        sync()
        times.append(time.perf_counter() - tick)
        if losses is not None:
            losses.append(loss.item())
    return statistics.median(times[warmup:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("configs", help="the JSON that 'python benchmarks/gpu_plan.py configs' writes")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument(
        "--warmup",
        type=int,
        default=3,
        help="untimed steps first (DeCLUTR's spans change shape "
        "every step: the allocator and kernel choices settle over more steps)",
    )
    parser.add_argument("--out", default=None, help="JSON of seconds per step (default: stdout only)")
    parser.add_argument("--only", default=None, help="only the configurations whose name contains this")
    parser.add_argument("--device", default="cuda", help="cuda (the plan's numbers); cpu only checks the script")
    args = parser.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("needs a CUDA device")
    tokenizer = AutoTokenizer.from_pretrained(minilm_dir())
    configs = json.loads(open(args.configs).read())["configs"]
    out = {
        "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "steps_timed": args.steps,
        "warmup_steps": args.warmup,
        "seconds_per_step": {},
    }
    for key, config in configs.items():
        if args.only and args.only not in key:
            continue
        model_cls, config_cls, shape = ARCHITECTURES[config["backbone"]]
        objective_cls = registry.objective_class(config["objective"])
        torch.manual_seed(0)
        try:
            encoders = [
                SentenceEncoder(model_cls(config_cls(**shape)), tokenizer, config["pooler"], config["backbone"]).to(
                    device
                )
                for _ in range(objective_cls.n_encoders)
            ]
            objective = (
                registry.build_objective(config["objective"], config["objective_params"], encoders, config["max_len"])
                .to(device)
                .train()
            )
            rows = objective.select_rows(
                rows_for(objective_cls.rows, config["batch_size"], tokenizer, random.Random(0))
            )
            seconds = time_steps(objective, rows, config["precision"], args.steps, device, args.warmup)
        except torch.OutOfMemoryError:
            out["seconds_per_step"][key] = "out of memory"
            print(f"{key}: out of GPU memory", flush=True)
        except Exception as exc:  # noqa: BLE001 - one configuration's failure is reported, the others still run
            out["seconds_per_step"][key] = f"failed: {type(exc).__name__}: {str(exc)[:200]}"
            print(f"{key}: FAILED {type(exc).__name__}: {str(exc)[:200]}", flush=True)
        else:
            out["seconds_per_step"][key] = round(seconds, 4)
            print(f"{key}: {seconds * 1000:.1f} ms/step", flush=True)
        objective = encoders = None
        if device.type == "cuda":
            torch.cuda.empty_cache()
    text = json.dumps(out, indent=1)
    if args.out:
        open(args.out, "w").write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
