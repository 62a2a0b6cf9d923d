"""SentEval's transfer evaluation (SimCSE Table E.1, DeCLUTR Tables S3-S4) on frozen embeddings.

Validation schemes (``senteval/tools/validation.py``), each over the weight-decay grid [1e-5, 1e-4, 1e-3, 1e-2]:

- ``cv`` (MR, CR, SUBJ, MPQA): stratified k-fold over the whole set (shuffled, random_state 1111); inside every
  outer training part, a stratified inner k-fold picks the weight decay (mean inner accuracy, rounded to 2
  decimals, first maximum wins; each inner fit early-stops on the fold it is scored on); the final model of the
  fold refits with a random 5% early-stopping split. devacc / acc = mean over outer folds (rounded percentages).
- ``kfold`` (TREC, MRPC): stratified k-fold on train (random_state = seed) picks the weight decay; refit on all
  of train (5% early-stopping split); acc on test. MRPC also reports F1 (positive class 1).
- ``split`` (SST2, SST5, SICK-E, probing): the weight decay with the best dev accuracy (dev also early-stops),
  refit with dev for early stopping, acc on test.

Pair tasks (MRPC, SICK-E) use the features [|u - v|, u * v] in that order. Every number is a percentage with two
decimals, as SentEval reports it; SimCSE's tables print ``acc``.

Tasks are independent and each classifier is seeded and trained on one thread, so :func:`score` fits large task sets
in one single-threaded process per core, side by side (a task's result does not depend on the process it ran in).
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Callable, Mapping, Sequence

import numpy as np
import torch
from sklearn.metrics import f1_score
from sklearn.model_selection import StratifiedKFold

from sentemb.data.transfer import TRANSFER_TASKS, TransferTask, load_transfer_task
from sentemb.evaluate.senteval_classifier import PARAMS, ClassifierParams, LogisticRegression

WEIGHT_DECAYS = (1e-5, 1e-4, 1e-3, 1e-2)
#: Below this many examples over all tasks the classifiers take about as long as starting worker processes
#: (~3 s each: torch and scikit-learn imported again), so :func:`score` stays in one process.
MIN_EXAMPLES_FOR_WORKERS = 20_000
PROTOCOL = "senteval: logistic regression on frozen embeddings, weight decay grid 1e-5..1e-2"


def pair_features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """SentEval's features of a sentence pair: [|u - v|, u * v], in that order (u and v themselves excluded)."""
    return np.c_[np.abs(u - v), u * v]


def features(split, lookup: Mapping[str, np.ndarray]) -> np.ndarray:
    u = np.stack([lookup[s] for s in split.first])
    if split.second is None:
        return u
    return pair_features(u, np.stack([lookup[s] for s in split.second]))


def _fit_score(x_tr, y_tr, x_te, y_te, nclasses, reg, params, validation=None):
    clf = LogisticRegression(x_tr.shape[1], nclasses, reg, params).fit(x_tr, y_tr, validation=validation)
    return clf, clf.score(x_te, y_te)


def _choose(x, y, nclasses, params: ClassifierParams, random_state: int) -> tuple[float, float]:
    """Weight decay chosen by stratified k-fold on (x, y); returns (best reg, its rounded mean accuracy)."""
    folds = list(StratifiedKFold(n_splits=params.kfold, shuffle=True, random_state=random_state).split(x, y))
    scores = []
    for reg in WEIGHT_DECAYS:
        accs = [
            _fit_score(x[tr], y[tr], x[te], y[te], nclasses, reg, params, validation=(x[te], y[te]))[1]
            for tr, te in folds
        ]
        scores.append(round(100 * float(np.mean(accs)), 2))
    best = int(np.argmax(scores))
    return WEIGHT_DECAYS[best], scores[best]


def cross_validation(x, y, nclasses, params: ClassifierParams) -> dict:
    dev, test = [], []
    outer = StratifiedKFold(n_splits=params.kfold, shuffle=True, random_state=1111)
    for tr, te in outer.split(x, y):
        reg, devacc = _choose(x[tr], y[tr], nclasses, params, random_state=1111)
        clf = LogisticRegression(x.shape[1], nclasses, reg, params).fit(x[tr], y[tr])
        dev.append(devacc)
        test.append(round(100 * clf.score(x[te], y[te]), 2))
    return {
        "devacc": round(float(np.mean(dev)), 2),
        "acc": round(float(np.mean(test)), 2),
        "ndev": len(x),
        "ntest": len(x),
    }


def kfold_then_test(x, y, x_test, y_test, nclasses, params: ClassifierParams) -> dict:
    reg, devacc = _choose(x, y, nclasses, params, random_state=params.seed)
    clf = LogisticRegression(x.shape[1], nclasses, reg, params).fit(x, y)
    prediction = clf.predict(x_test)
    return {
        "devacc": devacc,
        "acc": round(100 * float((prediction == y_test).mean()), 2),
        "weight_decay": reg,
        "ndev": len(x),
        "ntest": len(x_test),
        "_prediction": prediction,
    }


def train_dev_test(x, y, x_dev, y_dev, x_test, y_test, nclasses, params: ClassifierParams) -> dict:
    scores = [
        round(100 * _fit_score(x, y, x_dev, y_dev, nclasses, reg, params, validation=(x_dev, y_dev))[1], 2)
        for reg in WEIGHT_DECAYS
    ]
    best = int(np.argmax(scores))
    clf = LogisticRegression(x.shape[1], nclasses, WEIGHT_DECAYS[best], params).fit(x, y, validation=(x_dev, y_dev))
    return {
        "devacc": scores[best],
        "acc": round(100 * clf.score(x_test, y_test), 2),
        "weight_decay": WEIGHT_DECAYS[best],
        "ndev": len(x_dev),
        "ntest": len(x_test),
    }


def task_features(task: TransferTask, lookup: Mapping[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Split name -> (features, labels) of ``task``."""
    return {name: (features(split, lookup), split.labels) for name, split in task.splits.items()}


def evaluate_features(
    name: str, scheme: str, nclasses: int, feats: Mapping[str, tuple[np.ndarray, np.ndarray]], params: ClassifierParams
) -> dict:
    """One task's result from its features (:func:`task_features`) under its validation scheme."""
    if scheme == "cv":
        result = cross_validation(*feats["all"], nclasses, params)
    elif scheme == "kfold":
        result = kfold_then_test(*feats["train"], *feats["test"], nclasses, params)
        prediction = result.pop("_prediction")
        if nclasses == 2:
            result["f1"] = round(100 * float(f1_score(feats["test"][1], prediction)), 2)
    else:
        result = train_dev_test(*feats["train"], *feats["dev"], *feats["test"], nclasses, params)
    return {"task": name, "scheme": scheme, **result, "params": params.as_dict()}


def evaluate_task(task: TransferTask, lookup: Mapping[str, np.ndarray], params: ClassifierParams) -> dict:
    return evaluate_features(task.name, task.scheme, task.nclasses, task_features(task, lookup), params)


def needed_sentences(tasks: Sequence[TransferTask]) -> list[str]:
    out: dict[str, None] = {}
    for task in tasks:
        for split in task.splits.values():
            out.update(dict.fromkeys(split.sentences()))
    return list(out)


def run_transfer(encode: Callable[[list[str]], np.ndarray], tasks: Sequence[str], mode: str = "fasttest") -> dict:
    """Load ``tasks``, encode each unique sentence once, evaluate each with SentEval's protocol."""
    params = PARAMS[mode]
    loaded = [load_transfer_task(t) for t in tasks]
    sentences = needed_sentences(loaded)
    lookup = dict(zip(sentences, encode(sentences)))
    return score(loaded, lookup, params)


def _n_examples(task: TransferTask) -> int:
    return sum(len(split.labels) for split in task.splits.values())


def _fits_per_example(task: TransferTask, params: ClassifierParams) -> int:
    """About how many passes a task's classifiers make over each example: with the example count, the cost by which
    :func:`score` hands tasks to workers longest first, so that the workers finish at about the same time."""
    k, grid = params.kfold, len(WEIGHT_DECAYS)
    return {"cv": k * (grid * k + 1), "kfold": grid * k + 1}.get(task.scheme, grid + 1)


def score(
    tasks: Sequence[TransferTask],
    lookup: Mapping[str, np.ndarray],
    params: ClassifierParams,
    workers: int | None = None,
) -> dict:
    """Every task's result and the summary (SimCSE's 7-task average). ``workers`` (default: torch's thread count)
    processes fit the tasks side by side, longest first, when there are at least ``MIN_EXAMPLES_FOR_WORKERS``
    examples; the results are the same as in one process."""
    workers = torch.get_num_threads() if workers is None else workers
    workers = min(workers, len(tasks))
    if workers > 1 and sum(_n_examples(t) for t in tasks) >= MIN_EXAMPLES_FOR_WORKERS:
        # spawn, not fork: a forked child of a process whose OpenMP pool has run can hang in its first parallel op
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
            futures = {
                t.name: pool.submit(evaluate_features, t.name, t.scheme, t.nclasses, task_features(t, lookup), params)
                for t in sorted(tasks, key=lambda t: _n_examples(t) * _fits_per_example(t, params), reverse=True)
            }
            results = {t.name: futures[t.name].result() for t in tasks}
    else:
        results = {t.name: evaluate_task(t, lookup, params) for t in tasks}
    summary = {name: r["acc"] for name, r in results.items()}
    simcse = [summary[t] for t in TRANSFER_TASKS if t in summary]
    if simcse and len(simcse) == len(TRANSFER_TASKS):
        summary["Avg."] = round(float(np.mean(simcse)), 2)  # SimCSE Table E.1's average of its 7 tasks
    return {"protocol": PROTOCOL, "mode": params.mode, "params": params.as_dict(), "tasks": results, "summary": summary}
