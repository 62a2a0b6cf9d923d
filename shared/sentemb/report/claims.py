"""A paper's main claims as comparisons over table cells (``papers/<paper>/claims.yaml``), each given two verdicts.

Claims: ``greater`` (left > right; ``margin``: the size the paper states, when it states one), ``within``
    (|left - right| <= ``tolerance`` or ``tolerance_relative``), ``argmax`` / ``argmin`` (``expect`` is among the
    largest / smallest of ``cells``); cells by ``table``, ``row``, ``column`` (and ``group``, ``split``,
    ``aggregation``, ``metric`` to be unique; a reference matching several rows raises); ``figure_only: true`` for
    numbers the paper shows only as a plot.
Verdicts: ``direction_status`` (also ``status``: is the effect there, in the paper's direction) and ``size_status``
    (only where the paper states a margin in words that fix a number, ``margin`` with its sentence in
    ``margin_quote``: is the effect beyond it), each ``holds`` / ``fails`` / ``inconclusive`` / ``same runs`` (the
    claim's cells are another claim's runs: not separable on this profile) / ``not run``, with effect, raw and
    adjusted p, and n; ``no size`` where the paper states no margin. The ratio of the reproduced effect to the
    paper's own (on its reported numbers) and its 95 % interval are reported for every claim that has both,
    descriptively: no verdict is read from them.
Tests: without a ``values`` column, number against number; with per-seed values, two-sided at ``ALPHA`` = 0.05 (one
    side each way at 0.025, the sign giving the verdict) on a design read from the run records
    (:mod:`sentemb.report.comparison`, :mod:`sentemb.report.pairing`); ``within`` by TOST, ``argmax`` / ``argmin`` by
    an intersection-union test, Bonferroni over the k others for *fails*. Each paper's tested verdicts (direction and
    size) are one family on a profile, Holm-corrected (:mod:`sentemb.report.multiplicity`). No test
    (``inconclusive``, no p) with fewer than 2 seeds on a side, for two fixed numbers, and when the values are not
    independent replicates (a cell's values must come from different seeds).
The rules in full: docs/reference.md#claims-the-rules and docs/derivations.md#sentembreportclaimspy
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from sentemb.errors import ConfigError
from sentemb.report.claim_cells import (
    _cells_of,
    _label,
    cell_identity,
    load_claims,
    lookup,
    lookup_seeds,
    paper_cell_identity,
)
from sentemb.report.claim_tests import Outcome, _argbest, _equivalent, _g, _greater
from sentemb.report.comparison import Comparison, Constant, Seeds, paired_p, welch_p
from sentemb.report.multiplicity import ALPHA, Decision, decide, decide_family, two_sided
from sentemb.report.pairing import RecordLookup, stored_record

__all__ = ["ALPHA", "Comparison", "Constant", "Seeds", "paired_p", "welch_p"]

STATUSES = ("holds", "fails", "inconclusive", "same runs", "not run")
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
    "p_adjusted",
    "correction",
    "n",
    "test",
    "direction_status",
    "size_status",
    "size_target",
    "size_effect",
    "size_p_value",
    "size_p_adjusted",
    "size_ratio",
    "size_ratio_low",
    "size_ratio_high",
    "size_detail",
    "same_runs_as",
    "evidence",
]


@dataclass(frozen=True)
class Verdict:
    """The outcome of one claim: the direction verdict (``status``, ...) and the size verdict (``size_*``).

    ``effect`` is positive when it supports the claim; ``p_value`` is the raw two-sided p, ``p_adjusted`` the same
    after the paper's correction (``correction``), None when none ran; ``n`` the seeds per cell ("3 vs 3"; paired:
    "3 pairs"); ``test`` the test and its design. ``size_target`` is the margin the paper states (the size verdict's
    bar), ``size_ratio`` the reproduced effect over the paper's own with its 95 % interval (descriptive).
    ``evidence``: each cell's label, values and run ids. ``direction`` and ``size`` keep the raw outcomes for the
    paper's correction.
    """

    id: str
    status: str  # holds | fails | inconclusive | same runs | not run
    detail: str
    effect: float | None = None
    p_value: float | None = None
    n: str = ""
    test: str = ""
    p_adjusted: float | None = None
    correction: str = ""
    size_status: str = "no size"
    size_target: float | None = None
    size_effect: float | None = None
    size_p_value: float | None = None
    size_p_adjusted: float | None = None
    size_ratio: float | None = None
    size_ratio_low: float | None = None
    size_ratio_high: float | None = None
    size_detail: str = ""
    same_runs_as: str = ""
    evidence: tuple = ()
    direction: Outcome | None = field(default=None, repr=False, compare=False)
    size: Outcome | None = field(default=None, repr=False, compare=False)
    size_source: str = field(default="", repr=False, compare=False)

    @property
    def direction_status(self) -> str:
        return self.status


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


# -- tests on seeds (each an Outcome: no status before the paper's correction) ------------------------------------


def _comparisons(claim: dict, samples: list[list[float]], lookup_record: RecordLookup) -> list[Comparison]:
    """The claim's cells compared, each on its design: left with right, or ``expect`` with each other cell."""
    if claim["kind"] in ("argmax", "argmin"):
        *others, expect = samples
        return [Comparison(expect, other, lookup_record) for other in others]
    return [Comparison(*samples, lookup_record)]


def _direction(claim: dict, comparisons: list[Comparison], effects: list[float] | None = None) -> Outcome:
    """The direction test; with the paper's own ``effects``, the descriptive ratio of the reproduced effect to it."""
    refs = _cells_of(claim)
    if claim["kind"] == "greater":
        return _greater(comparisons[0], refs, 0.0, effects[0] if effects else None)
    if claim["kind"] == "within":
        return _equivalent(comparisons[0], refs, 0.0, _tolerance(claim, float(np.mean(comparisons[0].right))))
    return _argbest(claim, comparisons, [0.0] * len(comparisons), effects)


def _size(claim: dict, comparisons: list[Comparison], margin: float, effects: list[float] | None) -> Outcome:
    """The size test: beyond the paper's stated ``margin`` (each other cell's, for argmax/argmin)."""
    refs = _cells_of(claim)
    if claim["kind"] == "greater":
        return _greater(comparisons[0], refs, margin, effects[0] if effects else None)
    return _argbest(claim, comparisons, [margin] * len(comparisons), effects)


# -- both verdicts -------------------------------------------------------------------------------------------------


def _paper_effects(claim: dict, reported: list[float] | None) -> list[float] | None:
    """The paper's own effect(s) on its reported numbers, in the claim's direction, for the descriptive ratio; None
    when it prints no number for a cell, for a ``within`` claim, or when its numbers show no effect that way."""
    if claim["kind"] == "within" or reported is None:
        return None
    effects = _reported_effects(claim, reported)
    return effects if min(effects) > 0 else None


def _margin(claim: dict) -> tuple[float | None, str]:
    """The size verdict's bar: the margin the paper states (``margin``, its sentence in ``margin_quote``); None with
    the reason when it states none."""
    if claim["kind"] == "within":
        return None, "an equivalence claim: its tolerance is its size"
    if "margin" not in claim:
        return None, "the paper states no margin: its effect is compared descriptively (ratio)"
    margin, quote = float(claim["margin"]), str(claim.get("margin_quote", "")).strip()
    if margin <= 0 or not quote:
        raise ConfigError(f"claim {claim['id']!r}: a margin must be > 0 and quote the paper's sentence (margin_quote)")
    return margin, f'the paper\'s stated margin {margin:g} ("{quote}")'


def _reported_values(claim: dict, reported: pd.DataFrame | None) -> list[float] | None:
    if reported is None or claim.get("figure_only"):
        return None
    try:
        values = [lookup(reported, ref) for ref in _cells_of(claim)]
    except ConfigError:
        return None
    return None if any(v is None for v in values) else values


def _evidence(refs: list[dict], samples: list[list[float]], identify=cell_identity) -> tuple:
    """(label, values, run ids, the paper's cell identity) of each cell."""
    return tuple(
        (_label(ref), tuple(float(v) for v in sample), tuple(getattr(sample, "run_ids", ())), identify(ref))
        for ref, sample in zip(refs, samples)
    )


def _deterministic(claim: dict, found: list[float], margin: float | None, source: str) -> Verdict:
    """Both verdicts on single numbers (the paper's own table): the size asks for the stated ``margin``."""
    direction = _evaluate_reported(claim, found)
    if margin is None:
        return replace(direction, size_status="no size", size_detail=source)
    if claim["kind"] == "greater":
        size = _evaluate_reported(claim, found, margin)
    else:
        own = _reported_effects(claim, found)
        ok = all(e >= margin for e in own)
        size = Verdict(claim["id"], "holds" if ok else "fails", f"leads {', '.join(_g(e, '+') for e in own)}")
        size = replace(size, effect=min(e - margin for e in own))
    return replace(
        direction,
        size_status=size.status,
        size_target=margin,
        size_effect=size.effect,
        size_detail=f"{source}: {size.detail}",
    )


def evaluate(
    claim: dict,
    table: pd.DataFrame,
    reported: pd.DataFrame | None = None,
    lookup_record: RecordLookup = stored_record,
    identify=cell_identity,
) -> Verdict:
    """Both verdicts of one claim on ``table`` (on seeds if it has a ``values`` column, else on the numbers), decided
    on its own p-values (:func:`evaluate_all` corrects them for the paper's other claims); ``reported``: the paper's
    numbers, for the descriptive ratio of the reproduced effect to the paper's (none without them); ``identify``:
    which of the paper's cells a reference is (for :func:`corrected`'s same-runs check)."""
    refs = _cells_of(claim)
    seeds = "values" in table.columns
    found = [lookup_seeds(table, ref) if seeds else lookup(table, ref) for ref in refs]
    if any(v is None for v in found):
        missing = [ref for ref, v in zip(refs, found) if v is None]
        return Verdict(
            claim["id"], "not run", f"no value for {missing}", size_status="not run", size_detail="a cell is missing"
        )
    margin, source = _margin(claim)
    if not seeds:
        return _deterministic(claim, found, margin, source)
    effects = _paper_effects(claim, _reported_values(claim, reported))
    comparisons = _comparisons(claim, found, lookup_record)  # one design for both verdicts
    direction = _direction(claim, comparisons, effects)
    size = None if margin is None else _size(claim, comparisons, margin, effects)
    verdict = Verdict(claim["id"], "", "", evidence=_evidence(refs, found, identify), direction=direction, size=size)
    verdict = replace(verdict, size_source=source, size_target=margin)
    return decided(verdict, _single(direction), _single(size))


def _single(outcome: Outcome | None) -> Decision | None:
    """A claim decided alone (no correction)."""
    if outcome is None or not outcome.tested:
        return None
    status = decide(outcome.p_for, outcome.p_against)
    return Decision(status, two_sided(outcome.p_for, outcome.p_against), "none (one claim)")


def decided(verdict: Verdict, direction: Decision | None, size: Decision | None) -> Verdict:
    """``verdict`` with both statuses, details and p-values from its outcomes and their decisions (None: untested)."""
    out, d = verdict.direction, direction
    status = d.status if d else "inconclusive"
    changes = {
        "status": status,
        "detail": out.detail(status),
        "effect": out.effect,
        "p_value": two_sided(out.p_for, out.p_against) if d else None,
        "p_adjusted": d.p_adjusted if d else None,
        "correction": d.correction if d else "",
        "n": out.n,
        "test": out.test,
    }
    s = verdict.size
    if s is None:
        ratio = out.ratio or (None, None, None)
        bounds = "" if out.ratio is None else _ratio_words(ratio)
        changes.update(
            size_status="no size",
            size_detail=f"{verdict.size_source}{bounds}",
            size_ratio=ratio[0],
            size_ratio_low=ratio[1],
            size_ratio_high=ratio[2],
        )
    else:
        size_status = size.status if size else "inconclusive"
        ratio = s.ratio or (None, None, None)
        bounds = "" if s.ratio is None else _ratio_words(ratio)
        changes.update(
            size_status=size_status,
            size_effect=s.effect,
            size_p_value=two_sided(s.p_for, s.p_against) if size else None,
            size_p_adjusted=size.p_adjusted if size else None,
            size_ratio=ratio[0],
            size_ratio_low=ratio[1],
            size_ratio_high=ratio[2],
            size_detail=f"{verdict.size_source}: {s.detail(size_status)}{bounds}",
        )
    return replace(verdict, **changes)


def _ratio_words(ratio: tuple) -> str:
    return f"; reproduced / paper's own effect = {_g(ratio[0])} [95 %: {_g(ratio[1])}, {_g(ratio[2])}] (descriptive)"


# -- a paper's claims: one body of evidence per verdict, corrected for their number ------------------------------


def _same_runs(verdicts: list[Verdict]) -> dict[str, str]:
    """Claim -> the claim whose evidence holds all of its own (each of its cells the same runs and the same numbers as
    a cell of the other) where at least one of its cells is a different cell of the paper: on a substitute backbone
    the paper's BERT and RoBERTa cells are one set of runs, so such a claim cannot be told apart from the other and
    gets no verdict of its own. Of two claims with the same evidence, the later one is marked."""

    def keys(v: Verdict) -> dict:
        return {(frozenset(runs), values): identity for _, values, runs, identity in v.evidence}

    def inside(small: Verdict, large: Verdict) -> bool:
        mine, theirs = keys(small), keys(large)
        return all(k in theirs for k in mine) and any(theirs[k] != cell for k, cell in mine.items())

    candidates = [v for v in verdicts if v.direction is not None and v.evidence and all(e[2] for e in v.evidence)]
    order = {v.id: i for i, v in enumerate(verdicts)}
    found: dict[str, str] = {}
    for later in candidates:
        for other in candidates:
            if other is later or other.id in found or not inside(later, other):
                continue
            if not inside(other, later) or order[other.id] < order[later.id]:
                found[later.id] = other.id
                break
    return found


def corrected(verdicts: list[Verdict]) -> list[Verdict]:
    """A paper's verdicts with claims resting on another's runs marked ``same runs``, then every tested verdict
    (direction and size) decided as one family on Holm-adjusted two-sided p-values
    (:mod:`sentemb.report.multiplicity`)."""
    same = _same_runs(verdicts)
    out = []
    for v in verdicts:
        if v.id in same:
            why = (
                f"same runs as {same[v.id]}: this profile's backbone maps the claim's cells onto that claim's runs, "
                "so the two cannot be told apart here"
            )
            v = Verdict(v.id, "same runs", why, size_status="same runs", size_detail=why, same_runs_as=same[v.id])
            v = replace(v, evidence=())
        out.append(v)
    decisions = _family(out)
    return [
        decided(v, decisions.get((i, "direction")), decisions.get((i, "size"))) if v.direction is not None else v
        for i, v in enumerate(out)
    ]


def _family(verdicts: list[Verdict]) -> dict[tuple[int, str], Decision]:
    """(index, "direction" or "size") -> decision, for every tested outcome of the paper's verdicts: one family."""
    tested = {
        (i, attribute): getattr(v, attribute)
        for i, v in enumerate(verdicts)
        for attribute in ("direction", "size")
        if getattr(v, attribute) is not None and getattr(v, attribute).tested
    }
    decisions = decide_family([(o.p_for, o.p_against) for o in tested.values()])
    return dict(zip(tested, decisions))


def evaluate_all(
    paper: str,
    table: pd.DataFrame,
    reported: pd.DataFrame | None = None,
    lookup_record: RecordLookup = stored_record,
    untestable: dict[str, str] | None = None,
) -> pd.DataFrame:
    """One row per claim of ``paper`` (:data:`COLUMNS`), corrected for the paper's other claims (:func:`corrected`).
    ``reported`` defaults to the paper's numbers (``papers/<paper>/reported``) when ``table`` holds seeds;
    ``untestable``: claim -> why it cannot be tested offline (*not run*, outside the correction)."""
    if reported is None and "values" in table.columns:
        from sentemb.report.reported import load_all_reported

        reported = load_all_reported(paper)
    claims = load_claims(paper)
    untestable = untestable or {}
    identify = paper_cell_identity(paper)
    verdicts = []
    for claim in claims:
        if claim["id"] in untestable:
            reason = untestable[claim["id"]]
            verdicts.append(Verdict(claim["id"], "not run", reason, size_status="not run", size_detail=reason))
        else:
            verdicts.append(evaluate(claim, table, reported, lookup_record, identify))
    if "values" in table.columns:
        verdicts = corrected(verdicts)
    rows = []
    for claim, v in zip(claims, verdicts):
        rows.append(
            {
                "paper": paper,
                "claim": claim["id"],
                "text": claim["text"],
                "source": claim.get("source", ""),
                **{c: getattr(v, c) for c in COLUMNS[4:-1] if c != "direction_status"},
                "direction_status": v.status,
                "evidence": _evidence_json(v.evidence),
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def _evidence_json(evidence: tuple) -> str:
    """The cells a verdict rests on, for recomputing it: [{"cell", "values", "run_ids"}, ...] as JSON ("" if none)."""
    if not evidence:
        return ""
    return json.dumps(
        [{"cell": label, "values": list(values), "run_ids": list(runs)} for label, values, runs, _ in evidence]
    )
