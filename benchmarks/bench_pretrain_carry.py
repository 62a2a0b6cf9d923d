"""What a lossy carried state costs a pretraining run, measured on the run itself (``sentemb.pretrain.carry``).

    SENTEMB_DATA=../shared/datasets .venv/bin/python benchmarks/bench_pretrain_carry.py CARRY_DIR [--steps 200]
        [--output benchmarks/results/pretrain_carry_<run id>_step<S>.json]

``CARRY_DIR`` holds an ``exact`` carried state at step S. Each mode's state is written from it into a scratch folder
(``exact`` as it is; ``bf16``: weights and moments rounded; ``weights``: bf16 weights, fresh moments, the rate
re-warmed), and each continues the same run for ``--steps`` steps (the same data and masks). The summary gives each
mode's bytes on disk and its held-out MLM loss after those steps, beside ``exact``'s: the difference is what the mode
costs. Measure with nothing else on the cores (the losses do not depend on it; the seconds do).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from benchmark_io import emit, machine, require_mirror


def heldout_after(config, out: Path) -> float:
    """The held-out loss of the weights saved in ``out/state.pt``."""
    import torch

    from sentemb.pretrain import vocabulary
    from sentemb.pretrain.corpus import load_corpus
    from sentemb.pretrain.model import build_model, collator
    from sentemb.pretrain.run import HeldOut

    state = torch.load(out / "state.pt", weights_only=False, map_location="cpu")
    tokenizer = vocabulary.load(config.vocab)
    model = build_model(config.size, len(tokenizer), config.seed, config.dropout, config.attention)
    model.load_state_dict(state["model"])
    heldout = HeldOut(load_corpus(tokenizer, config.max_len), collator(tokenizer), config, torch.device("cpu"))
    return heldout.loss(model)


def rewrite(source: Path, target: Path, mode: str) -> int:
    """``source``'s exact state as ``mode`` in ``target``; its bytes."""
    import torch
    from safetensors.torch import load_file, save_file

    from sentemb.pretrain.carry import META, TENSORS

    target.mkdir(parents=True)
    tensors, meta = load_file(str(source / TENSORS)), json.loads((source / META).read_text())
    if meta["mode"] != "exact":
        raise SystemExit(f"{source} carries a {meta['mode']} state; give an exact one")
    kept = {}
    for key, value in tensors.items():
        if mode == "weights" and key.startswith("optimizer."):
            continue
        rounded = mode != "exact" and value.dtype == torch.float32 and not key.endswith(".step")
        kept[key] = value.to(torch.bfloat16) if rounded else value
    save_file(kept, str(target / TENSORS))
    (target / META).write_text(json.dumps({**meta, "mode": mode}, indent=1) + "\n")
    return (target / TENSORS).stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("carry", type=Path, help="a folder with an exact carried state (state.json, state.safetensors)")
    parser.add_argument("--steps", type=int, default=200, help="steps each mode continues (default %(default)s)")
    parser.add_argument("--output", help="also write the summary here")
    args = parser.parse_args()
    require_mirror()
    import torch

    from sentemb.pretrain.configs import LEGACY, PretrainConfig
    from sentemb.pretrain.run import pretrain

    meta = json.loads((args.carry / "state.json").read_text())
    config, start = PretrainConfig(**{**LEGACY, **meta["config"]}), meta["step"]
    summary = {**machine(), "run_id": config.run_id, "from_step": start, "steps": args.steps, "modes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("exact", "bf16", "weights"):
            carry, out = Path(tmp) / f"carry-{mode}", Path(tmp) / f"out-{mode}"
            size = rewrite(args.carry, carry, mode)
            began = time.perf_counter()
            pretrain(config, out, device=torch.device("cpu"), stop_after=start + args.steps, carry=carry)
            summary["modes"][mode] = {
                "bytes": size,
                "heldout_loss": heldout_after(config, out),
                "seconds": round(time.perf_counter() - began, 1),
            }
            shutil.rmtree(out)
    exact = summary["modes"]["exact"]["heldout_loss"]
    for result in summary["modes"].values():
        result["minus_exact"] = result["heldout_loss"] - exact
    emit(summary, args.output)


if __name__ == "__main__":
    main()
