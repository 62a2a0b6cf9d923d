"""The verdicts of a paper's claims, corrected for testing many of them at once: one rule for *holds* and *fails*.

The rule (``docs/reference.md#claims-the-rules``, fixed on 2026-12-02 before the regeneration it governs):

- Each tested verdict (a claim's direction, or its size against a margin the paper states) gives two one-sided
  p-values, ``p_for`` (the effect is there) and ``p_against`` (it is significantly the other way). Its **two-sided**
  p is ``min(1, 2 min(p_for, p_against))``: each side is tested at 0.025, so *holds* and *fails* face the same bar,
  and the side with the smaller p gives the direction.
- A **family** is every tested verdict of one paper on one profile (direction and size together). Its two-sided
  p-values are adjusted by **Holm** (``statsmodels``' ``holm``): the chance that any *holds* or *fails* of the paper
  on that profile is wrong is at most ``ALPHA`` whatever the dependence between the tests, which matters because
  the same runs sit behind claims on both sides (the unsupervised SimCSE seeds are the left of some claims and the
  right of others, so their statistics can be negatively correlated; Benjamini-Hochberg is guaranteed only under
  positive dependence).
- *holds* when the adjusted p is below ``ALPHA`` and the sign is the claim's; *fails* when it is below and the sign
  is the other; *inconclusive* otherwise. A family of one leaves its p as it is.

Why Holm and not Benjamini-Yekutieli (also valid under any dependence): a verdict is read alone, as "this claim
holds", so the error that matters is that of each verdict, which family-wise control bounds; and with a handful of
tests and few rejections BY is stricter than Holm (BY's smallest p must beat ALPHA / (m (1 + 1/2 + ... + 1/m)),
Holm's ALPHA / m). What it costs is power: ``docs/reference.md`` gives the effect 3 seeds can detect.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from statsmodels.stats.multitest import multipletests

ALPHA = 0.05
METHOD = "holm"


@dataclass(frozen=True)
class Decision:
    status: str  # holds | fails | inconclusive
    p_adjusted: float  # the adjusted two-sided p
    correction: str  # how, over how many tests


def two_sided(p_for: float, p_against: float) -> float:
    """The two-sided p of a pair of one-sided tests: twice the smaller, at most 1."""
    return min(1.0, 2.0 * min(p_for, p_against))


def adjusted(p_values: list[float], method: str = METHOD) -> list[float]:
    """``p_values`` adjusted by ``method`` (Holm); one value is returned as it is."""
    if len(p_values) <= 1:
        return [float(p) for p in p_values]
    return [float(p) for p in multipletests(np.asarray(p_values, dtype=float), alpha=ALPHA, method=method)[1]]


def decide(p_for: float, p_against: float, p_adjusted: float | None = None, alpha: float = ALPHA) -> str:
    """The status of one verdict: significant (its adjusted two-sided p, by default the raw one, below ``alpha``),
    then the side with the smaller one-sided p."""
    p = two_sided(p_for, p_against) if p_adjusted is None else p_adjusted
    if p >= alpha or p_for == p_against:
        return "inconclusive"
    return "holds" if p_for < p_against else "fails"


def correction_words(m: int) -> str:
    return f"Holm over the paper's {m} tests (two-sided)" if m > 1 else "none (one test)"


def decide_family(tests: list[tuple[float, float]]) -> list[Decision]:
    """Each (p_for, p_against) of one family decided on its Holm-adjusted two-sided p."""
    how = correction_words(len(tests))
    adjusted_p = adjusted([two_sided(p, q) for p, q in tests])
    return [Decision(decide(p, q, a), a, how) for (p, q), a in zip(tests, adjusted_p)]
