"""The training loop: one function, read it top to bottom.

AdamW (no weight decay by default, as SimCSE's HF Trainer), linear warm-up/decay to zero, gradient
clipping at 1.0, an STS-B dev evaluation every ``eval_every`` steps and at the last step, the best
checkpoint (by STS-B dev Spearman) kept, and the whole dev curve recorded, including the
alignment/uniformity trajectory (SimCSE Figure 2) measured on the same dev embeddings.

Step 0 (the untouched backbone) is evaluated for the curve but, as in SimCSE's trainer, it is not a
candidate for selection. The loop is seeded, and resumable: after each evaluation it atomically
writes ``state.pt`` (weights, optimizer, scheduler, RNG, curve) so an interrupted run continues from
its last evaluation with the same data order. The state outlives the loop (a crash in the final
evaluation does not cost the training); the executor deletes it once the run record is written.
``best/`` is kept.
"""

from __future__ import annotations

import random
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from tqdm.auto import tqdm

from sentemb.atomic import atomic_write
from sentemb.models.encoder import SentenceEncoder
from sentemb.runs.spec import RunSpec
from sentemb.train.objective_steps import LOSSES, SENTENCES_PER_ROW


@dataclass
class TrainOutcome:
    dev_curve: list[dict]
    best_step: int
    best_dev: float
    train_seconds: float
    rows_seen: int
    sequences_per_second: float
    rows_per_second: float
    resumed_from_step: int | None = None
    best_dir: Path | None = None
    final_loss: float | None = None
    losses: list[float] = field(default_factory=list)


def _batch_rows(rows: list, step: int, batch_size: int, seed: int) -> list:
    """Rows of a step: a seeded permutation per epoch, so a resumed run sees the same data."""
    per_epoch = len(rows) // batch_size
    if per_epoch == 0:
        raise ValueError(f"{len(rows)} training rows cannot fill one batch of {batch_size}")
    epoch, offset = divmod(step, per_epoch)
    order = np.random.default_rng([seed, epoch]).permutation(len(rows))
    return [rows[i] for i in order[offset * batch_size : (offset + 1) * batch_size]]


def _linear_schedule(warmup: int, total: int) -> Callable[[int], float]:
    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))

    return factor


def _save_best(encoder: SentenceEncoder, best_dir: Path) -> None:
    tmp = best_dir.with_name(best_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    encoder.save(tmp)
    shutil.rmtree(best_dir, ignore_errors=True)
    tmp.replace(best_dir)


def train(encoder: SentenceEncoder, spec: RunSpec, rows: list, evaluate_dev: Callable[[SentenceEncoder, int], dict],
          checkpoint_dir: Path, progress: bool = True) -> TrainOutcome:
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    state_path, best_dir = checkpoint_dir / "state.pt", checkpoint_dir / "best"
    loss_of = LOSSES[spec.objective]
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=spec.lr, weight_decay=spec.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, _linear_schedule(spec.warmup_steps, spec.steps))

    start, curve, losses, resumed, train_seconds = 0, [], [], None, 0.0
    best_step, best_dev = -1, float("-inf")
    if state_path.is_file():
        state = torch.load(state_path, map_location=encoder.device, weights_only=False)
        if state.get("run_id") == spec.run_id:
            encoder.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            scheduler.load_state_dict(state["scheduler"])
            torch.random.set_rng_state(state["torch_rng"])
            start, curve, losses = state["step"], state["curve"], state["losses"]
            best_step, best_dev = state["best_step"], state["best_dev"]
            train_seconds, resumed = state["train_seconds"], start
        else:  # a state of another spec: restart cleanly
            state_path.unlink()
    if resumed is None:
        torch.manual_seed(spec.seed)
        if spec.pooler in ("cls", "cls_before_pooler"):
            encoder.reset_mlp(spec.seed)
        curve.append({"step": 0, **evaluate_dev(encoder, 0)})

    rng = random.Random(spec.seed * 1_000_003 + start)  # augmentation randomness, resumable by step
    encoder.train()
    bar = tqdm(range(start, spec.steps), initial=start, total=spec.steps, desc=f"train {spec.objective}",
               disable=not progress, mininterval=2.0)
    for step in bar:
        tick = time.perf_counter()
        batch = _batch_rows(rows, step, spec.batch_size, spec.seed)
        loss = loss_of(encoder, batch, spec, rng)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(encoder.parameters(), spec.grad_clip)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        train_seconds += time.perf_counter() - tick
        losses.append(float(loss.detach()))
        done = step + 1
        if done % spec.eval_every == 0 or done == spec.steps:
            point = {"step": done, "loss": float(np.mean(losses[-spec.eval_every:])), **evaluate_dev(encoder, done)}
            curve.append(point)
            encoder.train()
            if point["stsb_dev_spearman"] > best_dev:
                best_step, best_dev = done, point["stsb_dev_spearman"]
                _save_best(encoder, best_dir)
            state = {"run_id": spec.run_id, "step": done, "model": encoder.state_dict(),
                     "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                     "torch_rng": torch.random.get_rng_state(), "curve": curve, "losses": losses,
                     "best_step": best_step, "best_dev": best_dev, "train_seconds": train_seconds}
            atomic_write(state_path, lambda tmp: torch.save(state, tmp))
            bar.set_postfix(loss=f"{point['loss']:.3f}", dev=f"{100 * point['stsb_dev_spearman']:.2f}")
    rows_seen = spec.steps * spec.batch_size  # over the whole run, resumed parts included
    return TrainOutcome(
        dev_curve=curve, best_step=best_step, best_dev=best_dev, train_seconds=train_seconds,
        rows_seen=rows_seen,
        sequences_per_second=rows_seen * SENTENCES_PER_ROW[spec.objective] / max(train_seconds, 1e-9),
        rows_per_second=rows_seen / max(train_seconds, 1e-9), resumed_from_step=resumed, best_dir=best_dir,
        final_loss=losses[-1] if losses else None, losses=losses,
    )
