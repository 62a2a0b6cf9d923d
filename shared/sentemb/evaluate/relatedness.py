"""The original SentEval's supervised relatedness protocol for STS-B and SICK-R (DeCLUTR's protocol).

DeCLUTR evaluated with the original SentEval, where STS-B and SICK-R are not scored by cosine: a regressor is
trained on the train split (``senteval/tools/relatedness.py`` RelatednessPytorch):

- features [|u - v|, u * v] of the two sentence embeddings;
- targets: the score y as a distribution over the 5 classes 1..5 (Tai et al., 2015): with f = floor(y),
  class f+1 gets y - f and class f gets f - y + 1 (classes outside 1..5 are dropped). STS-B's 0-5 scores are
  not shifted, as in SentEval (its open issue #83), so y < 1 loses mass;
- model: Linear(2d, 5) + softmax, mean-squared error against the target distribution, Adam (lr 1e-3), batch 64,
  no weight decay; 50 epochs between two evaluations, the model with the best dev Pearson kept (strict
  improvement), stop at the 4th evaluation without improvement (counter never reset) or after 1000 epochs;
- prediction: the softmax probabilities dotted with [1, 2, 3, 4, 5]; reported: Pearson, Spearman and MSE on test.
"""

from __future__ import annotations

import copy
from typing import Mapping

import numpy as np
import torch
import torch.nn.functional as F
from scipy.stats import pearsonr, spearmanr
from torch import nn

from sentemb.data.sts import STSPairs, STSTask
from sentemb.evaluate.senteval_classifier import single_thread
from sentemb.evaluate.transfer import pair_features

PROTOCOL = "senteval-original: softmax regressor on [|u-v|, u*v], trained on train, early-stopped on dev Pearson"
CLASSES = np.arange(1, 6, dtype=np.float64)


def encode_labels(scores: np.ndarray, nclasses: int = 5) -> np.ndarray:
    out = np.zeros((len(scores), nclasses), dtype=np.float32)
    for row, y in enumerate(scores):
        f = int(np.floor(y))
        for index, value in ((f, y - f), (f - 1, f - y + 1)):
            if 0 <= index < nclasses:
                out[row, index] = value
    return out


def features(pairs: STSPairs, lookup: Mapping[str, np.ndarray]) -> np.ndarray:
    u = np.stack([lookup[s] for s in pairs.sent1])
    v = np.stack([lookup[s] for s in pairs.sent2])
    return pair_features(u, v).astype(np.float32)


class RelatednessRegressor:
    def __init__(
        self,
        in_dim: int,
        seed: int = 1111,
        batch_size: int = 64,
        epochs_per_check: int = 50,
        max_epoch: int = 1000,
        patience: int = 3,
    ) -> None:
        self.rng = np.random.RandomState(seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.model = nn.Sequential(nn.Linear(in_dim, 5), nn.Softmax(dim=-1))
        self.optimizer = torch.optim.Adam(self.model.parameters(), weight_decay=0.0)
        self.batch_size, self.epochs_per_check = batch_size, epochs_per_check
        self.max_epoch, self.patience = max_epoch, patience

    @torch.no_grad()
    def predict(self, x: np.ndarray) -> np.ndarray:
        self.model.eval()
        return self.model(torch.as_tensor(x)).double().numpy() @ CLASSES

    def fit(self, x: np.ndarray, target: np.ndarray, x_dev: np.ndarray, dev_scores: np.ndarray) -> float:
        tx, ty = torch.as_tensor(x), torch.as_tensor(target)
        best, best_state, misses, epoch = -1.0, None, 0, 0
        with single_thread():
            while epoch <= self.max_epoch:
                self.model.train()
                for _ in range(self.epochs_per_check):
                    order = torch.as_tensor(self.rng.permutation(len(tx)))
                    for start in range(0, len(tx), self.batch_size):
                        index = order[start : start + self.batch_size]
                        loss = F.mse_loss(self.model(tx[index]), ty[index])
                        self.optimizer.zero_grad()
                        loss.backward()
                        self.optimizer.step()
                epoch += self.epochs_per_check
                r = float(np.nan_to_num(pearsonr(self.predict(x_dev), dev_scores)[0]))
                if r > best:
                    best, best_state = r, copy.deepcopy(self.model.state_dict())
                else:
                    if misses >= self.patience:
                        break
                    misses += 1
        self.model.load_state_dict(best_state)
        return best


def evaluate_task(task: STSTask, lookup: Mapping[str, np.ndarray], seed: int = 1111) -> dict:
    train, dev, test = (task.parts[s] for s in ("train", "dev", "test"))
    x_train, x_dev, x_test = (features(p, lookup) for p in (train, dev, test))
    regressor = RelatednessRegressor(x_train.shape[1], seed=seed)
    dev_pearson = regressor.fit(x_train, encode_labels(train.scores), x_dev, dev.scores)
    prediction = regressor.predict(x_test)
    return {
        "task": task.name,
        "protocol": PROTOCOL,
        "devpearson": dev_pearson,
        "pearson": float(pearsonr(prediction, test.scores)[0]),
        "spearman": float(spearmanr(prediction, test.scores)[0]),
        "mse": float(np.mean((prediction - test.scores) ** 2)),
        "ntest": len(test),
    }
