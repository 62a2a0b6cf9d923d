"""'Word deletion k%' (SimCSE, Gao et al. 2021, Table 1, §3): "delete k% words".

Words are whitespace tokens. Of a sentence of n words we delete

    deleted = min(n - 1, round_half_up(k * n))

words at positions drawn uniformly without replacement (rounding.py); the others keep their
order. At least one word is always kept. SimCSE reports k = 10%, 20%, 30% (STS-B dev 75.9, 72.2,
68.2). The paper does not say whether k% is an exact count or a per-word probability; we read it
as an exact count (a per-word probability is EDA's random deletion, eda.py).
"""

from __future__ import annotations

import random

from sentemb.augment.rounding import check_fraction, round_half_up


def deletion_count(n_words: int, drop_fraction: float) -> int:
    """How many of ``n_words`` a deletion of ``drop_fraction`` removes (never all of them)."""
    return max(0, min(n_words - 1, round_half_up(drop_fraction * n_words)))


def delete_words(sentence: str, rng: random.Random, drop_fraction: float) -> str:
    check_fraction("drop_fraction", drop_fraction)
    words = sentence.split()
    if len(words) <= 1:
        return sentence
    deleted = set(rng.sample(range(len(words)), deletion_count(len(words), drop_fraction)))
    return " ".join(word for position, word in enumerate(words) if position not in deleted)
