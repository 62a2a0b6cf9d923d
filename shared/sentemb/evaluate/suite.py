"""Every evaluator of a model in one call, with each unique sentence encoded once.

Groups: ``sts`` (SimCSE's protocol; ``sts_protocols`` may add DeCLUTR's original-SentEval protocol),
``transfer`` (SentEval's 7 transfer tasks of SimCSE Table E.1), ``declutr`` (the 7 plus SST5 and SICK-E, DeCLUTR
Table S3), ``probing`` (the 10 probing tasks, DeCLUTR Table S4) and ``mteb`` (through the ``mteb`` package).
The sentences of all STS and transfer tasks are gathered, encoded in one pass, and looked up by every evaluator;
the MTEB adapter reuses the same lookup. A task whose data is not available is reported as not run, with the
reason, never dropped.
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np

from sentemb.data.sts import ALL_TASKS
from sentemb.data.transfer import EXTRA_TASKS, PROBING, TRANSFER_TASKS, load_transfer_task
from sentemb.errors import ConfigError, DataError
from sentemb.evaluate import GROUPS, sts, transfer
from sentemb.evaluate.senteval_classifier import PARAMS
from sentemb.evaluate.subsets import load_sts_task, sample_transfer_task


def parse_groups(text: str) -> list[str]:
    groups = [g.strip() for g in text.split(",") if g.strip()]
    unknown = [g for g in groups if g not in GROUPS]
    if unknown or not groups:
        raise ConfigError(f"unknown task group(s) {unknown or text!r}; choose from {', '.join(GROUPS)}")
    return groups


def _transfer_names(groups: Sequence[str]) -> list[str]:
    names: list[str] = []
    if "transfer" in groups or "declutr" in groups:
        names += TRANSFER_TASKS
    if "declutr" in groups:
        names += EXTRA_TASKS
    if "probing" in groups:
        names += list(PROBING)
    return names


def evaluate_model(
    encode: Callable[[list[str]], np.ndarray],
    groups: Sequence[str],
    sts_protocols: Sequence[str] = ("simcse",),
    sts_splits: Sequence[str] = ("test",),
    transfer_mode: str = "fasttest",
    synthetic: bool = False,
    mteb_model=None,
    extra_sentences: Sequence[str] = (),
    batch_size: int = 64,
    precision: str = "fp32",
    sts_pairs: int | None = None,
    transfer_examples: int | None = None,
) -> tuple[dict, dict[str, np.ndarray]]:
    """Results of every requested group, and the sentence -> embedding lookup they were computed from. ``precision``
    is the one ``encode`` runs at; MTEB encodes the texts the lookup lacks at the same precision. ``sts_pairs`` and
    ``transfer_examples`` evaluate a seeded sample of each STS subset or split and of each transfer task's splits
    (MTEB's STS tasks too; :mod:`sentemb.evaluate.subsets`); None: all of them."""
    if transfer_mode not in PARAMS:
        raise ConfigError(f"unknown transfer mode {transfer_mode!r}; choose from {', '.join(PARAMS)}")
    unknown = [p for p in sts_protocols if p not in sts.PROTOCOLS]
    if unknown:
        raise ConfigError(f"unknown STS protocol(s) {unknown}; choose from {', '.join(sts.PROTOCOLS)}")
    results: dict = {"groups": list(groups), "seconds": {}}
    sts_tasks = [load_sts_task(t, synthetic, sts_pairs) for t in ALL_TASKS] if "sts" in groups else []
    transfer_tasks, not_run = [], {}
    for name in _transfer_names(groups):
        try:
            transfer_tasks.append(sample_transfer_task(load_transfer_task(name), transfer_examples))
        except DataError as exc:
            not_run[name] = {"status": "not run", "reason": f"data unavailable: {str(exc).splitlines()[0]}"}
    sentences: dict[str, None] = dict.fromkeys(extra_sentences)
    for protocol in sts_protocols if sts_tasks else ():
        sentences.update(dict.fromkeys(sts.needed_sentences(sts_tasks, sts_splits, protocol)))
    sentences.update(dict.fromkeys(transfer.needed_sentences(transfer_tasks)))
    started = time.perf_counter()
    unique = list(sentences)
    lookup = dict(zip(unique, encode(unique))) if unique else {}
    results["seconds"]["encode"] = time.perf_counter() - started
    results["n_sentences"] = len(unique)
    for protocol in sts_protocols if sts_tasks else ():
        started = time.perf_counter()
        results[f"sts_{protocol}"] = sts.score(sts_tasks, lookup, sts_splits, protocol)
        results["seconds"][f"sts_{protocol}"] = time.perf_counter() - started
    if transfer_tasks or not_run:
        started = time.perf_counter()
        scored = transfer.score(transfer_tasks, lookup, PARAMS[transfer_mode])
        scored["tasks"].update(not_run)
        results["transfer"] = scored
        results["seconds"]["transfer"] = time.perf_counter() - started
    if "mteb" in groups:
        from sentemb.evaluate.mteb_adapter import run_mteb

        started = time.perf_counter()
        results["mteb"] = run_mteb(mteb_model, lookup, batch_size=batch_size, precision=precision, sts_pairs=sts_pairs)
        results["seconds"]["mteb"] = time.perf_counter() - started
    return results, lookup
