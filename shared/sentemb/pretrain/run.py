"""The pretraining loop (:func:`pretrain`), read it top to bottom.

AdamW (weight decay on the matrices, not on biases and LayerNorm) with linear warm-up and decay, gradient clipping
at 1, bf16 autocast on CUDA and fp32 on a CPU. Each step takes its sequences from a seeded per-epoch permutation and
its masks from a generator seeded by (seed, step); dropout draws from the torch generator, whose state is saved. So
``state.pt`` (model, optimizer, scheduler, random states, step, curves), written at every evaluation, lets the same
command continue an interrupted run to the same final loss. Every ``eval_every`` steps (and at steps 0 and last)
the held-out MLM loss on WikiText-2 valid, masked the same way for every run, joins the curve; the weights of the
evaluation with the lowest held-out loss are kept (the text is small and seen many times: this is early stopping on
text no paper evaluates on).
At the end: ``model/`` (the kept weights in bf16 safetensors, with :func:`~sentemb.pretrain.model.seeded_pooler`;
config; tokenizer) and ``record.json`` (settings, text and sha256, counts, curves, the kept step, device, versions,
commit, wall time, the command), written last: a directory with a record is finished and never overwritten.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import torch
import transformers

from sentemb import settings
from sentemb.atomic import atomic_write, atomic_write_text
from sentemb.data.files import sha256_of
from sentemb.errors import SentembError
from sentemb.models.backbone import MINILM, load_tokenizer
from sentemb.pretrain.configs import PretrainConfig
from sentemb.pretrain.corpus import HELDOUT, TRAINING_FILES, load_corpus
from sentemb.pretrain.model import build_model, collator, mask, masked_lm_loss, seeded_pooler, size_of
from sentemb.progress import progress
from sentemb.runs import provenance
from sentemb.train.loop import EpochOrder

HELDOUT_MASK_SEED = 20_240_048  # one masking of the held-out text for every run, so that their curves compare


def output_dir(config: PretrainConfig, out: str | Path | None = None) -> Path:
    return Path(out) if out else settings.cache_root() / "pretrain" / config.run_id


def _heldout_loss(model, inputs, labels, batch_size: int, device: torch.device) -> float:
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad(), torch.autocast(device.type, torch.bfloat16, enabled=device.type == "cuda"):
        for start in range(0, len(inputs), batch_size):
            x, y = inputs[start : start + batch_size].to(device), labels[start : start + batch_size].to(device)
            total += masked_lm_loss(model, x, y, reduction="sum").item()
            count += int((y != -100).sum())
    model.train()
    return total / count


def _cpu_copy(model) -> dict[str, torch.Tensor]:
    return {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}


def vocabulary_sha256(tokenizer) -> str:
    return hashlib.sha256(json.dumps(sorted(tokenizer.get_vocab().items())).encode()).hexdigest()


def save_checkpoint(model, weights: dict[str, torch.Tensor], seed: int, directory: Path) -> None:
    """``weights`` (the kept ones) into ``model``, saved in bf16 safetensors with a seeded pooler, and the config.
    The tied decoder is stored once (transformers drops the copy). Ends the model's use: it is left in bf16."""
    model.load_state_dict(weights)
    model.to("cpu", torch.bfloat16)
    state = dict(model.state_dict())
    state.update({k: v.to(torch.bfloat16) for k, v in seeded_pooler(model.config, seed).items()})
    model.save_pretrained(directory, state_dict=state)


def _random_states() -> dict:
    return {"torch": torch.random.get_rng_state(), "cuda": torch.cuda.get_rng_state_all()}


def pretrain(
    config: PretrainConfig,
    out: str | Path | None = None,
    device: torch.device | None = None,
    stop_after: int | None = None,
    tokenizer_source: str = MINILM,
) -> dict | None:
    """Train (or continue) the run ``config`` in ``out``; its record, or None when ``stop_after`` (a step) stopped it
    there as if interrupted, leaving ``state.pt``. ``tokenizer_source``: a backbone name or model directory whose
    tokenizer is used (its vocabulary's sha256 is recorded; the run id does not depend on where it was read)."""
    directory = output_dir(config, out)
    if (directory / "record.json").exists():
        raise SentembError(
            f"{directory} holds a finished pretraining run (record.json); it is never overwritten.\n"
            "  Fix: choose another --out, or delete that directory first."
        )
    device = device or torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tokenizer = load_tokenizer(tokenizer_source)
    corpus = load_corpus(tokenizer, config.max_len)

    model = build_model(config.size, len(tokenizer), config.seed).to(device)
    no_decay = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n]
    decay = [p for n, p in model.named_parameters() if not (n.endswith("bias") or "LayerNorm" in n)]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=config.lr,
    )
    scheduler = transformers.get_linear_schedule_with_warmup(optimizer, config.warmup, config.steps)
    collate = collator(tokenizer)
    order = EpochOrder(len(corpus.train), config.batch_size, config.seed)
    heldout_inputs, heldout_labels = mask(collate, corpus.heldout[: config.heldout_sequences], HELDOUT_MASK_SEED, 0)

    def evaluate() -> float:
        return _heldout_loss(model, heldout_inputs, heldout_labels, config.batch_size, device)

    state_file = directory / "state.pt"
    if state_file.is_file():
        state = torch.load(state_file, weights_only=False, map_location="cpu")
        if state["config"] != config.as_dict():
            raise SentembError(f"{state_file} belongs to other settings ({state['config']}); use another --out")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.random.set_rng_state(state["random"]["torch"])
        if device.type == "cuda" and state["random"]["cuda"]:
            torch.cuda.set_rng_state_all(state["random"]["cuda"])
        step, curves, window, elapsed = state["step"], state["curves"], state["window"], state["elapsed_s"]
        best = state["best"]
        print(f"[pretrain] resuming {directory} at step {step} of {config.steps}")
    else:
        torch.manual_seed(config.seed)
        step, curves, window, elapsed = 0, {"train": [], "heldout": [[0, evaluate()]]}, [], 0.0
        best = {"step": 0, "loss": curves["heldout"][0][1], "weights": _cpu_copy(model)}

    def save_state() -> None:
        state = {
            "config": config.as_dict(),
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "random": _random_states(),
            "step": step,
            "curves": curves,
            "window": [float(w) for w in window],
            "best": best,
            "elapsed_s": elapsed + time.perf_counter() - started,
        }
        atomic_write(state_file, lambda tmp: torch.save(state, tmp))

    started = time.perf_counter()
    model.train()
    bar = progress(total=config.steps, initial=step, desc=f"pretrain {config.size}")
    while step < config.steps:
        step += 1
        inputs, labels = mask(collate, corpus.train[torch.from_numpy(order.indices(step - 1))], config.seed, step)
        with torch.autocast(device.type, torch.bfloat16, enabled=device.type == "cuda"):
            loss = masked_lm_loss(model, inputs.to(device), labels.to(device))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        window.append(loss.detach())
        bar.update(1)
        if step % config.eval_every == 0 or step == config.steps:
            curves["train"].append([step, sum(float(w) for w in window) / len(window)])
            curves["heldout"].append([step, evaluate()])
            if curves["heldout"][-1][1] < best["loss"]:
                best = {"step": step, "loss": curves["heldout"][-1][1], "weights": _cpu_copy(model)}
            window = []
            bar.set_postfix(train=f"{curves['train'][-1][1]:.3f}", heldout=f"{curves['heldout'][-1][1]:.3f}")
            save_state()
        elif step == stop_after:
            save_state()
        if step == stop_after:
            bar.close()
            return None
    bar.close()
    wall = elapsed + time.perf_counter() - started

    model_dir = directory / "model"
    save_checkpoint(model, best["weights"], config.seed, model_dir)
    tokenizer.save_pretrained(model_dir)
    tokens = config.steps * config.batch_size * config.max_len
    record = {
        "run_id": config.run_id,
        "config": config.as_dict(),
        "model": {"size": config.size, **size_of(config.size, len(tokenizer)), "bert": model.config.to_dict()},
        "text": {
            "training": {f: corpus.files[f] for f in TRAINING_FILES},
            "heldout": {HELDOUT: corpus.files[HELDOUT]},
            "decontaminated_against": {f: s for f, s in corpus.files.items() if f not in TRAINING_FILES},
        },
        "counts": corpus.counts,
        "steps": config.steps,
        "tokens_seen": tokens,
        "epochs": tokens / corpus.train.numel(),
        "train_loss": curves["train"],
        "heldout_loss": curves["heldout"],
        "final_train_loss": curves["train"][-1][1],
        "final_heldout_loss": curves["heldout"][-1][1],
        "kept": {"step": best["step"], "heldout_loss": best["loss"], "rule": "the lowest held-out loss"},
        "tokenizer": {"source": tokenizer_source, "vocabulary_sha256": vocabulary_sha256(tokenizer)},
        "wall_seconds": wall,
        "weights_sha256": sha256_of(model_dir / "model.safetensors"),
        "provenance": provenance.collect(device),
        "command": config.command(str(out) if out else None),
    }
    atomic_write_text(directory / "record.json", json.dumps(record, indent=1) + "\n")
    state_file.unlink(missing_ok=True)
    return record
