"""Two cells of seeds compared on one design: the one-sided p-values each way and a confidence interval.

Cells: :class:`Seeds` (per-seed values with the run ids behind them) or :class:`Constant` (one value without seed
variance: an untrained backbone evaluated in eval mode).
Designs (:mod:`sentemb.report.pairing`, read from the run records): **paired** (a one-sample t-test on the matched
differences, equal to ``scipy.stats.ttest_rel``), **independent** (Welch's ``ttest_ind(equal_var=False)``), or
**one-sample** against a :class:`Constant`. No test at all when the design is refused (the values are not
independent replicates: overlapping init runs, pooled configurations), when both cells are constants (two fixed
numbers: a difference, no p-value), or with fewer than 2 values (or matched pairs) on a side.
Zero variance on both sides: the sign of the difference decides (p = 0 or 1).
The interval: the two-sided (1 - 2 alpha) t-interval of the difference, whose bounds are the one-sided alpha tests'
(what the size verdict's ratio to the paper's effect is read from).
Relations: :mod:`sentemb.report.claims` (the claims' tests), ``papers/overview/tables.py`` (pairwise methods).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from sentemb.report.pairing import Design, RecordLookup, design, stored_record


class Constant(list):
    """The value of a cell without seed variance (one value), with the run ids behind it."""

    def __init__(self, values, run_ids=(), profile: str = "") -> None:
        super().__init__(values)
        self.run_ids, self.profile = list(run_ids), profile


class Seeds(list):
    """A cell's per-seed values with the run ids behind them (``run_ids``; aligned with the values when as many) and
    their profile."""

    def __init__(self, values, run_ids=(), profile: str = "") -> None:
        super().__init__(values)
        self.run_ids, self.profile = list(run_ids), profile


def welch_p(a: list[float], b: list[float], shift: float = 0.0) -> float:
    """One-sided Welch t-test p-value of H1: mean(a) - shift > mean(b) (both need >= 2 values).

    Zero variance on both sides: p = 0 if mean(a) - shift > mean(b), else 1. A :class:`Constant` side is a known
    value: the other side is tested against it with a one-sample t-test."""
    constant_a, constant_b = isinstance(a, Constant), isinstance(b, Constant)
    a = np.asarray(a, dtype=float) - shift
    b = np.asarray(b, dtype=float)
    if np.var(a) == 0 and np.var(b) == 0:
        return 0.0 if a.mean() > b.mean() else 1.0
    if constant_b and not constant_a:
        return float(stats.ttest_1samp(a, b[0], alternative="greater").pvalue)
    if constant_a and not constant_b:
        return float(stats.ttest_1samp(b, a[0], alternative="less").pvalue)
    return float(stats.ttest_ind(a, b, equal_var=False, alternative="greater").pvalue)


def paired_p(differences: list[float], shift: float = 0.0) -> float:
    """One-sided paired t-test p-value of H1: mean(differences) > shift (``ttest_rel``'s statistic on the pairs).
    Zero variance: p = 0 if the mean lies above the shift, else 1."""
    d = np.asarray(differences, dtype=float)
    if np.var(d) == 0:
        return 0.0 if d.mean() > shift else 1.0
    return float(stats.ttest_1samp(d, shift, alternative="greater").pvalue)


def _aligned(cell) -> bool:
    return isinstance(cell, (Seeds, Constant)) and len(cell.run_ids) == len(cell) and len(cell) > 0


class Comparison:
    """Two cells compared on one design: ``p_greater(s)`` / ``p_less(s)`` are the one-sided p-values of
    H1: left - right > s / < s (means; on a paired design, the matched differences); :attr:`untestable` says why no
    test may run ("" when one may)."""

    def __init__(self, left: list[float], right: list[float], lookup: RecordLookup = stored_record) -> None:
        self.left, self.right = left, right
        constant_left, constant_right = isinstance(left, Constant), isinstance(right, Constant)
        if constant_left and constant_right:
            self.design = Design(False, "two fixed numbers", refused="two fixed numbers (no seed variance): no test")
        elif constant_left or constant_right:
            self.design = Design(False, "one-sample: a cell without seed variance")
        elif not _aligned(left) or not _aligned(right):
            unaligned = [c for c in (left, right) if isinstance(c, Seeds) and c.run_ids and not _aligned(c)]
            why = (
                f"independent: a cell's {len(unaligned[0].run_ids)} runs give {len(unaligned[0])} value(s)"
                if unaligned
                else "independent: no run records"
            )
            self.design = Design(False, why)
        else:
            self.design = design(left.run_ids, right.run_ids, left.profile or right.profile, lookup)
        self.differences = [
            float(np.mean([left[i] for i in ls]) - np.mean([right[j] for j in rs])) for ls, rs in self.design.pairs
        ]

    @property
    def paired(self) -> bool:
        return self.design.paired

    @property
    def untestable(self) -> str:
        """Why no test may run on this comparison; "" when one may."""
        if self.design.refused:
            return self.design.refused
        if self.paired:
            return "" if len(self.differences) >= 2 else f"fewer than 2 matched pairs: {len(self.differences)}"
        short = [c for c in (self.left, self.right) if not isinstance(c, Constant) and len(c) < 2]
        return "1 seed" if short else ""

    @property
    def testable(self) -> bool:
        return not self.untestable

    @property
    def difference(self) -> float:
        """The estimated left - right: the mean matched difference (paired) or the difference of the means."""
        if self.paired:
            return float(np.mean(self.differences))
        return float(np.mean(self.left) - np.mean(self.right))

    def p_greater(self, shift: float = 0.0) -> float:
        if self.paired:
            return paired_p(self.differences, shift)
        return welch_p(self.left, self.right, shift)

    def p_less(self, shift: float = 0.0) -> float:
        if self.paired:
            return paired_p([-d for d in self.differences], -shift)
        return welch_p(self.right, self.left, -shift)

    def interval(self, alpha: float) -> tuple[float, float]:
        """The two-sided (1 - 2 alpha) t-interval of left - right on this design (its bounds are where the one-sided
        alpha tests reject); (nan, nan) when untestable, the point itself when there is no variance."""
        if not self.testable:
            return float("nan"), float("nan")
        if self.paired:
            d = np.asarray(self.differences, dtype=float)
            se, df = d.std(ddof=1) / np.sqrt(len(d)), len(d) - 1
        else:
            parts = [
                (np.var(np.asarray(c, dtype=float), ddof=1) / len(c), len(c) - 1)
                for c in (self.left, self.right)
                if not isinstance(c, Constant)
            ]
            variance = sum(v for v, _ in parts)
            se = np.sqrt(variance)
            denominator = sum(v**2 / n for v, n in parts if n > 0)
            df = variance**2 / denominator if denominator > 0 else float("inf")  # Welch-Satterthwaite
        if se == 0:
            return self.difference, self.difference
        half = float(stats.t.ppf(1 - alpha, df)) * se
        return self.difference - half, self.difference + half

    @property
    def n(self) -> str:
        if self.paired:
            return f"{len(self.differences)} pairs"
        return f"{len(self.left)} vs {len(self.right)}"

    def test(self, what: str) -> str:
        """The test's name with its design and why, e.g. "paired t one-sided (paired: the same init runs)"."""
        if self.design.refused:
            return f"none ({self.design.refused})"
        if self.paired:
            name = f"paired t {what}"
        elif isinstance(self.left, Constant) != isinstance(self.right, Constant):
            name = f"one-sample t {what}"
        else:
            name = f"Welch {what}"
        extra = f"; {self.design.unmatched}" if self.design.unmatched else ""
        return f"{name} ({self.design.why}{extra})"
