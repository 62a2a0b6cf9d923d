"""SentEval's classifier on frozen embeddings (``senteval/tools/classifier.py`` PyTorchClassifier, nhid = 0).

A logistic regression (one linear layer on the features, cross-entropy, batch-mean loss as on PyTorch >= 0.4.1)
trained with the optimizer named in the parameter set (torch defaults: Adam lr 1e-3, RMSprop lr 1e-2), the
regularisation value used as the optimizer's weight decay (bias included). ``fit`` trains ``epoch_size`` shuffled
passes between two evaluations on the validation data, keeps the model with the best validation accuracy
(strict improvement), and stops at the (tenacity + 1)-th evaluation without improvement (the counter is never
reset) or after ``max_epoch`` epochs. Without validation data, a random ``validation_split`` of the training data
is held out. The numpy and torch random states are re-seeded with ``seed`` at construction, as SentEval does,
but locally (a ``RandomState`` and a forked torch RNG), so nothing global is touched.

The two parameter sets of SimCSE's ``evaluation.py``:

| mode     | kfold | optim   | batch | tenacity | epoch_size |
|----------|-------|---------|-------|----------|------------|
| test     | 10    | adam    | 64    | 5        | 4          |
| fasttest | 5     | rmsprop | 128   | 3        | 2          |
"""

from __future__ import annotations

import copy
from contextlib import contextmanager
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class ClassifierParams:
    mode: str
    kfold: int
    optim: str
    batch_size: int
    tenacity: int
    epoch_size: int
    max_epoch: int = 200
    seed: int = 1111

    def as_dict(self) -> dict:
        return asdict(self)


PARAMS = {
    "test": ClassifierParams("test", kfold=10, optim="adam", batch_size=64, tenacity=5, epoch_size=4),
    "fasttest": ClassifierParams("fasttest", kfold=5, optim="rmsprop", batch_size=128, tenacity=3, epoch_size=2),
}
OPTIMIZERS = {"adam": torch.optim.Adam, "rmsprop": torch.optim.RMSprop}


@contextmanager
def single_thread():
    """Tiny linear models train ~20x faster on one CPU thread than on two (thread start-up dominates)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


class LogisticRegression:
    def __init__(self, in_dim: int, nclasses: int, l2reg: float, params: ClassifierParams) -> None:
        self.params, self.l2reg = params, l2reg
        self.rng = np.random.RandomState(params.seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(params.seed)
            self.model = nn.Linear(in_dim, nclasses)
        self.optimizer = OPTIMIZERS[params.optim](self.model.parameters(), weight_decay=l2reg)

    def _epoch(self, x: torch.Tensor, y: torch.Tensor) -> None:
        self.model.train()
        for _ in range(self.params.epoch_size):
            order = torch.as_tensor(self.rng.permutation(len(x)))
            for start in range(0, len(x), self.params.batch_size):
                index = order[start : start + self.params.batch_size]
                loss = F.cross_entropy(self.model(x[index]), y[index])
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()

    def fit(
        self,
        x: np.ndarray,
        y: np.ndarray,
        validation: tuple[np.ndarray, np.ndarray] | None = None,
        validation_split: float = 0.05,
    ) -> "LogisticRegression":
        if validation is None:
            order = self.rng.permutation(len(x))
            cut = int(validation_split * len(x))
            validation = (x[order[:cut]], y[order[:cut]])
            x, y = x[order[cut:]], y[order[cut:]]
        tx, ty = torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y, dtype=torch.long)
        best_acc, best_state, misses, epoch = -1.0, None, 0, 0
        with single_thread():
            while epoch <= self.params.max_epoch:
                self._epoch(tx, ty)
                epoch += self.params.epoch_size
                acc = self.score(*validation)
                if acc > best_acc:
                    best_acc, best_state = acc, copy.deepcopy(self.model.state_dict())
                else:
                    if misses >= self.params.tenacity:
                        break
                    misses += 1
        self.model.load_state_dict(best_state)
        return self

    @torch.no_grad()
    def predict(self, x: np.ndarray) -> np.ndarray:
        self.model.eval()
        return self.model(torch.as_tensor(x, dtype=torch.float32)).argmax(1).numpy()

    def score(self, x: np.ndarray, y: np.ndarray) -> float:
        return float((self.predict(x) == y).mean())
