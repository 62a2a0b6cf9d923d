"""What the non-contrastive paper's 8192-wide projector costs on this machine (rerun it; not a test).

    SENTEMB_DATA=../shared/datasets .venv/bin/python benchmarks/bench_noncontrastive_projector.py \
        [--widths 8192,4096,2048,1024]

Barlow Twins (dropout views) trains all-MiniLM-L6-v2 at batch 64, length 32 on the mirror's Wikipedia sentences with
the projector (Linear-BN-ReLU, Linear-BN-ReLU, Linear) at each width, and unsupervised SimCSE (no projector) as the
reference, steps interleaved in one process so that drift hits every width alike. Each step is the training loop's
step: forward under bf16 autocast, backward, gradient clipping, AdamW over encoder + projector. Prints, per width,
the projector's parameters (and their ratio to the encoder's), seconds per step and peak resident memory. JSON (also
written with --output).
"""

from __future__ import annotations

import argparse
import random
import resource
import time

import torch
from benchmark_io import emit, machine, require_mirror


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--widths", default="8192,4096,2048,1024", help="projector widths, comma-separated")
    parser.add_argument("--steps", type=int, default=4, help="timed steps per model (after one warm-up step)")
    parser.add_argument("--precision", default="bf16", choices=("fp32", "bf16"))
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    require_mirror()
    from sentemb import precision as amp
    from sentemb.data.corpora import load_sentences
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.spec import RunSpec
    from sentemb.train.loop import prepare_objective

    sentences = load_sentences("wiki_sentences_combined")
    device = torch.device("cpu")
    models = {"simcse (no projector)": ("simcse_unsup", {})}
    for width in [int(w) for w in args.widths.split(",")]:
        models[f"barlow_twins W={width}"] = ("barlow_twins", {"projector_width": width})
    runs = {}
    for label, (objective, params) in models.items():
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
        encoder_params = sum(p.numel() for p in model.encoder.parameters())
        projector = getattr(model, "projector", None)
        extra = sum(p.numel() for p in projector.parameters()) if projector is not None else 0
        runs[label] = {
            "model": model,
            "optimizer": torch.optim.AdamW(model.parameters(), lr=spec.lr),
            "times": [],
            "encoder_parameters": encoder_params,
            "projector_parameters": extra,
        }
    for step in range(args.steps + 1):
        batch = sentences[step * 64 : (step + 1) * 64]
        for run in runs.values():
            tick = time.perf_counter()
            with amp.autocast(args.precision, device):
                loss = run["model"](batch, random.Random(step))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(run["model"].parameters(), 1.0)
            run["optimizer"].step()
            run["optimizer"].zero_grad(set_to_none=True)
            if step:
                run["times"].append(time.perf_counter() - tick)
    out = {
        **machine(str(device)),
        "precision": args.precision,
        "batch": 64,
        "max_len": 32,
        "timed_steps": args.steps,
        "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "models": {},
    }
    for label, run in runs.items():
        per_step = sum(run["times"]) / len(run["times"])
        out["models"][label] = {
            "seconds_per_step": round(per_step, 3),
            "projector_parameters": run["projector_parameters"],
            "projector_to_encoder": round(run["projector_parameters"] / run["encoder_parameters"], 2),
        }
    emit(out, args.output)


if __name__ == "__main__":
    main()
