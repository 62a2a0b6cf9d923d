"""Token shuffling (Farina & Pappadopulo 2024, §3 "Augmentations", Table 1).

The paper's whole definition: "Shuffling: for both branches we select a fraction p of the input
tokens and apply a random permutation." Table 1 scans p = 0.05, 0.1, 0.2, 0.3, 0.5; no code was
released (official-implementations.md §1.5). Our reading, per sentence of n tokens:

    m = round_half_up(p * n)                        (rounding.py; the paper does not say)
    S = m positions drawn uniformly without replacement
    tokens at S <- a uniformly random permutation of the tokens at S; all others stay put

"A random permutation" is read literally as uniform over all m! orders, so some selected tokens
may land where they were (m < 2 leaves the sentence unchanged). "Input tokens" most likely means
the encoder's word pieces; ``shuffle_tokens`` takes any sequence, so the caller can apply it to
piece ids (without [CLS]/[SEP]) or, as ``shuffle_words`` does, to whitespace words.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

from sentemb.augment.rounding import check_fraction, round_half_up

Token = TypeVar("Token")


def shuffle_count(n_tokens: int, fraction: float) -> int:
    """How many of ``n_tokens`` a shuffle of ``fraction`` selects."""
    return min(n_tokens, round_half_up(fraction * n_tokens))


def shuffle_tokens(tokens: Sequence[Token], rng: random.Random, fraction: float) -> list[Token]:
    check_fraction("fraction", fraction)
    shuffled = list(tokens)
    positions = sorted(rng.sample(range(len(shuffled)), shuffle_count(len(shuffled), fraction)))
    selected = [shuffled[position] for position in positions]
    rng.shuffle(selected)
    for position, token in zip(positions, selected):
        shuffled[position] = token
    return shuffled


def shuffle_words(sentence: str, rng: random.Random, fraction: float) -> str:
    words = sentence.split()
    if len(words) <= 1:
        return sentence
    return " ".join(shuffle_tokens(words, rng, fraction))
