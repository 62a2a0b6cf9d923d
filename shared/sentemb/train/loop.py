"""The training loop: one function, read it top to bottom.

It trains a :class:`~sentemb.objectives.base.TrainingObjective` (the encoder plus whatever modules the objective
owns) and knows nothing about any paper: AdamW over ``objective.parameters()`` (no weight decay by default, as
SimCSE's HF Trainer), linear warm-up/decay to zero (or a constant rate: ``lr_schedule="constant"``, TNCSE's code
has no scheduler; or DeCLUTR's slanted triangle), gradient clipping at ``grad_clip`` (1.0; 0 = none, as TNCSE's code), the spec's precision (fp32, or
bf16/fp16 autocast; fp16 with a gradient scaler), an STS-B dev evaluation of ``objective.evaluation_encoder()``
every ``eval_every`` steps and at the last step, the best weights (by STS-B dev Spearman; a NaN score is the worst,
:mod:`sentemb.selection`) kept, or the last ones (``checkpoint="last"``, DeCLUTR), and the whole dev curve recorded with the alignment/uniformity trajectory (SimCSE
Figure 2; ``trajectory_every`` samples it more often than the evaluations, as the paper's every 10 steps).

Step 0 (the untouched backbone) is evaluated for the curve but, as in SimCSE's trainer, it is not a candidate
for selection. The rows are the ones the objective selects (``objective.select_rows``). The loop is seeded and exactly resumable: each step draws its rows from a per-epoch permutation
and its text augmentations from a generator seeded by (seed, step); ``state.pt`` holds the objective's weights,
optimizer, scheduler, gradient scaler, torch RNG (CPU and CUDA), curve and best weights. It is written at an
evaluation once ``save_state_every_s`` seconds have passed since the last write, and always after the last step,
so an interrupted run continues from its last saved evaluation and a crash in the final evaluation does not cost
the training (the executor deletes ``state.pt`` once the run record is written). At the end the best weights are
loaded back into the objective and its evaluated encoder is saved to ``best/`` (a Hugging Face directory).

Under ``torchrun`` (several processes; :mod:`sentemb.train.distributed`) the same loop runs on every rank: the
objective is wrapped in DDP, each rank encodes its share of the step's global batch (the objectives gather the
embeddings their in-batch negatives and batch statistics need), the logged loss is the ranks' mean, and rank 0 alone
evaluates, keeps the best weights and writes ``state.pt`` (with every rank's random states) and ``best/``.
"""

from __future__ import annotations

import copy
import random
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from sentemb.progress import progress as progress_bar

from sentemb import precision as amp
from sentemb.train import distributed
from sentemb.atomic import atomic_write
from sentemb.errors import SentembError
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives.base import TrainingObjective
from sentemb.objectives.registry import build_objective
from sentemb.selection import worst_if_nan
from sentemb.spec import RunSpec

DevEvaluator = Callable[[SentenceEncoder, int], dict]


class TrainingDiverged(SentembError):
    """The loss became NaN or infinite: the run stops instead of training (and evaluating) broken weights."""


@dataclass
class TrainOutcome:
    dev_curve: list[dict]
    trajectory: list[dict]
    best_step: int
    best_dev: float
    train_seconds: float  # forward + backward + optimizer steps
    seconds: dict[str, float]  # the training phase: steps, batching, dev evaluations, checkpoints, total
    rows_seen: int
    sequences_per_second: float
    rows_per_second: float
    resumed_from_step: int | None = None
    best_dir: Path | None = None
    final_loss: float | None = None
    losses: list[float] = field(default_factory=list)
    n_rows: int = 0  # the training rows the objective selected (all rows, except for DeCLUTR's short documents)


def prepare_objective(spec: RunSpec, *encoders: SentenceEncoder) -> TrainingObjective:
    """The spec's objective around ``encoders`` (as many as it trains); the modules it creates are initialised from
    the run's seed."""
    torch.manual_seed(spec.seed)
    objective = build_objective(spec.objective, spec.objective_params, encoders, spec.max_len).to(encoders[0].device)
    objective.ddp_gradients = spec.ddp_gradients
    return objective


class EpochOrder:
    """Rows of a step: a seeded permutation per epoch (computed once per epoch), so a resumed run sees the
    same data in the same order."""

    def __init__(self, n_rows: int, batch_size: int, seed: int) -> None:
        self.per_epoch = n_rows // batch_size
        if self.per_epoch == 0:
            raise ValueError(f"{n_rows} training rows cannot fill one batch of {batch_size}")
        self.n_rows, self.batch_size, self.seed = n_rows, batch_size, seed
        self._epoch, self._order = -1, np.empty(0, dtype=np.int64)

    def indices(self, step: int) -> np.ndarray:
        epoch, offset = divmod(step, self.per_epoch)
        if epoch != self._epoch:
            self._epoch, self._order = epoch, np.random.default_rng([self.seed, epoch]).permutation(self.n_rows)
        return self._order[offset * self.batch_size : (offset + 1) * self.batch_size]


def step_rng(seed: int, step: int, rank: int = 0) -> random.Random:
    """The text-augmentation randomness of one step: the same for a resumed and an uninterrupted run; under torchrun
    rank r > 0 has its own stream (rank 0's is a single process's)."""
    if rank == 0:
        return random.Random(seed * 1_000_003 + step)
    return random.Random(f"{seed}/{step}/{rank}")


def rank_seed(seed: int, rank: int) -> int:
    """The torch seed of rank r > 0 (dropout masks, noise) under torchrun; rank 0 keeps the run's own stream."""
    return int(np.random.SeedSequence([seed, rank]).generate_state(1)[0])


SLANTED_TRIANGULAR_RATIO = 32  # ULMFiT's (and AllenNLP's default) ratio of the peak lr to the lowest


def _schedule(kind: str, warmup: int, total: int) -> Callable[[int], float]:
    """The learning-rate factor of a step: ``linear`` warm-up then decay to 0, ``constant`` (1 throughout), or
    ``slanted_triangular`` (ULMFiT, Howard & Ruder 2018, Eq. 3, with the cut at ``warmup``): p rises linearly from 0
    to 1 over the first ``cut`` steps and falls back to 0 at the last step, and the factor is
    (1 + p (ratio - 1)) / ratio, from 1/32 of the peak up to the peak and back."""
    if kind == "constant":
        return lambda step: 1.0
    if kind == "slanted_triangular":
        def slanted(step: int) -> float:
            p = step / warmup if step < warmup else 1.0 - (step - warmup) / max(1, total - warmup)
            p = min(1.0, max(0.0, p))
            return (1.0 + p * (SLANTED_TRIANGULAR_RATIO - 1)) / SLANTED_TRIANGULAR_RATIO

        return slanted

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))

    return factor


def _rng_state(device: torch.device) -> dict:
    state = {"cpu": torch.random.get_rng_state()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def _set_rng_state(state: dict, device: torch.device) -> None:
    torch.random.set_rng_state(state["cpu"])
    if device.type == "cuda" and "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"], device)


def _cpu_copy(state_dict: dict) -> dict:
    """A CPU copy of a state dict; non-tensor entries (a module's extra state, e.g. a memory queue's position)
    are deep-copied."""
    return {k: v.detach().to("cpu", copy=True) if isinstance(v, torch.Tensor) else copy.deepcopy(v)
            for k, v in state_dict.items()}


def _save_best(objective: TrainingObjective, best_dir: Path) -> None:
    tmp = best_dir.with_name(best_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    objective.evaluation_encoder().save(tmp)
    shutil.rmtree(best_dir, ignore_errors=True)
    tmp.replace(best_dir)


def train(objective: TrainingObjective, spec: RunSpec, rows: list, evaluate_dev: DevEvaluator,
          checkpoint_dir: Path, progress: bool = True, save_state_every_s: float = 300.0) -> TrainOutcome:
    phase_started = time.perf_counter()
    rows = objective.select_rows(rows)
    rank, world, main = distributed.rank(), distributed.world_size(), distributed.is_main()
    if spec.batch_size % world:
        raise SentembError(f"batch_size {spec.batch_size} (the global batch) does not divide over {world} processes")
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    state_path, best_dir = checkpoint_dir / "state.pt", checkpoint_dir / "best"
    device = objective.encoder.device
    amp.check(spec.precision, device)
    scaler = amp.grad_scaler(spec.precision, device)
    optimizer = torch.optim.AdamW(objective.parameters(), lr=spec.lr, weight_decay=spec.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, _schedule(spec.lr_schedule, spec.warmup_steps, spec.steps))
    seconds = {"steps": 0.0, "batching": 0.0, "dev_evaluation": 0.0, "checkpoint": 0.0}

    def dev_point(step: int) -> dict:
        if not main:  # rank 0 evaluates; the others wait for it at their next collective
            return {}
        tick = time.perf_counter()
        point = evaluate_dev(objective.evaluation_encoder(), step)
        objective.train()
        seconds["dev_evaluation"] += time.perf_counter() - tick
        return point

    start, curve, trajectory, losses, resumed = 0, [], [], [], None
    best_step, best_dev, best_state = -1, float("-inf"), None
    if state_path.is_file():
        state = torch.load(state_path, map_location="cpu", weights_only=False)
        if state.get("run_id") == spec.run_id:
            objective.load_state_dict(state["objective"])
            optimizer.load_state_dict(state["optimizer"])
            scheduler.load_state_dict(state["scheduler"])
            if scaler is not None and state.get("scaler"):
                scaler.load_state_dict(state["scaler"])
            saved_world = len(state["rng"]) if isinstance(state["rng"], list) else 1
            if saved_world != world:
                raise SentembError(f"{state_path} was written by {saved_world} process(es); resume run {spec.run_id} "
                                   f"with as many (this is {world}), or delete the state to start it again")
            _set_rng_state(state["rng"][rank] if isinstance(state["rng"], list) else state["rng"], device)
            start, curve, trajectory, losses = state["step"], state["curve"], state["trajectory"], state["losses"]
            best_step, best_dev, best_state = state["best_step"], state["best_dev"], state["best_state"]
            seconds, resumed = state["seconds"], start
        else:  # a state of another spec: restart cleanly
            distributed.barrier()  # every rank has read it
            if main:
                state_path.unlink()
    if resumed is None and rank > 0:
        torch.manual_seed(rank_seed(spec.seed, rank))
    if resumed is None:
        point = {"step": 0, **dev_point(0)}
        curve.append(point)
        trajectory.append(point)

    earlier_total = seconds.get("total", 0.0)  # the training phase before an interruption

    def phase_total() -> float:
        return earlier_total + time.perf_counter() - phase_started

    order = EpochOrder(len(rows), spec.batch_size, spec.seed)
    model = objective
    if world > 1:  # gradients averaged over the ranks (their scale: sentemb.train.distributed)
        model = torch.nn.parallel.DistributedDataParallel(
            objective, device_ids=[device.index] if device.type == "cuda" else None, static_graph=True)
    trajectory_every = spec.trajectory_every or spec.eval_every
    last_state_write = time.perf_counter()
    objective.train()
    bar = progress_bar(range(start, spec.steps), initial=start, total=spec.steps, desc=f"train {spec.objective}",
                       disable=not (progress and main))
    for step in bar:
        tick = time.perf_counter()
        batch = [rows[i] for i in order.indices(step)]
        if world > 1:
            batch = distributed.shard(batch, world, rank)
        rng = step_rng(spec.seed, step, rank)
        seconds["batching"] += time.perf_counter() - tick

        tick = time.perf_counter()
        with amp.autocast(spec.precision, device):
            loss = model(batch, rng)
        logged = distributed.mean_over_ranks(loss.detach())  # equal on every rank, so all stop together
        if not torch.isfinite(logged):
            raise TrainingDiverged(f"run {spec.run_id} ({spec.objective}, {dict(spec.objective_params)}): the loss is "
                                   f"{float(logged)} at step {step + 1}; the run stopped before updating its weights "
                                   "with it. Lower the learning rate or change the objective's parameters.")
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
        else:
            loss.backward()
        if spec.grad_clip > 0:  # 0: no clipping (TNCSE's code)
            torch.nn.utils.clip_grad_norm_(objective.parameters(), spec.grad_clip)
        if scaler is not None:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(float(logged))
        seconds["steps"] += time.perf_counter() - tick

        done = step + 1
        is_eval = done % spec.eval_every == 0 or done == spec.steps
        if not is_eval and done % trajectory_every != 0:
            continue
        point = {"step": done, **dev_point(done)}
        trajectory.append(point)
        if not is_eval:
            continue
        point["loss"] = float(np.mean(losses[-spec.eval_every:]))
        curve.append(point)
        keep = main and (best_state is None or spec.checkpoint == "last"  # "last": every evaluation replaces the kept
                         or worst_if_nan(point["stsb_dev_spearman"]) > worst_if_nan(best_dev))  # weights; NaN: worst
        if keep:
            best_step, best_dev = done, point["stsb_dev_spearman"]
            tick = time.perf_counter()
            best_state = _cpu_copy(objective.state_dict())
            seconds["checkpoint"] += time.perf_counter() - tick
        write = distributed.broadcast_object(done == spec.steps or
                                             time.perf_counter() - last_state_write >= save_state_every_s)
        if write:
            tick = time.perf_counter()
            seconds["total"] = phase_total()
            rng_states = distributed.all_gather_objects(_rng_state(device))
            if main:
                state = {"run_id": spec.run_id, "step": done, "objective": objective.state_dict(),
                         "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                         "scaler": scaler.state_dict() if scaler is not None else None,
                         "rng": rng_states if world > 1 else rng_states[0],
                         "curve": curve, "trajectory": trajectory, "losses": losses, "best_step": best_step,
                         "best_dev": best_dev, "best_state": best_state, "seconds": seconds}
                atomic_write(state_path, lambda tmp: torch.save(state, tmp))
            seconds["checkpoint"] += time.perf_counter() - tick
            last_state_write = time.perf_counter()
        if main:
            bar.set_postfix(loss=f"{point['loss']:.3f}", dev=f"{100 * point['stsb_dev_spearman']:.2f}")

    tick = time.perf_counter()
    if main:
        objective.load_state_dict(best_state)
        objective.eval()
        _save_best(objective, best_dir)
    distributed.barrier()  # best/ is written before any rank goes on
    seconds["checkpoint"] += time.perf_counter() - tick
    seconds["total"] = phase_total()
    rows_seen = spec.steps * spec.batch_size  # over the whole run, resumed parts included
    train_seconds = max(seconds["steps"], 1e-9)
    return TrainOutcome(
        dev_curve=curve, trajectory=trajectory, best_step=best_step, best_dev=best_dev,
        train_seconds=seconds["steps"], seconds=dict(seconds), rows_seen=rows_seen,
        sequences_per_second=rows_seen * objective.sequences_per_row / train_seconds,
        rows_per_second=rows_seen / train_seconds, resumed_from_step=resumed, best_dir=best_dir,
        final_loss=losses[-1] if losses else None, losses=losses, n_rows=len(rows),
    )
