"""A few hundred generated rows so that the smoke profile runs on a machine with no data at all.

The sentences come from a tiny grammar (subject, verb, object, place); the "gold" similarity of
a pair is the share of its four slots that agree, scaled to 0-5. The data is deterministic and is
only meant to exercise the pipeline: numbers computed on it mean nothing about any paper.
"""

from __future__ import annotations

import random

import numpy as np

from sentemb.data.sts_pairs import STS_SUBSETS, STSPairs, STSTask

SUBJECTS = ["a man", "a woman", "the child", "a dog", "the cat", "two girls", "an old man", "the team"]
VERBS = ["is playing", "is reading", "is eating", "is watching", "is carrying", "is painting", "is cleaning"]
OBJECTS = ["a guitar", "a book", "an apple", "the news", "a box", "a fence", "the car", "a ball"]
PLACES = ["in the park", "at home", "on the beach", "in the kitchen", "near the river", "on a stage"]
SLOTS = (SUBJECTS, VERBS, OBJECTS, PLACES)


def _sentence(choice: tuple[int, int, int, int]) -> str:
    return " ".join(slot[i] for slot, i in zip(SLOTS, choice)) + " ."


def _random_choice(rng: random.Random) -> tuple[int, int, int, int]:
    return tuple(rng.randrange(len(slot)) for slot in SLOTS)  # type: ignore[return-value]


def _perturb(rng: random.Random, choice, keep: int):
    slots = list(range(4))
    rng.shuffle(slots)
    out = list(choice)
    for position in slots[keep:]:
        out[position] = (out[position] + 1 + rng.randrange(len(SLOTS[position]) - 1)) % len(SLOTS[position])
    return tuple(out)


def synthetic_pairs(n: int, seed: int):
    rng = random.Random(seed)
    s1, s2, scores = [], [], []
    for _ in range(n):
        a = _random_choice(rng)
        b = _perturb(rng, a, keep=rng.randrange(5))
        same = sum(x == y for x, y in zip(a, b))
        s1.append(_sentence(a))
        s2.append(_sentence(b))
        scores.append(5.0 * same / 4 + rng.uniform(-0.2, 0.2))
    return s1, s2, np.clip(np.asarray(scores), 0.0, 5.0)


def synthetic_sts_task(task: str):
    seed = sum(map(ord, task))
    if task in STS_SUBSETS:
        names = ["subset-a", "subset-b"]
    else:
        names = ["train", "dev", "test"]
    parts = {}
    for k, name in enumerate(names):
        s1, s2, scores = synthetic_pairs(60, seed + k)
        parts[name] = STSPairs(f"{task}/{name}", tuple(s1), tuple(s2), scores)
    return STSTask(task, parts)


def synthetic_sentences(n: int = 400, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [_sentence(_random_choice(rng)) for _ in range(n)]


def synthetic_nli_triples(n: int = 200, seed: int = 1) -> list[tuple[str, str, str, str]]:
    """(premise, entailment, contradiction, neutral): two of four slots changed for the neutral hypothesis, drawn from
    a stream of its own so that the first three columns are those of the generated triples before it existed."""
    rng, neutral_rng = random.Random(seed), random.Random(seed + 7919)
    rows = []
    for _ in range(n):
        premise = _random_choice(rng)
        rows.append(
            (
                _sentence(premise),
                _sentence(_perturb(rng, premise, keep=3)),
                _sentence(_perturb(rng, premise, keep=0)),
                _sentence(_perturb(neutral_rng, premise, keep=2)),
            )
        )
    return rows
