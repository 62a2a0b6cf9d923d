"""Seeded samples of the evaluation sets: what a run whose spec sets ``eval_pairs`` or ``transfer_examples`` is
evaluated on.

A profile that only exercises the pipeline (smoke: a tiny random BERT) evaluates on a sample of each task, so that a
run's evaluations take a second instead of a minute (:class:`sentemb.profiles.Profile`): at most ``eval_pairs`` pairs
of each STS subset (STS12-16) and of each split of STS-B and SICK-R (the SentEval protocols, the STS-B dev
evaluations that select a checkpoint, the STS-B analyses, and MTEB's STS tasks), and at most ``transfer_examples``
examples of each split of a SentEval transfer task. A sample is drawn with ``SAMPLE_SEED`` and keeps the file's
order (SentEval's sorted order for the transfer tasks), so every run, paper and derived analysis of a profile is
evaluated on the same pairs. ``None`` keeps every pair and example (the small, raw and full profiles); the two sizes
enter a run's spec only when set (:class:`sentemb.spec.RunSpec`), so a record says what it was evaluated on.
"""

from __future__ import annotations

import dataclasses
import random

from sentemb.data.sts import STSPairs, STSTask, load_task
from sentemb.data.transfer import Split, TransferTask

SAMPLE_SEED = 0


def sample_positions(total: int, size: int | None, seed: int = SAMPLE_SEED) -> list[int] | None:
    """``size`` positions of ``range(total)`` drawn without replacement with ``seed``, in increasing order; None
    when every position is kept (``size`` None, or at least ``total``)."""
    if size is None or size >= total:
        return None
    return sorted(random.Random(seed).sample(range(total), size))


def sample_pairs(pairs: STSPairs, size: int | None) -> STSPairs:
    """At most ``size`` of the pairs with their gold scores (:func:`sample_positions`); all of them for None."""
    keep = sample_positions(len(pairs), size)
    if keep is None:
        return pairs
    return STSPairs(
        pairs.name,
        tuple(pairs.sent1[i] for i in keep),
        tuple(pairs.sent2[i] for i in keep),
        pairs.scores[keep],
    )


def sample_sts_task(task: STSTask, pairs: int | None) -> STSTask:
    """``task`` with at most ``pairs`` pairs in each of its subsets or splits."""
    if pairs is None:
        return task
    return STSTask(task.name, {name: sample_pairs(part, pairs) for name, part in task.parts.items()})


def load_sts_task(name: str, synthetic: bool = False, pairs: int | None = None) -> STSTask:
    """:func:`sentemb.data.sts.load_task`, with at most ``pairs`` pairs of each subset or split."""
    return sample_sts_task(load_task(name, synthetic=synthetic), pairs)


def sample_split(split: Split, size: int | None) -> Split:
    """At most ``size`` examples of a transfer task's split (both sentences of a pair), with their labels."""
    keep = sample_positions(len(split.labels), size)
    if keep is None:
        return split
    return Split(
        tuple(split.first[i] for i in keep),
        split.labels[keep],
        None if split.second is None else tuple(split.second[i] for i in keep),
    )


def sample_transfer_task(task: TransferTask, examples: int | None) -> TransferTask:
    """``task`` with at most ``examples`` examples in each of its splits."""
    if examples is None:
        return task
    return dataclasses.replace(task, splits={name: sample_split(s, examples) for name, s in task.splits.items()})
