"""The test behind each kind of claim, on the seeds of its cells (:mod:`sentemb.report.comparison`): ``greater``
one-sided each way (the verdict two-sided at ``ALPHA``; against the paper's stated margin for the size verdict),
``within`` by TOST, ``argmax`` / ``argmin`` by an intersection-union test over the k others; each an :class:`Outcome`
for :mod:`sentemb.report.claims` to decide and correct."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sentemb.report.claim_cells import _cells_of, _label
from sentemb.report.comparison import Comparison, Constant
from sentemb.report.multiplicity import ALPHA


def _fmt_p(p: float | None) -> str:
    return "n/a" if p is None else f"{p:.3g}"


def _g(x: float, sign: str = "") -> str:
    """A mean or difference for the detail, without floating-point noise (3.1 - 3.1 shows as 0)."""
    return f"{round(float(x), 9) + 0.0:{sign}.4g}"


@dataclass(frozen=True)
class Outcome:
    """One test of a claim before any correction: the effect (positive supports the claim), the one-sided p-values
    for and against (None when no test ran, with ``untestable`` saying why), what was compared, n and the test."""

    effect: float | None
    p_for: float | None
    p_against: float | None
    text: str
    n: str = ""
    test: str = ""
    untestable: str = ""
    ratio: tuple[float, float, float] | None = None  # the size's reproduced / paper ratio: (point, low, high)
    against: str = ""  # what the test against found, when it decides (argmax/argmin: the cell that beats expect)

    @property
    def tested(self) -> bool:
        return self.p_for is not None and self.p_against is not None

    def detail(self, status: str) -> str:
        if not self.tested:
            return f"inconclusive ({self.untestable}); {self.text}"
        if status == "fails" and self.against:
            return f"{self.against}; {self.text}"
        return f"{self.text}: p={_fmt_p(self.p_for)} for, p={_fmt_p(self.p_against)} against"


def _untested(comparisons: list[Comparison], refs: list[dict]) -> str:
    """Why a claim's comparisons cannot all be tested (the first reason); for one seed, which cells have one."""
    why = next(c.untestable for c in comparisons if c.untestable)
    if why != "1 seed":
        return why
    samples = [comparisons[0].left] + [c.right for c in comparisons]
    cells = [refs[-1], *refs[:-1]] if len(comparisons) > 1 else refs
    short = [_label(r) for r, x in zip(cells, samples) if not isinstance(x, Constant) and len(x) < 2]
    return f"1 seed: cells with one seed {', '.join(short)}"


def _greater(comparison: Comparison, refs: list[dict], target: float, paper_effect: float | None = None) -> Outcome:
    """``greater`` on seeds: a one-sided test each way, H1 left - right > target / < target (the verdict's two-sided
    p is twice the smaller); with ``paper_effect``, the ratio of the reproduced effect to it and its 95 % interval."""
    left, right = comparison.left, comparison.right
    diff = comparison.difference
    text = f"{_g(np.mean(left))} > {_g(np.mean(right))} + {_g(target)} (diff {_g(diff, '+')})"
    ratio = None
    if paper_effect:
        low, high = comparison.interval(ALPHA / 2)
        ratio = (diff / paper_effect, low / paper_effect, high / paper_effect)
    common = {"effect": diff - target, "text": text, "n": comparison.n, "test": comparison.test("two-sided")}
    if not comparison.testable:
        return Outcome(p_for=None, p_against=None, untestable=_untested([comparison], refs), ratio=ratio, **common)
    return Outcome(p_for=comparison.p_greater(target), p_against=comparison.p_less(target), ratio=ratio, **common)


def _equivalent(comparison: Comparison, refs: list[dict], centre: float, tolerance: float) -> Outcome:
    """TOST: is left - right within ``tolerance`` of ``centre``? (``within`` claims: centre 0.) For: both one-sided
    tests inside reject (p = the larger); against: the difference lies significantly outside (p = the smaller)."""
    left, right = comparison.left, comparison.right
    diff = comparison.difference
    about = f" - {centre:g}" if centre else ""
    text = f"|{_g(np.mean(left))} - {_g(np.mean(right))}{about}| = {_g(abs(diff - centre))} <= {tolerance:g}"
    common = {
        "effect": tolerance - abs(diff - centre),
        "text": text,
        "n": comparison.n,
        "test": comparison.test("TOST"),
    }
    if not comparison.testable:
        return Outcome(p_for=None, p_against=None, untestable=_untested([comparison], refs), **common)
    p_tost = max(comparison.p_greater(centre - tolerance), comparison.p_less(centre + tolerance))
    p_gap = min(comparison.p_greater(centre + tolerance), comparison.p_less(centre - tolerance))
    return Outcome(p_for=p_tost, p_against=p_gap, **common)


def _argbest(claim: dict, comparisons: list[Comparison], leads: list[float], paper_leads=None) -> Outcome:
    """``argmax``/``argmin`` on seeds: an intersection-union of one-sided tests that ``expect`` (the left of every
    comparison) beats each other cell by its ``leads`` (0 for the direction): p for = the largest; against: some
    other cell is significantly short of that, Bonferroni over the k others (p = k x the smallest)."""
    sign = 1.0 if claim["kind"] == "argmax" else -1.0
    refs = _cells_of(claim)
    expect, others = comparisons[0].left, [c.right for c in comparisons]
    k = len(others)
    ahead = [sign * c.difference for c in comparisons]  # expect's lead over each other cell, in the claim's sense
    runner = min(range(k), key=lambda i: ahead[i] - leads[i])
    lead = float(ahead[runner] - leads[runner])
    paired = sum(c.paired for c in comparisons)
    n = f"{len(expect)} vs " + ",".join(str(len(o)) for o in others) + (f" ({paired} of {k} paired)" if paired else "")
    designs = list(dict.fromkeys(c.design.why for c in comparisons))
    kinds = "paired t" if paired == k else "Welch" if paired == 0 else "paired t / Welch"
    if any(isinstance(c.left, Constant) != isinstance(c.right, Constant) for c in comparisons) and not paired:
        kinds = "Welch / one-sample t"
    test = f"IUT {kinds} two-sided ({'; '.join(designs)})"
    refused = [c.design.refused for c in comparisons if c.design.refused]
    if refused:
        test = f"none ({refused[0]})"
    target = f" by {_g(leads[runner])}" if leads[runner] else ""
    text = (
        f"runner-up {_label(refs[runner])} ({_g(np.mean(others[runner]))}, n={len(others[runner])}) vs "
        f"{_label(refs[-1])} ({_g(np.mean(expect))}, n={len(expect)}): lead {_g(lead, '+')}{target}"
    )
    ratio = None
    if paper_leads:
        ratios = [ahead[i] / paper_leads[i] for i in range(k)]
        worst = min(range(k), key=lambda i: ratios[i])
        low, high = (sign * b / paper_leads[worst] for b in comparisons[worst].interval(ALPHA / 2))
        ratio = (ratios[worst], min(low, high), max(low, high))
    if any(not c.testable for c in comparisons):
        return Outcome(lead, None, None, text, n, test, _untested(comparisons, refs), ratio)

    def p_win(i):  # H1: expect leads cell i by more than leads[i]
        c = comparisons[i]
        return c.p_greater(leads[i]) if sign > 0 else c.p_less(-leads[i])

    def p_lose(i):
        c = comparisons[i]
        return c.p_less(leads[i]) if sign > 0 else c.p_greater(-leads[i])

    wins, loses = [p_win(i) for i in range(k)], [p_lose(i) for i in range(k)]
    strongest, weakest = min(range(k), key=lambda i: loses[i]), max(range(k), key=lambda i: wins[i])
    if weakest != runner:
        text += f"; the largest p for is against {_label(refs[weakest])} ({_g(np.mean(others[weakest]))})"
    short = f" less {_g(leads[strongest])}" if leads[strongest] else ""
    against = (
        f"{_label(refs[strongest])} ({_g(np.mean(others[strongest]))}, n={len(others[strongest])}) is "
        f"{'larger' if sign > 0 else 'smaller'} than {_label(refs[-1])} ({_g(np.mean(expect))}, n={len(expect)})"
        f"{short}: p={_fmt_p(loses[strongest])} x {k} cells (Bonferroni)"
    )
    return Outcome(lead, wins[weakest], min(1.0, k * loses[strongest]), text, n, test, "", ratio, against)
