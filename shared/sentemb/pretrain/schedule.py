"""The learning-rate factor of each pretraining step.

``linear``
    transformers' ``get_linear_schedule_with_warmup``: up over ``warmup`` steps, then straight down to 0 at the last
    step (every run before the ``wsd`` schedule; its factors are the library's, a test checks).
``wsd`` (warm-up, stable, decay)
    up over ``warmup`` steps, constant, then linearly to 0 over the last ``decay_fraction`` of the steps (Cramming and
    Izsak et al. 2021 decay to zero exactly at the budget). With ``budget_minutes`` the decay starts at the first step
    whose wall time (every process's) passes ``(1 - decay_fraction)`` of the budget, and lasts
    ``decay_fraction / (1 - decay_fraction)`` of the steps taken so far (at most to ``steps``): the step it started
    at is saved with the run, so a resumed run decays where the first decided. A run of ``steps`` S / (1 - f) is, up
    to step S, the same run as any longer one: a milestone decays a copy of the long run's state (``--branch-from``).

A resumed ``weights``-mode carry (:mod:`sentemb.pretrain.carry`) multiplies the factor by a linear re-warm-up.
The factor is of the step count taken so far (LambdaLR's ``last_epoch``), as torch's schedulers count.
"""

from __future__ import annotations

from sentemb.pretrain.configs import PretrainConfig


class Schedule:
    def __init__(self, config: PretrainConfig) -> None:
        self.kind, self.warmup, self.steps = config.schedule, config.warmup, config.steps
        self.fraction, self.budget_s = config.decay_fraction, 60.0 * config.budget_minutes
        self.decay_start = None if self.budget_s else config.decay_start
        self.total = config.steps
        self.rewarm_from, self.rewarm_steps = None, 0

    def __call__(self, step: int) -> float:
        return self._base(step) * self._rewarm(step)

    def _base(self, step: int) -> float:
        if step < self.warmup:
            return step / max(1, self.warmup)
        if self.kind == "linear":
            return max(0.0, (self.steps - step) / max(1, self.steps - self.warmup))
        if self.decay_start is None or step < self.decay_start:
            return 1.0
        return max(0.0, (self.total - step) / max(1, self.total - self.decay_start))

    def _rewarm(self, step: int) -> float:
        if self.rewarm_from is None or step >= self.rewarm_from + self.rewarm_steps:
            return 1.0
        return (step - self.rewarm_from + 1) / self.rewarm_steps

    def observe(self, step: int, seconds: float) -> None:
        """A wall-clock budget's decay starts at the first step past its share of the budget."""
        if self.decay_start is None and seconds >= (1.0 - self.fraction) * self.budget_s:
            self.decay_start = step
            self.total = min(self.steps, step + round(step * self.fraction / (1.0 - self.fraction)))

    def rewarm(self, step: int, steps: int) -> None:
        self.rewarm_from, self.rewarm_steps = step, steps

    def finished(self, step: int) -> bool:
        return step >= self.total

    def state(self) -> dict:
        return {
            "decay_start": self.decay_start,
            "total": self.total,
            "rewarm_from": self.rewarm_from,
            "rewarm_steps": self.rewarm_steps,
        }

    def load(self, state: dict) -> None:
        self.decay_start, self.total = state["decay_start"], state["total"]
        self.rewarm_from, self.rewarm_steps = state["rewarm_from"], state["rewarm_steps"]
