"""The verdicts of a paper's claims corrected for testing many of them at once.

Each tested claim gives two one-sided p-values: ``p_for`` (the effect is there) and ``p_against`` (it is
significantly the other way). A paper tests its claims as one family per question (direction; size), and:

- *holds* when the Benjamini-Hochberg adjusted ``p_for`` is below ``ALPHA`` (the false discovery rate of the holds
  verdicts is controlled at 5 %);
- *fails* when the Holm adjusted ``p_against`` is below ``ALPHA`` (the family-wise error: the chance that any *fails*
  of the paper is wrong is at most 5 %). A *fails* says a published result does not reappear, which deserves the
  stricter bar;
- *inconclusive* otherwise (and when both are below, which a one-sided pair of tests does not produce).

Adjustments by ``statsmodels.stats.multitest.multipletests`` (``fdr_bh``, ``holm``). A family of one claim leaves
its p-values as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from statsmodels.stats.multitest import multipletests

ALPHA = 0.05
FOR_METHOD, AGAINST_METHOD = "fdr_bh", "holm"


@dataclass(frozen=True)
class Decision:
    status: str  # holds | fails | inconclusive
    p_adjusted: float  # the adjusted p of the test that decided it (for inconclusive: the claim's, BH)
    correction: str  # how, over how many claims


def adjusted(p_values: list[float], method: str) -> list[float]:
    """``p_values`` adjusted by ``method`` (``fdr_bh`` or ``holm``); one value is returned as it is."""
    if len(p_values) <= 1:
        return [float(p) for p in p_values]
    return [float(p) for p in multipletests(np.asarray(p_values, dtype=float), alpha=ALPHA, method=method)[1]]


def decide(p_for: float, p_against: float, alpha: float = ALPHA) -> str:
    """The status from (adjusted) p-values each way."""
    holds, fails = p_for < alpha, p_against < alpha
    if holds and fails:
        return "inconclusive"
    return "holds" if holds else "fails" if fails else "inconclusive"


def decide_family(tests: list[tuple[float, float]]) -> list[Decision]:
    """Each (p_for, p_against) of one family decided on its adjusted values (BH for, Holm against)."""
    m = len(tests)
    for_adjusted = adjusted([p for p, _ in tests], FOR_METHOD)
    against_adjusted = adjusted([p for _, p in tests], AGAINST_METHOD)
    how = f"Benjamini-Hochberg (holds) / Holm (fails) over {m} claims" if m > 1 else "none (one claim tested)"
    decisions = []
    for p_for, p_against in zip(for_adjusted, against_adjusted):
        status = decide(p_for, p_against)
        decisions.append(Decision(status, p_against if status == "fails" else p_for, how))
    return decisions
