"""How a fraction of a sentence becomes a whole number of words or pieces.

None of the papers says how k% of a length is rounded (SimCSE Table 1: "keep 100-k% of the
length", "delete k% words", "replace k% of words"; non-contrastive §3: "a fraction p of the
input tokens"). Every augmentation here that is not EDA uses round half up,

    count = floor(fraction * length + 1/2)

so 10% of 15 words is 2 and 10% of 14 words is 1. EDA keeps its own rule (floor, see eda.py).
A tiny tolerance absorbs binary round-off, so 0.7 * 5 counts as exactly 3.5 and rounds to 4.
"""

from __future__ import annotations

import math

_ROUND_OFF = 1e-9


def round_half_up(value: float) -> int:
    return math.floor(value + 0.5 + _ROUND_OFF)


def check_fraction(name: str, fraction: float) -> None:
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1] (a fraction, not a percentage), got {fraction}")
