"""A paper's main claims as comparisons over table cells (``papers/<paper>/claims.yaml``), each given two verdicts.

Claims: ``greater`` (left > right, with the paper's stated ``margin``), ``within`` (|left - right| <= ``tolerance``
    or ``tolerance_relative``), ``argmax`` / ``argmin`` (``expect`` is among the largest / smallest of ``cells``);
    cells by ``table``, ``row``, ``column`` (and ``group``, ``split``, ``aggregation``, ``metric`` to be unique; a
    reference matching several rows raises); ``figure_only: true`` for numbers the paper shows only as a plot.
Verdicts: ``direction_status`` (also ``status``: the effect in the paper's direction, margin 0) and ``size_status``
    (as large as the paper's margin, else its own reported effect; with ``size_tolerance``, TOST-equivalent to it),
    each ``holds`` / ``fails`` / ``inconclusive`` / ``not run``, with effect, p and n.
Tests: without a ``values`` column, number against number; with per-seed values, one-sided at ``ALPHA`` = 0.05: a
    paired t-test (:mod:`sentemb.report.pairing`), else Welch, or one-sample against a deterministic cell; ``within``
    by TOST, ``argmax`` / ``argmin`` by an intersection-union test, Bonferroni over the k others. Fewer than 2 seeds
    on a side: ``inconclusive``; zero variance: the sign of the difference decides (p = 0 or 1).
Relations: :mod:`sentemb.report.pairing` (which design applies).
The rules in full: docs/derivations.md#sentembreportclaimspy
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from scipy import stats

from sentemb import settings
from sentemb.errors import ConfigError
from sentemb.report.pairing import Design, RecordLookup, design, stored_record

REF_KEYS = ("table", "group", "row", "column", "split", "aggregation", "metric")
KINDS = ("greater", "within", "argmax", "argmin")
ALPHA = 0.05
STATUSES = ("holds", "fails", "inconclusive", "not run")
SIZE_STATUSES = STATUSES + ("no size",)
#: The columns of ``claims.csv`` (documented in ``results/schema.yaml``).
COLUMNS = [
    "paper",
    "claim",
    "text",
    "source",
    "status",
    "detail",
    "effect",
    "p_value",
    "n",
    "test",
    "direction_status",
    "size_status",
    "size_target",
    "size_effect",
    "size_p_value",
    "size_detail",
]


@dataclass(frozen=True)
class Verdict:
    """The outcome of one claim: the direction verdict (``status``, ...) and the size verdict (``size_*``).

    ``effect`` is positive when it supports the claim; ``p_value`` is the p of the test that decided the status (for
    ``inconclusive``: of the test for the claim), None when none ran; ``n`` the seeds per cell ("3 vs 3"; paired: "3
    pairs"); ``test`` the test and its design. ``size_target`` is the effect the size verdict asks for.
    """

    id: str
    status: str  # holds | fails | inconclusive | not run
    detail: str
    effect: float | None = None
    p_value: float | None = None
    n: str = ""
    test: str = ""
    size_status: str = "no size"
    size_target: float | None = None
    size_effect: float | None = None
    size_p_value: float | None = None
    size_detail: str = ""

    @property
    def direction_status(self) -> str:
        return self.status


def claims_path(paper: str) -> Path:
    return settings.REPO_ROOT / "papers" / paper / "claims.yaml"


def load_claims(paper: str) -> list[dict]:
    path = claims_path(paper)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("paper") != paper or not isinstance(data.get("claims"), list):
        raise ConfigError(f"{path}: expected 'paper: {paper}' and a 'claims:' list")
    for claim in data["claims"]:
        if claim.get("kind") not in KINDS or not claim.get("id") or not claim.get("text"):
            raise ConfigError(f"{path}: claim {claim.get('id')!r} needs id, text and kind in {KINDS}")
        if not isinstance(claim.get("figure_only", False), bool):
            raise ConfigError(f"{path}: claim {claim['id']!r}: figure_only must be true or false")
        if claim["kind"] == "within" and ("tolerance" in claim) == ("tolerance_relative" in claim):
            raise ConfigError(f"{path}: claim {claim['id']!r} (within) needs one of tolerance, tolerance_relative")
        for key in ("margin", "size_tolerance"):
            if key in claim and (not isinstance(claim[key], (int, float)) or claim[key] < 0):
                raise ConfigError(f"{path}: claim {claim['id']!r}: {key} must be a number >= 0, got {claim[key]!r}")
    return data["claims"]


def _cells_of(claim: dict) -> list[dict]:
    if claim["kind"] in ("argmax", "argmin"):  # the expected cell is compared with the others, not with itself
        return [c for c in claim["cells"] if c != claim["expect"]] + [claim["expect"]]
    return [claim["left"], claim["right"]]


def _label(ref: dict) -> str:
    """A short readable name of a cell: its group, row and column."""
    return "'" + " / ".join(str(ref[k]) for k in ("group", "row", "column") if ref.get(k)) + "'"


def _match(table: pd.DataFrame, ref: dict) -> pd.Series | None:
    """The one row matching ``ref``; None when none matches; raises when several do."""
    unknown = set(ref) - set(REF_KEYS)
    if unknown:
        raise ConfigError(f"cell reference {ref} has unknown keys {sorted(unknown)}")
    mask = pd.Series(True, index=table.index)
    for key, wanted in ref.items():
        mask &= table[key].fillna("").astype(str) == str(wanted)
    hits = table[mask]
    if len(hits) > 1:
        raise ConfigError(f"cell reference {ref} matches {len(hits)} rows; add group/split/aggregation/metric")
    return None if hits.empty else hits.iloc[0]


def lookup(table: pd.DataFrame, ref: dict) -> float | None:
    """The value of the one row matching ``ref``; None when no row matches or its value is empty."""
    row = _match(table, ref)
    if row is None or pd.isna(row["value"]):
        return None
    return float(row["value"])


def parse_values(values, value) -> list[float]:
    """Per-seed values from a ``values`` cell ("83.1;83.4;83.2"); empty/NaN means one seed, ``value``."""
    if values is None or (isinstance(values, float) and math.isnan(values)) or str(values).strip() == "":
        return [] if pd.isna(value) else [float(value)]
    return [float(v) for v in str(values).split(";") if v.strip() != ""]


class Constant(list):
    """The value of a cell without seed variance (one value; see "Tests" above)."""


class Seeds(list):
    """A cell's per-seed values with the run ids behind them (``run_ids``; empty when unknown) and their profile."""

    def __init__(self, values, run_ids=(), profile: str = "") -> None:
        super().__init__(values)
        self.run_ids, self.profile = list(run_ids), profile


def _is_constant(row: pd.Series) -> bool:
    flag = row.get("deterministic")  # a bool, or "True"/"False" read back from a CSV; missing or NaN: seeded
    return bool(flag) if isinstance(flag, (bool, np.bool_)) else str(flag).lower() == "true"


def _text(row: pd.Series, key: str) -> str:
    value = row.get(key)
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def lookup_seeds(table: pd.DataFrame, ref: dict) -> list[float] | None:
    """The per-seed values of the one row matching ``ref`` (a :class:`Constant` for a deterministic cell, else
    :class:`Seeds` carrying their run ids); None when no row matches or it has no value."""
    row = _match(table, ref)
    if row is None:
        return None
    values = parse_values(row.get("values"), row["value"])
    if not values:
        return None
    if _is_constant(row):
        return Constant(values[:1])
    run_ids = [r for r in _text(row, "run_ids").split(";") if r]
    return Seeds(values, run_ids if len(run_ids) == len(values) else (), _text(row, "profile"))


def _testable(sample: list[float]) -> bool:
    return isinstance(sample, Constant) or len(sample) >= 2


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


class Comparison:
    """Two cells compared on one design: ``p_greater(s)`` / ``p_less(s)`` are the one-sided p-values of
    H1: left - right > s / < s (means; on a paired design, the matched differences)."""

    def __init__(self, left: list[float], right: list[float], lookup: RecordLookup = stored_record) -> None:
        self.left, self.right = left, right
        constant = isinstance(left, Constant) or isinstance(right, Constant)
        if constant or not isinstance(left, Seeds) or not isinstance(right, Seeds):
            why = (
                "one-sample: a cell without seed variance"
                if constant and not (isinstance(left, Constant) and isinstance(right, Constant))
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
    def testable(self) -> bool:
        return len(self.differences) >= 2 if self.paired else _testable(self.left) and _testable(self.right)

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

    @property
    def n(self) -> str:
        if self.paired:
            return f"{len(self.differences)} pairs"
        return f"{len(self.left)} vs {len(self.right)}"

    def test(self, what: str) -> str:
        """The test's name with its design and why, e.g. "paired t one-sided (paired: the same init runs)"."""
        if self.paired:
            name = f"paired t {what}"
        elif isinstance(self.left, Constant) != isinstance(self.right, Constant):
            name = f"one-sample t {what}"
        else:
            name = f"Welch {what}"
        extra = f"; {self.design.unmatched}" if self.design.unmatched else ""
        return f"{name} ({self.design.why}{extra})"


def _fmt_p(p: float | None) -> str:
    return "n/a" if p is None else f"{p:.3g}"


def _g(x: float, sign: str = "") -> str:
    """A mean or difference for the detail, without floating-point noise (3.1 - 3.1 shows as 0)."""
    return f"{round(float(x), 9) + 0.0:{sign}.4g}"


def _tolerance(claim: dict, right_mean: float) -> float:
    """A ``within`` claim's tolerance in the compared units (absolute, or relative to the right cell's mean)."""
    if "tolerance_relative" in claim:
        return float(claim["tolerance_relative"]) * abs(right_mean)
    return float(claim["tolerance"])


# -- the paper's own numbers ---------------------------------------------------------------------------------------


def _reported_effects(claim: dict, values: list[float]) -> list[float]:
    """The paper's own effect(s) on its numbers, in the claim's direction: left - right (greater, within), or
    expect's lead over each other cell (argmax/argmin)."""
    if claim["kind"] in ("greater", "within"):
        return [values[0] - values[1]]
    *others, expected = values
    sign = 1.0 if claim["kind"] == "argmax" else -1.0
    return [sign * (expected - other) for other in others]


def _evaluate_reported(claim: dict, values: list[float], margin: float | None = None) -> Verdict:
    """A claim on single numbers (the paper's reported values): a plain comparison; with ``margin`` (the size), does
    left - right reach it."""
    kind = claim["kind"]
    if kind == "greater":
        left, right = values
        ok = left > right if margin is None else left - right >= margin
        margin = margin or 0.0
        effect = left - right - margin
        detail = f"{left:g} > {right:g} + {margin:g}" if ok or margin == 0 else f"{left:g} - {right:g} < {margin:g}"
    elif kind == "within":
        left, right = values
        tolerance = _tolerance(claim, right)
        ok, effect = abs(left - right) <= tolerance, tolerance - abs(left - right)
        detail = f"|{left:g} - {right:g}| = {abs(left - right):.3g} <= {tolerance:g}"
    else:
        *others, expected = values
        best = max(others) if kind == "argmax" else min(others)
        ok = expected >= best if kind == "argmax" else expected <= best
        effect = expected - best if kind == "argmax" else best - expected
        detail = f"expected {expected:g}, {'max' if kind == 'argmax' else 'min'} of the others {best:g}"
    return Verdict(claim["id"], "holds" if ok else "fails", detail, effect, None, "", "deterministic")


# -- tests on seeds ------------------------------------------------------------------------------------------------


def _one_seed(samples: list[list[float]], refs: list[dict]) -> str:
    """Names of the claim's cells with fewer than 2 seeds (constants excepted), for the detail."""
    return ", ".join(_label(ref) for ref, s in zip(refs, samples) if not _testable(s))


def _untestable(refs: list[dict], comparisons: list[Comparison], samples: list[list[float]]) -> str:
    if any(c.paired for c in comparisons):
        counts = ", ".join(f"{len(c.differences)}" for c in comparisons if c.paired)
        return f"inconclusive (fewer than 2 matched pairs: {counts})"
    return f"inconclusive (1 seed): cells with one seed {_one_seed(samples, refs)}"


def _greater(claim: dict, comparison: Comparison, margin: float) -> Verdict:
    """``greater`` on seeds: a one-sided test each way, H1 left - right > margin / < margin."""
    left, right = comparison.left, comparison.right
    diff = comparison.difference
    effect = diff - margin
    text = f"{_g(np.mean(left))} > {_g(np.mean(right))} + {margin:g} (diff {_g(diff, '+')})"
    test = comparison.test("one-sided")
    if not comparison.testable:
        detail = f"{_untestable([claim['left'], claim['right']], [comparison], [left, right])}; {text}"
        return Verdict(claim["id"], "inconclusive", detail, effect, None, comparison.n, test)
    p_for, p_against = comparison.p_greater(margin), comparison.p_less(margin)
    status, p = (
        ("holds", p_for) if p_for < ALPHA else ("fails", p_against) if p_against < ALPHA else ("inconclusive", p_for)
    )
    detail = f"{text}: p={_fmt_p(p_for)} for, p={_fmt_p(p_against)} against"
    return Verdict(claim["id"], status, detail, effect, p, comparison.n, test)


def _equivalent(claim: dict, comparison: Comparison, centre: float, tolerance: float) -> Verdict:
    """TOST: is left - right within ``tolerance`` of ``centre``? (``within`` claims: centre 0.)"""
    left, right = comparison.left, comparison.right
    diff = comparison.difference
    effect = tolerance - abs(diff - centre)
    about = f" - {centre:g}" if centre else ""
    text = f"|{_g(np.mean(left))} - {_g(np.mean(right))}{about}| = {_g(abs(diff - centre))} <= {tolerance:g}"
    test = comparison.test("TOST")
    if not comparison.testable:
        detail = f"{_untestable([claim['left'], claim['right']], [comparison], [left, right])}; {text}"
        return Verdict(claim["id"], "inconclusive", detail, effect, None, comparison.n, test)
    p_tost = max(comparison.p_greater(centre - tolerance), comparison.p_less(centre + tolerance))
    p_gap = min(comparison.p_greater(centre + tolerance), comparison.p_less(centre - tolerance))
    status, p = ("holds", p_tost) if p_tost < ALPHA else ("fails", p_gap) if p_gap < ALPHA else ("inconclusive", p_tost)
    detail = f"{text}: TOST p={_fmt_p(p_tost)}, p={_fmt_p(p_gap)} for |diff{about}| > {tolerance:.4g}"
    return Verdict(claim["id"], status, detail, effect, p, comparison.n, test)


def _runner_up_text(expect_ref, expect, other_ref, other, lead: float, p: float | None) -> str:
    """How ``expect`` compares with the runner-up, for the detail of argmax/argmin."""
    where = (
        f"runner-up {_label(other_ref)} ({_g(np.mean(other))}, n={len(other)}) vs {_label(expect_ref)} "
        f"({_g(np.mean(expect))}, n={len(expect)}): lead {_g(lead, '+')}"
    )
    if p is None:
        return f"{where}, 1 seed: not separable"  # (a constant counts as testable)
    return f"{where}, p={_fmt_p(p)}: {'separable' if p < ALPHA else 'not separable'}"


def _argbest(claim: dict, comparisons: list[Comparison], leads: list[float]) -> Verdict:
    """``argmax``/``argmin`` on seeds: intersection-union of one-sided tests that ``expect`` (the left of every
    comparison) beats each other cell by its ``leads`` (0 for the direction), Bonferroni for some other cell being
    significantly short of that."""
    sign = 1.0 if claim["kind"] == "argmax" else -1.0
    refs = _cells_of(claim)
    expect, others = comparisons[0].left, [c.right for c in comparisons]
    samples = [*others, expect]
    k = len(others)
    ahead = [sign * c.difference for c in comparisons]  # expect's lead over each other cell, in the claim's sense

    def p_win(i):  # H1: expect leads cell i by more than leads[i]
        c = comparisons[i]
        return c.p_greater(leads[i]) if sign > 0 else c.p_less(-leads[i])

    def p_lose(i):
        c = comparisons[i]
        return c.p_less(leads[i]) if sign > 0 else c.p_greater(-leads[i])

    testable = [c.testable for c in comparisons]
    wins = [p_win(i) if testable[i] else None for i in range(k)]
    loses = [p_lose(i) if testable[i] else None for i in range(k)]
    runner = min(range(k), key=lambda i: ahead[i] - leads[i])
    lead = float(ahead[runner] - leads[runner])
    paired = sum(c.paired for c in comparisons)
    n = f"{len(expect)} vs " + ",".join(str(len(o)) for o in others) + (f" ({paired} of {k} paired)" if paired else "")
    designs = list(dict.fromkeys(c.design.why for c in comparisons))
    kinds = "paired t" if paired == k else "Welch" if paired == 0 else "paired t / Welch"
    if any(isinstance(c.left, Constant) != isinstance(c.right, Constant) for c in comparisons) and not paired:
        kinds = "Welch / one-sample t"
    test = f"IUT {kinds} one-sided ({'; '.join(designs)})"
    target = f" by {_g(leads[runner])}" if leads[runner] else ""
    runner_text = _runner_up_text(refs[-1], expect, refs[runner], others[runner], lead, wins[runner]) + target

    beaten = [i for i in range(k) if loses[i] is not None and loses[i] < ALPHA / k]
    if beaten:
        worst = min(beaten, key=lambda i: loses[i])
        p = min(1.0, k * loses[worst])
        short = f" by {_g(leads[worst])}" if leads[worst] else ""
        detail = (
            f"{_label(refs[worst])} ({_g(np.mean(others[worst]))}, n={len(others[worst])}) is significantly "
            f"{'larger' if sign > 0 else 'smaller'} than {_label(refs[-1])} ({_g(np.mean(expect))}, "
            f"n={len(expect)}){' less' + short if short else ''}: p={_fmt_p(loses[worst])} < {ALPHA:g}/{k}"
        )
        if worst != runner:
            detail += f"; {runner_text}"
        return Verdict(claim["id"], "fails", detail, lead, p, n, test)
    if not all(testable):
        untestable = [c for c, t in zip(comparisons, testable) if not t]
        detail = f"{_untestable(refs, untestable, samples)}; {runner_text}"
        return Verdict(claim["id"], "inconclusive", detail, lead, None, n, test)
    worst = max(range(k), key=lambda i: wins[i])
    p = wins[worst]
    detail = runner_text
    if worst != runner:
        detail += f"; largest p={_fmt_p(p)} against {_label(refs[worst])} ({_g(np.mean(others[worst]))})"
    return Verdict(claim["id"], "holds" if p < ALPHA else "inconclusive", detail, lead, p, n, test)


def _comparisons(claim: dict, samples: list[list[float]], lookup_record: RecordLookup) -> list[Comparison]:
    """The claim's cells compared, each on its design: left with right, or ``expect`` with each other cell."""
    if claim["kind"] in ("argmax", "argmin"):
        *others, expect = samples
        return [Comparison(expect, other, lookup_record) for other in others]
    return [Comparison(*samples, lookup_record)]


def _on_seeds(
    claim: dict, comparisons: list[Comparison], targets: list[float], size_tolerance: float | None = None
) -> Verdict:
    """The test of ``claim``'s kind asking for the effect(s) ``targets`` (zeros: the direction)."""
    kind = claim["kind"]
    if kind == "greater" and size_tolerance is not None:
        return _equivalent(claim, comparisons[0], targets[0], size_tolerance)
    if kind == "greater":
        return _greater(claim, comparisons[0], targets[0])
    if kind == "within":
        return _equivalent(claim, comparisons[0], 0.0, _tolerance(claim, float(np.mean(comparisons[0].right))))
    return _argbest(claim, comparisons, targets)


# -- both verdicts -------------------------------------------------------------------------------------------------


def _size_targets(claim: dict, reported: list[float] | None) -> tuple[list[float] | None, str]:
    """The effect(s) the size verdict asks for and where they come from; None with the reason when there is none."""
    if claim["kind"] == "within":
        return None, "an equivalence claim: its tolerance is its size"
    if claim["kind"] == "greater" and claim.get("margin"):
        return [float(claim["margin"])], f"the paper's stated margin {float(claim['margin']):g}"
    if reported is None:
        return None, "the paper prints no number for a cell of this claim"
    effects = _reported_effects(claim, reported)
    if min(effects) <= 0:
        return None, "the paper's own numbers show no effect"
    source = "the paper's own effect" if len(effects) == 1 else "the paper's own lead over each cell"
    return effects, f"{source} ({', '.join(_g(e, '+') for e in effects)})"


def _reported_values(claim: dict, reported: pd.DataFrame | None) -> list[float] | None:
    if reported is None or claim.get("figure_only"):
        return None
    try:
        values = [lookup(reported, ref) for ref in _cells_of(claim)]
    except ConfigError:
        return None
    return None if any(v is None for v in values) else values


def evaluate(
    claim: dict, table: pd.DataFrame, reported: pd.DataFrame | None = None, lookup_record: RecordLookup = stored_record
) -> Verdict:
    """Both verdicts of one claim on ``table`` (on seeds if it has a ``values`` column, else on the numbers);
    ``reported``: the paper's numbers, for the size the paper's own effect sets (default: ``table`` itself when it
    has no seeds)."""
    refs = _cells_of(claim)
    seeds = "values" in table.columns
    found = [lookup_seeds(table, ref) if seeds else lookup(table, ref) for ref in refs]
    if any(v is None for v in found):
        missing = [ref for ref, v in zip(refs, found) if v is None]
        return Verdict(
            claim["id"], "not run", f"no value for {missing}", size_status="not run", size_detail="a cell is missing"
        )
    paper = _reported_values(claim, reported if reported is not None or seeds else table)
    targets, source = _size_targets(claim, paper)
    if not seeds:
        direction = _evaluate_reported(claim, found)
        if targets is None:
            size = None
        elif claim["kind"] == "greater":
            size = _evaluate_reported(claim, found, targets[0])
        else:
            own = _reported_effects(claim, found)
            ok = all(e >= t for e, t in zip(own, targets))
            size = Verdict(
                claim["id"],
                "holds" if ok else "fails",
                f"leads {', '.join(_g(e, '+') for e in own)}",
                min(e - t for e, t in zip(own, targets)),
            )
    else:
        comparisons = _comparisons(claim, found, lookup_record)  # one design for both verdicts
        direction = _on_seeds(claim, comparisons, [0.0] * len(comparisons))
        size = None if targets is None else _on_seeds(claim, comparisons, targets, claim.get("size_tolerance"))
    if size is None:
        return Verdict(**{**direction.__dict__, "size_status": "no size", "size_detail": source})
    target = targets[0] if len(targets) == 1 else None
    return Verdict(
        **{
            **direction.__dict__,
            "size_status": size.status,
            "size_target": target,
            "size_effect": size.effect,
            "size_p_value": size.p_value,
            "size_detail": f"{source}: {size.detail}",
        }
    )


def evaluate_all(
    paper: str, table: pd.DataFrame, reported: pd.DataFrame | None = None, lookup_record: RecordLookup = stored_record
) -> pd.DataFrame:
    """One row per claim of ``paper`` (:data:`COLUMNS`). ``reported`` defaults to the paper's numbers
    (``papers/<paper>/reported``) when ``table`` holds seeds."""
    if reported is None and "values" in table.columns:
        from sentemb.report.reported import load_all_reported

        reported = load_all_reported(paper)
    rows = []
    for claim in load_claims(paper):
        v = evaluate(claim, table, reported, lookup_record)
        rows.append(
            {
                "paper": paper,
                "claim": claim["id"],
                "text": claim["text"],
                "source": claim.get("source", ""),
                "status": v.status,
                "detail": v.detail,
                "effect": v.effect,
                "p_value": v.p_value,
                "n": v.n,
                "test": v.test,
                "direction_status": v.status,
                "size_status": v.size_status,
                "size_target": v.size_target,
                "size_effect": v.size_effect,
                "size_p_value": v.size_p_value,
                "size_detail": v.size_detail,
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def from_reproduced(reproduced: pd.DataFrame) -> pd.DataFrame:
    """A reproduced table (``report.reproduced.join``) in the reported keys, so claims can be evaluated on it.

    ``reproduced`` (the mean over seeds) becomes ``value``; every other column is kept, so a ``values``
    column (per-seed values joined by ";") makes :func:`evaluate` test the claims over seeds."""
    out = reproduced.rename(columns={"reproduced": "value"}).copy()
    out["row"] = out["reported_row"]
    out["group"] = out["reported_group"]
    if "metric" not in out:
        out["metric"] = ""
    return out[out["row"].fillna("") != ""]


def for_csv(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The verdicts as written to ``claims.csv``: p-values in 3 significant digits (``%.4f`` showed p = 2.31e-05 as
    0.0000)."""
    out = verdicts.copy()
    for column in ("p_value", "size_p_value"):
        if column in out:
            out[column] = [_fmt_p(p) if pd.notna(p) else "" for p in out[column]]
    return out


def markdown_rows(verdicts: pd.DataFrame, skip_not_run: bool = False) -> list[str]:
    """The verdicts as a Markdown table for a README: the direction verdict (effect, p, n, test) and the size verdict
    (the effect it asks for, its status and p)."""
    lines = [
        "| claim | direction | effect | p | n | test | size (paper's effect) | size p |",
        "|---|---|---|---|---|---|---|---|",
    ]

    def number(x, fmt):
        return format(float(x), fmt) if pd.notna(x) and x != "" else "–"

    for _, c in verdicts.iterrows():
        if skip_not_run and c["status"] == "not run":
            continue
        size = c.get("size_status", "no size")
        if pd.notna(c.get("size_target")) and c.get("size_target") != "":
            size = f"{size} ({number(c['size_target'], '+.2f')})"
        lines.append(
            f"| {c['claim']} | {c['status']} | {number(c['effect'], '+.2f')} | {number(c['p_value'], '.3g')} "
            f"| {c['n']} | {c['test']} | {size} | {number(c.get('size_p_value'), '.3g')} |"
        )
    return lines
