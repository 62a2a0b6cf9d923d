"""Choosing the best of several scores, with NaN as the worst score.

A collapsed run (Barlow Twins or VICReg with constant embeddings, a diverged encoder) can score NaN, and Python's
comparisons with NaN are all false: ``max`` then keeps whichever NaN it met first, and ``nan > best`` never
replaces a NaN best. Every max/argmax over scores in the archive (checkpoint selection in the training loop, the
best trial of a scan) goes through :func:`worst_if_nan`, so a NaN can never win.
"""

from __future__ import annotations

import math
from typing import Callable, Iterable, TypeVar

T = TypeVar("T")


def worst_if_nan(score: float | None) -> float:
    """The score, or -inf when it is NaN or missing (never better than any real score)."""
    return float("-inf") if score is None or math.isnan(score) else float(score)


def best_of(items: Iterable[T], score: Callable[[T], float | None]) -> T:
    """The item with the highest score, NaN counted as the worst; the first one on ties."""
    return max(items, key=lambda item: worst_if_nan(score(item)))
