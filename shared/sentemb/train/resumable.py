"""What makes a training run exactly resumable, shared by the training loop (:mod:`sentemb.train.loop`) and
pretraining (:mod:`sentemb.pretrain.run`): the rows of each step (a seeded permutation per epoch), the per-step
randomness of text augmentations, the torch random states saved in ``state.pt`` and restored from it, and CPU copies
of state dicts."""

from __future__ import annotations

import copy
import random

import numpy as np
import torch


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


def rng_state(device: torch.device) -> dict:
    """The torch random state of this process (and of ``device`` when it is a GPU), for ``state.pt``."""
    state = {"cpu": torch.random.get_rng_state()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def set_rng_state(state: dict, device: torch.device) -> None:
    """Restore a :func:`rng_state`."""
    torch.random.set_rng_state(state["cpu"])
    if device.type == "cuda" and "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"], device)


def cpu_copy(state_dict: dict) -> dict:
    """A CPU copy of a state dict; non-tensor entries (a module's extra state, e.g. a memory queue's position)
    are deep-copied."""
    return {
        k: v.detach().to("cpu", copy=True) if isinstance(v, torch.Tensor) else copy.deepcopy(v)
        for k, v in state_dict.items()
    }
