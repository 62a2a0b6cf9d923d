"""'Crop k%' (SimCSE, Gao et al. 2021, Table 1, §3): "keep 100-k% of the length".

Words are whitespace tokens. Of a sentence of n words we keep one random contiguous span of

    kept = max(1, round_half_up((1 - k) * n))

words (rounding.py), starting at a position drawn uniformly from 0 .. n - kept. SimCSE reports
k = 10%, 20%, 30% (STS-B dev 77.8, 71.4, 63.6). The paper does not say how (1 - k) * n is rounded
nor how the span is placed; the SimCSE repository has no code for this ablation, so both are our
choice. A sentence of one word (or only whitespace) comes back unchanged.
"""

from __future__ import annotations

import random

from sentemb.augment.rounding import check_fraction, round_half_up


def crop_length(n_words: int, drop_fraction: float) -> int:
    """How many words a crop of ``drop_fraction`` keeps out of ``n_words`` (at least one)."""
    return min(n_words, max(1, round_half_up((1.0 - drop_fraction) * n_words)))


def crop(sentence: str, rng: random.Random, drop_fraction: float) -> str:
    check_fraction("drop_fraction", drop_fraction)
    words = sentence.split()
    if len(words) <= 1:
        return sentence
    kept = crop_length(len(words), drop_fraction)
    start = rng.randrange(len(words) - kept + 1)
    return " ".join(words[start : start + kept])
