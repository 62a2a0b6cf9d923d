"""A paper's main claims as comparisons over table cells (``papers/<paper>/claims.yaml``).

Each claim says which cells it rests on and one comparison:

- ``greater``: left > right + margin (margin defaults to 0)
- ``within``:  |left - right| <= tolerance
- ``argmax`` / ``argmin``: among ``cells``, ``expect`` is (one of) the largest / smallest

A claim on a figure whose values the paper prints only as a plot says ``figure_only: true``: the reported
numbers have no value for its cells (it is ``not run`` on them), and it is evaluated on reproduced figure points.

A cell reference is a mapping with ``table``, ``row``, ``column`` and, where needed to be unique, ``group``,
``split``, ``aggregation`` or ``metric``. A claim is evaluated on any long table with those columns and a
``value`` column: the reported numbers, or a reproduced table (see :func:`from_reproduced`). A reference
that matches several rows is a malformed claim and raises. The status is one of

- ``holds`` / ``fails``: the comparison is true / false (on seeds: significantly so, see below);
- ``inconclusive``: only on seeds, when the seeds cannot tell (too close, too noisy, or a single seed);
- ``not run``: a cell the claim needs is missing or has no value.

Reported numbers vs seeds
-------------------------
A table without a ``values`` column (the paper's reported numbers) is compared deterministically, number
against number (test ``deterministic``). A table with a ``values`` column holds each cell's per-seed values
as floats joined by ";" (``value`` is their mean); an empty ``values`` counts as one seed, ``value``. On
seeds every comparison is a hypothesis test at level ``ALPHA`` = 0.05:

- ``greater``: one-sided Welch t-test of H1 mean(left) - margin > mean(right); holds if p < ALPHA, fails if
  the opposite one-sided test (mean(left) - margin < mean(right)) has p < ALPHA.
- ``within``: TOST equivalence test, two one-sided Welch tests of difference > -tolerance and
  < +tolerance; holds if both reject (p = the larger of the two), fails if a one-sided Welch test shows
  difference > tolerance or difference < -tolerance (p = the smaller of the two).
- ``argmax`` / ``argmin``: one-sided Welch test of ``expect`` against each other cell. Holds only if every
  test rejects at ALPHA: an intersection-union test, whose level is ALPHA without any correction
  (p = the largest of the k p-values). Fails if some other cell is significantly better than ``expect``,
  one-sided Welch with Bonferroni over the k other cells (p < ALPHA / k; reported p = k * p, capped at 1).
  The detail says whether ``expect`` is separable from the runner-up (the best other cell by mean).

Why these tests: reproductions run few seeds (n = 3..5), so a t-test (exact under normal seed noise) is the
only practical choice, and different configurations have different seed variances, hence Welch
(``scipy.stats.ttest_ind(equal_var=False)``) with the Welch-Satterthwaite degrees of freedom. Claims are
directional, hence one-sided tests; "equal within a tolerance" needs an equivalence test (TOST), not a
failed difference test.

Constants: a cell whose value has no seed variance (an untrained backbone evaluated in eval mode; the column
``deterministic`` of a reproduced table, set by :func:`sentemb.report.reproduced.trace`) is a constant, not one seed:
a seeded cell is compared with it by a one-sample t-test (``scipy.stats.ttest_1samp``, one-sided), and two
constants are compared as numbers.

Tolerances are in the units being compared: ``within`` takes ``tolerance`` (absolute) or ``tolerance_relative``
(a fraction of the right cell's mean: |left - right| <= tolerance_relative * |mean(right)|, the mean treated as
fixed), so a claim about time can be tested on another machine's time.

Edge cases: a comparison with fewer than 2 seeds on a side that is not a constant cannot be tested and is
``inconclusive`` with "(1 seed)" in the detail. With zero variance on both sides (identical seeds, n >= 2) the t statistic
is undefined; the difference of the means decides: p = 0 if it lies strictly on the tested side, else 1
(so an exact tie is inconclusive).

Every verdict carries ``effect``, signed so that positive supports the claim: left - right - margin
(``greater``), tolerance - |left - right| (``within``), expect - runner-up (``argmax``), runner-up - expect
(``argmin``), on means for seeds.
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

REF_KEYS = ("table", "group", "row", "column", "split", "aggregation", "metric")
KINDS = ("greater", "within", "argmax", "argmin")
ALPHA = 0.05


@dataclass(frozen=True)
class Verdict:
    """The outcome of one claim.

    ``effect`` is positive when it supports the claim (see the module docstring); ``p_value`` is the p-value
    of the test that decided the status (for ``inconclusive``: of the test for the claim), None when no test
    was run; ``n`` the number of seeds per cell ("3 vs 3"; for argmax/argmin "expect vs others, ...");
    ``test`` names the test ("deterministic" for numbers without seeds).
    """

    id: str
    status: str  # holds | fails | inconclusive | not run
    detail: str
    effect: float | None = None
    p_value: float | None = None
    n: str = ""
    test: str = ""


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
    """The value of a cell without seed variance (one value; see "Constants" above)."""


def _is_constant(row: pd.Series) -> bool:
    flag = row.get("deterministic")  # a bool, or "True"/"False" read back from a CSV; missing or NaN: seeded
    return bool(flag) if isinstance(flag, (bool, np.bool_)) else str(flag).lower() == "true"


def lookup_seeds(table: pd.DataFrame, ref: dict) -> list[float] | None:
    """The per-seed values of the one row matching ``ref`` (a :class:`Constant` for a deterministic cell); None when
    no row matches or it has no value."""
    row = _match(table, ref)
    if row is None:
        return None
    values = parse_values(row.get("values"), row["value"])
    if not values:
        return None
    return Constant(values[:1]) if _is_constant(row) else values


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


def _fmt_p(p: float | None) -> str:
    return "n/a" if p is None else f"{p:.3g}"


def _g(x: float, sign: str = "") -> str:
    """A mean or difference for the detail, without floating-point noise (3.1 - 3.1 shows as 0)."""
    return f"{round(float(x), 9) + 0.0:{sign}.4g}"


def _evaluate_reported(claim: dict, values: list[float]) -> Verdict:
    """A claim on single numbers (the paper's reported values): a plain comparison."""
    kind = claim["kind"]
    if kind == "greater":
        left, right = values
        margin = float(claim.get("margin", 0.0))
        ok, effect = left > right + margin, left - right - margin
        detail = f"{left:g} > {right:g} + {margin:g}"
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


def _one_seed(samples: list[list[float]], refs: list[dict]) -> str:
    """Names of the claim's cells with fewer than 2 seeds (constants excepted), for the detail."""
    return ", ".join(_label(ref) for ref, s in zip(refs, samples) if not _testable(s))


def _untestable_pair(claim: dict, left: list[float], right: list[float], text: str, effect: float, n: str,
                     test: str) -> Verdict:
    """A two-cell claim where a side has one seed: inconclusive, naming the cells with one seed."""
    cells = _one_seed([left, right], [claim["left"], claim["right"]])
    return Verdict(claim["id"], "inconclusive", f"inconclusive (1 seed): cells with one seed {cells}; {text}",
                   effect, None, n, test)


def _tolerance(claim: dict, right_mean: float) -> float:
    """A ``within`` claim's tolerance in the compared units (absolute, or relative to the right cell's mean)."""
    if "tolerance_relative" in claim:
        return float(claim["tolerance_relative"]) * abs(right_mean)
    return float(claim["tolerance"])


def _test_name(left: list[float], right: list[float], test: str) -> str:
    if isinstance(left, Constant) != isinstance(right, Constant):
        return test.replace("Welch", "one-sample t")
    return test


def _greater(claim: dict, left: list[float], right: list[float]) -> Verdict:
    """``greater`` on seeds: one-sided Welch test each way."""
    margin = float(claim.get("margin", 0.0))
    effect = float(np.mean(left) - np.mean(right) - margin)
    n = f"{len(left)} vs {len(right)}"
    text = f"{_g(np.mean(left))} > {_g(np.mean(right))} + {margin:g} (diff {_g(effect + margin, '+')})"
    test = _test_name(left, right, "Welch one-sided")
    if not (_testable(left) and _testable(right)):
        return _untestable_pair(claim, left, right, text, effect, n, test)
    p_for, p_against = welch_p(left, right, margin), welch_p(right, left, -margin)
    status, p = ("holds", p_for) if p_for < ALPHA else ("fails", p_against) if p_against < ALPHA \
        else ("inconclusive", p_for)
    detail = f"{text}: p={_fmt_p(p_for)} for, p={_fmt_p(p_against)} against"
    return Verdict(claim["id"], status, detail, effect, p, n, test)


def _within(claim: dict, left: list[float], right: list[float]) -> Verdict:
    """``within`` on seeds: TOST (two one-sided Welch tests) for equivalence, one-sided Welch for a gap."""
    tolerance = _tolerance(claim, float(np.mean(right)))
    diff = float(np.mean(left) - np.mean(right))
    effect = tolerance - abs(diff)
    n = f"{len(left)} vs {len(right)}"
    text = f"|{_g(np.mean(left))} - {_g(np.mean(right))}| = {_g(abs(diff))} <= {tolerance:g}"
    test = _test_name(left, right, "TOST (Welch)")
    if not (_testable(left) and _testable(right)):
        return _untestable_pair(claim, left, right, text, effect, n, test)
    p_tost = max(welch_p(left, right, -tolerance), welch_p(right, left, -tolerance))
    p_gap = min(welch_p(left, right, tolerance), welch_p(right, left, tolerance))
    status, p = ("holds", p_tost) if p_tost < ALPHA else ("fails", p_gap) if p_gap < ALPHA \
        else ("inconclusive", p_tost)
    detail = f"{text}: TOST p={_fmt_p(p_tost)}, p={_fmt_p(p_gap)} for |diff| > {tolerance:.4g}"
    return Verdict(claim["id"], status, detail, effect, p, n, test)


def _runner_up_text(expect_ref, expect, other_ref, other, lead: float, p: float | None) -> str:
    """How ``expect`` compares with the runner-up, for the detail of argmax/argmin."""
    where = (f"runner-up {_label(other_ref)} ({_g(np.mean(other))}, n={len(other)}) vs {_label(expect_ref)} "
             f"({_g(np.mean(expect))}, n={len(expect)}): lead {_g(lead, '+')}")
    if p is None:
        return f"{where}, 1 seed: not separable"  # (a constant counts as testable)
    return f"{where}, p={_fmt_p(p)}: {'separable' if p < ALPHA else 'not separable'}"


def _argbest(claim: dict, samples: list[list[float]]) -> Verdict:
    """``argmax``/``argmin`` on seeds: intersection-union of one-sided Welch tests, Bonferroni to fail."""
    sign = 1.0 if claim["kind"] == "argmax" else -1.0
    refs = _cells_of(claim)
    *others, expect = samples
    k = len(others)

    def better(a, b):  # p of H1: a is better than b in the claim's direction
        return welch_p(a, b) if sign > 0 else welch_p(b, a)

    testable = [_testable(expect) and _testable(o) for o in others]
    p_win = [better(expect, o) if t else None for o, t in zip(others, testable)]
    p_lose = [better(o, expect) if t else None for o, t in zip(others, testable)]
    runner = max(range(k), key=lambda i: sign * np.mean(others[i]))
    lead = float(sign * (np.mean(expect) - np.mean(others[runner])))
    n = f"{len(expect)} vs " + ",".join(str(len(o)) for o in others)
    test = "IUT Welch one-sided"
    runner_text = _runner_up_text(refs[-1], expect, refs[runner], others[runner], lead, p_win[runner])

    beaten = [i for i in range(k) if p_lose[i] is not None and p_lose[i] < ALPHA / k]
    if beaten:
        worst = min(beaten, key=lambda i: p_lose[i])
        p = min(1.0, k * p_lose[worst])
        detail = (f"{_label(refs[worst])} ({_g(np.mean(others[worst]))}, n={len(others[worst])}) is significantly "
                  f"{'larger' if sign > 0 else 'smaller'} than {_label(refs[-1])} ({_g(np.mean(expect))}, "
                  f"n={len(expect)}): p={_fmt_p(p_lose[worst])} < {ALPHA:g}/{k}")
        if worst != runner:
            detail += f"; {runner_text}"
        return Verdict(claim["id"], "fails", detail, lead, p, n, test)
    if not all(testable):
        detail = f"inconclusive (1 seed): cells with one seed {_one_seed(samples, refs)}; {runner_text}"
        return Verdict(claim["id"], "inconclusive", detail, lead, None, n, test)
    worst = max(range(k), key=lambda i: p_win[i])
    p = p_win[worst]
    detail = runner_text
    if worst != runner:
        detail += f"; largest p={_fmt_p(p)} against {_label(refs[worst])} ({_g(np.mean(others[worst]))})"
    return Verdict(claim["id"], "holds" if p < ALPHA else "inconclusive", detail, lead, p, n, test)


def _evaluate_seeds(claim: dict, samples: list[list[float]]) -> Verdict:
    """A claim on per-seed values: the hypothesis test of its kind (see the module docstring)."""
    if claim["kind"] == "greater":
        return _greater(claim, *samples)
    if claim["kind"] == "within":
        return _within(claim, *samples)
    return _argbest(claim, samples)


def evaluate(claim: dict, table: pd.DataFrame) -> Verdict:
    """The verdict of one claim on ``table``: on seeds if it has a ``values`` column, else on the numbers."""
    refs = _cells_of(claim)
    seeds = "values" in table.columns
    found = [lookup_seeds(table, ref) if seeds else lookup(table, ref) for ref in refs]
    if any(v is None for v in found):
        missing = [ref for ref, v in zip(refs, found) if v is None]
        return Verdict(claim["id"], "not run", f"no value for {missing}")
    return _evaluate_seeds(claim, found) if seeds else _evaluate_reported(claim, found)


def evaluate_all(paper: str, table: pd.DataFrame) -> pd.DataFrame:
    """One row per claim of ``paper``: paper, claim, text, source, status, detail, effect, p_value, n, test."""
    rows = []
    for claim in load_claims(paper):
        verdict = evaluate(claim, table)
        rows.append({"paper": paper, "claim": claim["id"], "text": claim["text"], "source": claim.get("source", ""),
                     "status": verdict.status, "detail": verdict.detail, "effect": verdict.effect,
                     "p_value": verdict.p_value, "n": verdict.n, "test": verdict.test})
    return pd.DataFrame(rows)


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
    out["p_value"] = [_fmt_p(p) if pd.notna(p) else "" for p in out["p_value"]]
    return out


def markdown_rows(verdicts: pd.DataFrame, skip_not_run: bool = False) -> list[str]:
    """The verdicts as a Markdown table for a README (claim | status | effect | p | n | test)."""
    lines = ["| claim | status | effect | p | n | test |", "|---|---|---|---|---|---|"]
    for _, c in verdicts.iterrows():
        if skip_not_run and c["status"] == "not run":
            continue
        p = f"{c['p_value']:.3g}" if pd.notna(c["p_value"]) else "–"
        effect = f"{c['effect']:+.2f}" if pd.notna(c["effect"]) else "–"
        lines.append(f"| {c['claim']} | {c['status']} | {effect} | {p} | {c['n']} | {c['test']} |")
    return lines
