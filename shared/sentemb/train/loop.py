"""The training loop: one function, read it top to bottom (:func:`train`).

It trains a :class:`~sentemb.objectives.base.TrainingObjective` (the encoder plus the modules the objective owns) and
knows nothing about any paper: AdamW over ``objective.parameters()`` (no weight decay by default, as SimCSE's HF
Trainer) with the spec's learning-rate schedule, gradient clipping and precision (:class:`Optimization`); an STS-B
dev evaluation of ``objective.evaluation_encoder()`` every ``eval_every`` steps and at the last step (the alignment
and uniformity trajectory, SimCSE Figure 2, every ``trajectory_every``); the best weights by STS-B dev kept (NaN is
the worst score), or the last ones (``checkpoint="last"``, DeCLUTR). Step 0 (the backbone) is on the curve but, as
in SimCSE's trainer, not a candidate. At the end the kept weights' evaluated encoder is saved to ``best/``.

It is seeded and exactly resumable: each step draws its rows from a per-epoch permutation (:class:`EpochOrder`) and its
text augmentations from a generator seeded by (seed, step) (both in :mod:`sentemb.train.resumable`); ``state.pt``
(:class:`TrainingState`) is written at an evaluation once ``save_state_every_s`` seconds have passed since the last
write, and after the last step, so an interrupted run continues from its last saved evaluation (the executor deletes it
once the record is written).

Speed-ups (:mod:`sentemb.train.speedups`, off unless asked for) change how fast, not what: fused AdamW, no host
synchronisation inside a step (the logged losses are then read and checked at the next evaluation), compiled
layers, padding to a multiple of N tokens.

Under ``torchrun`` (:mod:`sentemb.distributed`) every rank runs the same loop on its share of the global batch, the
objective wrapped in DDP; the logged loss is the ranks' mean, and rank 0 alone evaluates, keeps the best weights and
writes ``state.pt`` (with every rank's random states) and ``best/``.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from sentemb import distributed
from sentemb import precision as amp
from sentemb.atomic import atomic_write
from sentemb.errors import SentembError
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives.base import TrainingObjective
from sentemb.objectives.registry import build_objective
from sentemb.progress import progress as progress_bar
from sentemb.selection import worst_if_nan
from sentemb.spec import RunSpec
from sentemb.train.resumable import EpochOrder, cpu_copy, rank_seed, rng_state, set_rng_state, step_rng
from sentemb.train.speedups import Speedups, apply_to_encoders

DevEvaluator = Callable[[SentenceEncoder, int], dict]
#: Where the training phase's seconds go (each a key of ``seconds`` in the outcome and the record, with ``total``).
PHASES = ("steps", "batching", "dev_evaluation", "checkpoint")


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


def _save_best(objective: TrainingObjective, best_dir: Path) -> None:
    tmp = best_dir.with_name(best_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    objective.evaluation_encoder().save(tmp)
    shutil.rmtree(best_dir, ignore_errors=True)
    tmp.replace(best_dir)


@contextlib.contextmanager
def timed(seconds: dict[str, float], phase: str) -> Iterator[None]:
    """Add the block's wall time to ``seconds[phase]`` (not when it raises)."""
    tick = time.perf_counter()
    yield
    seconds[phase] += time.perf_counter() - tick


@dataclass
class Optimization:
    """AdamW over the objective's parameters, its learning-rate schedule, and the spec's precision on ``device``
    (autocast; fp16's gradient scaler)."""

    parameters: list[torch.nn.Parameter]
    optimizer: torch.optim.AdamW
    scheduler: torch.optim.lr_scheduler.LambdaLR
    scaler: torch.amp.GradScaler | None
    precision: str
    device: torch.device
    grad_clip: float  # the maximum gradient norm; 0: no clipping (TNCSE's code)

    @classmethod
    def for_spec(cls, objective: TrainingObjective, spec: RunSpec, speedups: Speedups = Speedups()) -> Optimization:
        device = objective.encoder.device
        amp.check(spec.precision, device)
        scaler = amp.grad_scaler(spec.precision, device)
        parameters = list(objective.parameters())
        fused = {"fused": True} if speedups.fused_adamw else {}
        optimizer = torch.optim.AdamW(parameters, lr=spec.lr, weight_decay=spec.weight_decay, **fused)
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer, _schedule(spec.lr_schedule, spec.warmup_steps, spec.steps)
        )
        return cls(parameters, optimizer, scheduler, scaler, spec.precision, device, spec.grad_clip)

    def autocast(self) -> contextlib.AbstractContextManager:
        return amp.autocast(self.precision, self.device)

    def step(self, loss: torch.Tensor) -> None:
        """The optimizer step: the gradients of ``loss`` (scaled under fp16), clipped, applied; the schedule
        advanced; the gradients cleared."""
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
        else:
            loss.backward()
        if self.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self.parameters, self.grad_clip)
        if self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)

    def state_dict(self) -> dict:
        return {
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict() if self.scaler is not None else None,
        }

    def load_state_dict(self, state: dict) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        if self.scaler is not None and state.get("scaler"):
            self.scaler.load_state_dict(state["scaler"])


@dataclass
class TrainingState:
    """Where a run is: its step, dev curve, trajectory, losses, kept weights and the seconds spent so far.

    :meth:`save` writes it to ``state.pt`` with the objective's weights, the optimizer and every rank's random
    states; :meth:`load` restores them all. The file is a dict (``run_id``, ``step``, ``objective``, ``optimizer``,
    ``scheduler``, ``scaler``, ``rng``: one state, or a list of every rank's, then the fields below)."""

    run_id: str
    step: int = 0
    curve: list[dict] = field(default_factory=list)
    trajectory: list[dict] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    best_step: int = -1
    best_dev: float = float("-inf")
    best_state: dict | None = None  # a CPU copy of the kept weights
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    resumed_from_step: int | None = None  # not saved: the step this process started from (None: from scratch)
    seconds_before_resume: float = 0.0  # not saved: the phase's ``total`` seconds when it was saved

    @classmethod
    def load(
        cls, path: Path, run_id: str, objective: TrainingObjective, optimization: Optimization
    ) -> TrainingState | None:
        """The state of run ``run_id`` saved at ``path``, with the objective's weights, the optimizer and this rank's
        random streams restored; None when there is none. A state of another run is deleted (by rank 0, once every
        rank has read it)."""
        if not path.is_file():
            return None
        saved = torch.load(path, map_location="cpu", weights_only=False)
        if saved.get("run_id") != run_id:
            distributed.barrier()
            if distributed.is_main():
                path.unlink()
            return None
        objective.load_state_dict(saved["objective"])
        optimization.load_state_dict(saved)
        rng, world = saved["rng"], distributed.world_size()
        saved_world = len(rng) if isinstance(rng, list) else 1
        if saved_world != world:
            raise SentembError(
                f"{path} was written by {saved_world} process(es); resume run {run_id} "
                f"with as many (this is {world}), or delete the state to start it again"
            )
        set_rng_state(rng[distributed.rank()] if isinstance(rng, list) else rng, optimization.device)
        return cls(
            run_id,
            saved["step"],
            saved["curve"],
            saved["trajectory"],
            saved["losses"],
            saved["best_step"],
            saved["best_dev"],
            saved["best_state"],
            saved["seconds"],
            resumed_from_step=saved["step"],
            seconds_before_resume=saved["seconds"].get("total", 0.0),
        )

    def stamp_total(self, phase_started: float) -> None:
        """``seconds["total"]``: the training phase's wall time, from ``phase_started`` and before any resume."""
        self.seconds["total"] = self.seconds_before_resume + time.perf_counter() - phase_started

    def select(self, step: int, score: float, objective: TrainingObjective, checkpoint: str) -> None:
        """Checkpoint selection (rank 0): the weights evaluated at ``step`` replace the kept ones when none are kept
        yet, under ``checkpoint="last"`` (every evaluation replaces them), or when their STS-B dev ``score`` beats the
        kept one's (NaN is the worst score, :mod:`sentemb.selection`)."""
        if self.best_state is None or checkpoint == "last" or worst_if_nan(score) > worst_if_nan(self.best_dev):
            self.best_step, self.best_dev = step, score
            with timed(self.seconds, "checkpoint"):
                self.best_state = cpu_copy(objective.state_dict())

    def save(self, path: Path, objective: TrainingObjective, optimization: Optimization, phase_started: float) -> None:
        """Write ``state.pt`` (every rank takes part: rank 0 writes, with every rank's random states); the time it
        takes counts as ``checkpoint``, the phase so far (``phase_started``) as ``total``."""
        with timed(self.seconds, "checkpoint"):
            self.stamp_total(phase_started)
            rng_states = distributed.all_gather_objects(rng_state(optimization.device))
            if distributed.is_main():
                saved = {
                    "run_id": self.run_id,
                    "step": self.step,
                    "objective": objective.state_dict(),
                    **optimization.state_dict(),
                    "rng": rng_states if len(rng_states) > 1 else rng_states[0],
                    "curve": self.curve,
                    "trajectory": self.trajectory,
                    "losses": self.losses,
                    "best_step": self.best_step,
                    "best_dev": self.best_dev,
                    "best_state": self.best_state,
                    "seconds": self.seconds,
                }
                atomic_write(path, lambda tmp: torch.save(saved, tmp))


def _dev_point(objective: TrainingObjective, evaluate_dev: DevEvaluator, step: int, seconds: dict) -> dict:
    """The dev curve's point at ``step``: rank 0 evaluates the objective's evaluated encoder on STS-B dev; the other
    ranks note the step alone and wait for rank 0 at their next collective."""
    if not distributed.is_main():
        return {"step": step}
    with timed(seconds, "dev_evaluation"):
        point = {"step": step, **evaluate_dev(objective.evaluation_encoder(), step)}
        objective.train()
    return point


def _first_state(spec: RunSpec, objective: TrainingObjective, evaluate_dev: DevEvaluator, rank: int) -> TrainingState:
    """The state of a run from scratch: rank r > 0 seeds its own random streams; step 0 (the backbone) starts the
    dev curve and the trajectory."""
    state = TrainingState(spec.run_id)
    if rank > 0:
        torch.manual_seed(rank_seed(spec.seed, rank))
    point = _dev_point(objective, evaluate_dev, 0, state.seconds)
    state.curve.append(point)
    state.trajectory.append(point)
    return state


def _diverged(spec: RunSpec, value: float, step: int, stopped_at: int | None = None) -> TrainingDiverged:
    where = (
        "the run stopped before updating its weights with it"
        if stopped_at is None
        else f"the run (sync_free: losses checked at evaluations) stopped at step {stopped_at}, before evaluating "
        "or saving anything"
    )
    return TrainingDiverged(
        f"run {spec.run_id} ({spec.objective}, {dict(spec.objective_params)}): the loss is {value} at step "
        f"{step}; {where}. Lower the learning rate or change the objective's parameters."
    )


def training_step(
    model: torch.nn.Module,
    batch: list,
    rng: random.Random,
    optimization: Optimization,
    spec: RunSpec,
    step: int,
    check: bool = True,
) -> torch.Tensor:
    """The loss of one batch, its mean over the ranks (the logged loss, returned detached on the device) and the
    optimizer step. With ``check`` a loss that is not finite stops every rank before it updates the weights (a host
    synchronisation); without, the caller checks the logged losses later (:func:`checked_losses`)."""
    with optimization.autocast():
        loss = model(batch, rng)
    logged = distributed.mean_over_ranks(loss.detach())
    if check and not torch.isfinite(logged):
        raise _diverged(spec, float(logged), step + 1)
    optimization.step(loss)
    return logged


def checked_losses(pending: list[torch.Tensor], spec: RunSpec, done: int) -> list[float]:
    """The logged losses of the steps up to ``done`` not yet read, as floats, in one host synchronisation;
    TrainingDiverged naming the first step whose loss is not finite (only a ``sync_free`` step leaves one unchecked)."""
    if not pending:
        return []
    values = torch.stack(pending).double().cpu().tolist()
    for offset, value in enumerate(values):
        if not np.isfinite(value):
            raise _diverged(spec, value, done - len(values) + offset + 1, stopped_at=done)
    return values


def _ddp(objective: TrainingObjective, world: int) -> torch.nn.Module:
    """The objective, wrapped in DDP when several processes train it (gradients averaged over the ranks; their
    scale: :mod:`sentemb.distributed`)."""
    if world == 1:
        return objective
    device = objective.encoder.device
    return torch.nn.parallel.DistributedDataParallel(
        objective, device_ids=[device.index] if device.type == "cuda" else None, static_graph=True
    )


def _outcome(
    state: TrainingState, spec: RunSpec, objective: TrainingObjective, best_dir: Path, n_rows: int
) -> TrainOutcome:
    rows_seen = spec.steps * spec.batch_size  # over the whole run, resumed parts included
    train_seconds = max(state.seconds["steps"], 1e-9)
    return TrainOutcome(
        dev_curve=state.curve,
        trajectory=state.trajectory,
        best_step=state.best_step,
        best_dev=state.best_dev,
        train_seconds=state.seconds["steps"],
        seconds=dict(state.seconds),
        rows_seen=rows_seen,
        sequences_per_second=rows_seen * objective.sequences_per_row / train_seconds,
        rows_per_second=rows_seen / train_seconds,
        resumed_from_step=state.resumed_from_step,
        best_dir=best_dir,
        final_loss=state.losses[-1] if state.losses else None,
        losses=state.losses,
        n_rows=n_rows,
    )


def train(
    objective: TrainingObjective,
    spec: RunSpec,
    rows: list,
    evaluate_dev: DevEvaluator,
    checkpoint_dir: Path,
    progress: bool = True,
    save_state_every_s: float = 300.0,
    speedups: Speedups = Speedups(),
) -> TrainOutcome:
    """Train ``objective`` on the rows it selects from ``rows`` as ``spec`` says, resuming from
    ``checkpoint_dir/state.pt`` when it holds this run's state; the kept weights' encoder goes to
    ``checkpoint_dir/best``. ``speedups`` (:mod:`sentemb.train.speedups`) change how fast, not what."""
    phase_started = time.perf_counter()
    rows = objective.select_rows(rows)
    rank, world, main = distributed.rank(), distributed.world_size(), distributed.is_main()
    if spec.batch_size % world:
        raise SentembError(f"batch_size {spec.batch_size} (the global batch) does not divide over {world} processes")
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    state_path, best_dir = checkpoint_dir / "state.pt", checkpoint_dir / "best"
    apply_to_encoders(objective, speedups)
    optimization = Optimization.for_spec(objective, spec, speedups)
    state = TrainingState.load(state_path, spec.run_id, objective, optimization) or _first_state(
        spec, objective, evaluate_dev, rank
    )
    order = EpochOrder(len(rows), spec.batch_size, spec.seed)
    model = _ddp(objective, world)
    trajectory_every = spec.trajectory_every or spec.eval_every
    last_state_write = time.perf_counter()
    pending: list[torch.Tensor] = []  # the logged losses on the device, read (and under sync_free checked) in one go
    # at the next evaluation point
    objective.train()
    bar = progress_bar(
        range(state.step, spec.steps),
        initial=state.step,
        total=spec.steps,
        desc=f"train {spec.objective}",
        disable=not (progress and main),
    )
    for step in bar:
        with timed(state.seconds, "batching"):
            batch = [rows[i] for i in order.indices(step)]
            if world > 1:
                batch = distributed.shard(batch, world, rank)
            rng = step_rng(spec.seed, step, rank)
        with timed(state.seconds, "steps"):
            pending.append(training_step(model, batch, rng, optimization, spec, step, check=not speedups.sync_free))
        state.step = done = step + 1
        evaluation = done % spec.eval_every == 0 or done == spec.steps
        if not evaluation and done % trajectory_every != 0:
            continue
        with timed(state.seconds, "steps"):  # the steps' device work still queued is waited for here
            state.losses.extend(checked_losses(pending, spec, done))
            pending.clear()
        point = _dev_point(objective, evaluate_dev, done, state.seconds)
        state.trajectory.append(point)
        if not evaluation:
            continue
        point["loss"] = float(np.mean(state.losses[-spec.eval_every :]))
        state.curve.append(point)
        if main:
            state.select(done, point["stsb_dev_spearman"], objective, spec.checkpoint)
            bar.set_postfix(loss=f"{point['loss']:.3f}", dev=f"{100 * point['stsb_dev_spearman']:.2f}")
        if distributed.broadcast_object(
            done == spec.steps or time.perf_counter() - last_state_write >= save_state_every_s
        ):
            state.save(state_path, objective, optimization, phase_started)
            last_state_write = time.perf_counter()

    apply_to_encoders(objective, Speedups())  # the encoders leave training with the plain path's batches
    with timed(state.seconds, "checkpoint"):
        if main:
            objective.load_state_dict(state.best_state)
            objective.eval()
            _save_best(objective, best_dir)
        distributed.barrier()  # best/ is written before any rank goes on
    state.stamp_total(phase_started)
    return _outcome(state, spec, objective, best_dir, len(rows))
