"""Every committed claim verdict recomputed from the run records by a second, independent implementation.

Written from the rules in docs/reference.md ("Claims: the rules"), not from ``sentemb.report``: it reads each
``claims.csv`` row's evidence (every cell's values and run ids), checks that each value is a number of its run's
record, decides the design from the records itself (no test when a cell's runs repeat a seed or share init runs, or
pool configurations; else paired on matched seeds or init runs, lineage, Welch, one-sample), computes the one-sided
p-values each way with scipy, makes each verdict's p two-sided (twice the smaller), adjusts every tested verdict of the
paper on the profile (direction and size together) as one Holm family by hand, and compares p-values, adjusted
p-values, the correction and both verdicts with the committed ones. A size verdict exists only for a claim with a
stated ``margin`` (H1: effect > margin); the descriptive ratio to the paper's own effect and its 95 % t-interval are
recomputed for every claim whose reported numbers show an effect.
"""

from __future__ import annotations

import json
from functools import cache

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from sentemb import settings

PAPERS = ("simcse", "simcse_pp", "declutr", "tncse", "noncontrastive")
PROFILE = "small"
ALPHA = 0.05
DECIMALS = 5.01e-5  # the result CSVs' floats: 4 decimals (4 significant digits below 0.001)
SKIP = {"notes", "seed", "profile", "code_version", "init_runs"}


@cache
def record(ident: str) -> dict:
    """A run record, or a derived record merged into its run's (its parameters as extra coordinates)."""
    root = settings.REPO_ROOT / "results" / "runs" / PROFILE
    path = root / f"{ident}.json"
    if path.is_file():
        return json.loads(path.read_text())
    derived = json.loads((root / "derived" / f"{ident}.json").read_text())
    run = json.loads((root / f"{derived['run_id']}.json").read_text())
    params = dict(derived.get("params") or {})
    seed = params.pop("seed", run["spec"]["seed"])
    return {**run, "run_id": ident, "seed": seed, "extra": params, "derived": derived}


def numbers(tree) -> list[float]:
    if isinstance(tree, dict):
        return [x for v in tree.values() for x in numbers(v)]
    if isinstance(tree, list):
        return [x for v in tree for x in numbers(v)]
    return [float(tree)] if isinstance(tree, (int, float)) and not isinstance(tree, bool) else []


@cache
def derived_of(run_id: str) -> tuple[dict, ...]:
    """Every derived record (a post-processing or an evaluation) of a run."""
    folder = settings.REPO_ROOT / "results" / "runs" / PROFILE / "derived"
    found = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    return tuple(d for d in found if d.get("run_id") == run_id)


def traces(value: float, ident: str) -> bool:
    """The value is one of the numbers of the run's record or of its derived records (or x 100), or the mean of a
    list of such numbers side by side (a task average)."""
    r = record(ident)
    sources = [r.get("derived", r), *derived_of(r["run_id"])]
    for source in sources:
        if any(abs(x - value) < 1e-3 or abs(100 * x - value) < 1e-3 for x in numbers(source)):
            return True
        groups = [g for g in _lists(source) if len(g) > 1]
        if any(abs(np.mean(g) - value) < 1e-3 or abs(100 * np.mean(g) - value) < 1e-3 for g in groups):
            return True
    return False


def _lists(tree):
    """Every list of numbers a record holds side by side: a dict's numeric leaves, and one key across a dict's (or a
    list's) child dicts (each task's accuracy, main score, seconds)."""
    if isinstance(tree, dict):
        leaves = [v for v in tree.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if leaves:
            yield [float(v) for v in leaves]
        children = [v for v in tree.values() if isinstance(v, dict)]
    elif isinstance(tree, list):
        children = [v for v in tree if isinstance(v, dict)]
    else:
        return
    for key in set().union(*(c.keys() for c in children)) if children else ():
        column = [c[key] for c in children if isinstance(c.get(key), (int, float)) and not isinstance(c[key], bool)]
        if len(column) > 1:
            yield [float(v) for v in column]
    for v in tree.values() if isinstance(tree, dict) else tree:
        yield from _lists(v)


def coordinates(ident: str) -> dict:
    spec = record(ident)["spec"]
    out = {k: json.dumps(v, sort_keys=True) for k, v in spec.items() if k not in SKIP and k != "objective_params"}
    out.update({f"p.{k}": json.dumps(v, sort_keys=True) for k, v in (spec.get("objective_params") or {}).items()})
    out.update({f"d.{k}": json.dumps(v, sort_keys=True) for k, v in record(ident).get("extra", {}).items()})
    return out


def varying(ids: list[str]) -> set[str]:
    keys = set().union(*(coordinates(i) for i in ids))
    return {k for k in keys if len({coordinates(i).get(k) for i in ids}) > 1}


def seed_of(ident: str):
    return record(ident).get("seed", record(ident)["spec"]["seed"])


def order_of(ident: str) -> tuple:
    r = record(ident)
    if r["spec"].get("objective", "none") == "none":
        return ()
    return (r["spec"].get("train_data"), r["spec"].get("batch_size"), r["training"].get("n_training_rows_available"))


def design(left: list[str], right: list[str]):
    """("none",) | ("paired", [(left indices, right indices)]) | ("welch",) from the records alone."""
    for ids in (left, right):
        seeds = [seed_of(i) for i in ids]
        if len(seeds) != len(set(seeds)):  # values of one seed are grid points, not replicates
            return ("none",)
        used = [run for i in ids for run in (record(i)["spec"].get("init_runs") or [])]
        if len(used) != len(set(used)):
            return ("none",)
    if set(left) & set(right):
        return ("welch",)
    for a, b, flip in ((left, right, False), (right, left, True)):
        inits = [record(i)["spec"].get("init_runs") or [] for i in a]
        if all(inits) and all(run in b for init in inits for run in init):
            pairs = [((i,), tuple(b.index(run) for run in init)) for i, init in enumerate(inits)]
            return ("paired", [(q, p) if flip else (p, q) for p, q in pairs])
    grid = sorted(varying(left) & varying(right))
    point = {i: tuple(coordinates(i).get(k) for k in grid) for i in left + right}
    inits = {i: tuple(record(i)["spec"].get("init_runs") or ()) for i in left + right}
    keyers = []
    if all(inits.values()):
        keyers.append(lambda i: (point[i], inits[i]))
    if all(order_of(i) for i in left + right):
        keyers.append(lambda i: (point[i], seed_of(i), order_of(i)))
    for key in keyers:
        lk, rk = [key(i) for i in left], [key(i) for i in right]
        if len(set(lk)) < len(lk) or len(set(rk)) < len(rk):
            continue
        pairs = [((i,), (rk.index(k),)) for i, k in enumerate(lk) if k in rk]
        if pairs:
            return ("paired", pairs)
    if varying(left) - {"init_runs"} or varying(right) - {"init_runs"}:
        return ("none",)
    return ("welch",)


def one_sided(left, right, kind, shift, constant):
    """(p for H1 diff > shift, p for H1 diff < shift, estimate) on the design ``kind``."""
    if kind[0] == "paired":
        d = [np.mean([left[i] for i in a]) - np.mean([right[j] for j in b]) for a, b in kind[1]]
        if np.var(d) == 0:
            return (0.0 if np.mean(d) > shift else 1.0), (0.0 if np.mean(d) < shift else 1.0), float(np.mean(d))
        return (
            stats.ttest_1samp(d, shift, alternative="greater").pvalue,
            stats.ttest_1samp(d, shift, alternative="less").pvalue,
            float(np.mean(d)),
        )
    estimate = float(np.mean(left) - np.mean(right))
    if constant[1] and not constant[0]:
        t = stats.ttest_1samp(np.subtract(left, shift), right[0], alternative="greater").pvalue
        return t, 1 - t if np.var(left) else (1.0 if estimate > shift else 0.0), estimate
    if constant[0] and not constant[1]:
        t = stats.ttest_1samp(np.add(right, shift), left[0], alternative="less").pvalue
        return t, 1 - t, estimate
    if np.var(left) == 0 and np.var(right) == 0:
        return (0.0 if estimate > shift else 1.0), (0.0 if estimate < shift else 1.0), estimate
    a = np.subtract(left, shift)
    return (
        stats.ttest_ind(a, right, equal_var=False, alternative="greater").pvalue,
        stats.ttest_ind(a, right, equal_var=False, alternative="less").pvalue,
        estimate,
    )


def holm(p: list[float]) -> list[float]:
    """Holm adjusted p-values: (m - i + 1) p_(i), made monotone from the smallest up, capped at 1."""
    m, order = len(p), np.argsort(p, kind="stable")
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def comparisons(claim: dict, evidence: list[dict], constants: list[bool]) -> list[tuple]:
    """The claim's comparisons, each (left values, right values, design, (left constant, right constant)): left -
    right for greater/within, expect - each other cell for argmax/argmin."""
    cells = [e["values"] for e in evidence]
    ids = [e["run_ids"] for e in evidence]
    if claim["kind"] in ("greater", "within"):
        pairs = [(0, 1)]
    else:
        pairs = [(len(cells) - 1, i) for i in range(len(cells) - 1)]
    out = []
    for a, b in pairs:
        if constants[a] and constants[b]:
            kind = ("none",)  # two fixed numbers
        elif constants[a] or constants[b]:
            kind = ("welch",)  # one-sample
        elif len(ids[a]) == len(cells[a]) and len(ids[b]) == len(cells[b]):
            kind = design(ids[a], ids[b])
        else:
            kind = ("welch",)
        out.append((cells[a], cells[b], kind, (constants[a], constants[b])))
    return out


def can_test(comparison: tuple) -> bool:
    left, right, kind, constant = comparison
    if kind[0] == "none":
        return False
    if kind[0] == "paired":
        return len(kind[1]) >= 2
    return not any(len(x) < 2 and not c for x, c in ((left, constant[0]), (right, constant[1])))


def differences(comparison: tuple) -> list[float]:
    left, right, kind, _ = comparison
    return [np.mean([left[i] for i in a]) - np.mean([right[j] for j in b]) for a, b in kind[1]]


def estimate(comparison: tuple) -> float:
    """left - right: the mean matched difference on a paired design, else the difference of the means."""
    left, right, kind, _ = comparison
    return float(np.mean(differences(comparison))) if kind[0] == "paired" else float(np.mean(left) - np.mean(right))


def interval95(comparison: tuple) -> tuple[float, float]:
    """The two-sided 95 % t-interval of left - right on the comparison's design (scipy's), the point itself
    without variance."""
    left, right, kind, constant = comparison
    point = estimate(comparison)
    if kind[0] == "paired":
        d = differences(comparison)
        if np.var(d) == 0:
            return point, point
        ci = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
        return float(ci.low), float(ci.high)
    if constant[1] and not constant[0]:
        if np.var(left) == 0:
            return point, point
        ci = stats.ttest_1samp(left, right[0]).confidence_interval(0.95)  # of mean(left)
        return float(ci.low - right[0]), float(ci.high - right[0])
    if constant[0] and not constant[1]:
        if np.var(right) == 0:
            return point, point
        ci = stats.ttest_1samp(right, left[0]).confidence_interval(0.95)  # of mean(right)
        return float(left[0] - ci.high), float(left[0] - ci.low)
    if np.var(left) == 0 and np.var(right) == 0:
        return point, point
    ci = stats.ttest_ind(left, right, equal_var=False).confidence_interval(0.95)
    return float(ci.low), float(ci.high)


def tolerance_of(claim: dict, comparison: tuple) -> float:
    tol = claim.get("tolerance")
    return float(tol) if tol is not None else claim["tolerance_relative"] * abs(np.mean(comparison[1]))


def recompute(claim: dict, comps: list[tuple], shift: float):
    """(p for, p against) of the claim's test beyond ``shift`` (0: the direction; the stated margin: the size), or
    None: no test. ``within``: a TOST of left - right inside the tolerance."""
    if not all(can_test(c) for c in comps):
        return None
    if claim["kind"] == "within":
        left, right, kind, constant = comps[0]
        tol = tolerance_of(claim, comps[0])
        above_low = one_sided(left, right, kind, -tol, constant)
        above_high = one_sided(left, right, kind, tol, constant)
        return max(above_low[0], above_high[1]), min(above_high[0], above_low[1])
    if claim["kind"] == "greater":
        left, right, kind, constant = comps[0]
        p_for, p_against, _ = one_sided(left, right, kind, shift, constant)
        return p_for, p_against
    sign = 1 if claim["kind"] == "argmax" else -1
    wins, loses = [], []
    for left, right, kind, constant in comps:
        g, less_, _ = one_sided(left, right, kind, sign * shift, constant)
        wins.append(g if sign > 0 else less_)
        loses.append(less_ if sign > 0 else g)
    return max(wins), min(1.0, len(comps) * min(loses))


def effect(claim: dict, comps: list[tuple]) -> float:
    """The direction's effect, positive for the claim: left - right, the tolerance's room, expect's smallest lead."""
    if claim["kind"] == "greater":
        return estimate(comps[0])
    if claim["kind"] == "within":
        return tolerance_of(claim, comps[0]) - abs(estimate(comps[0]))
    sign = 1 if claim["kind"] == "argmax" else -1
    return min(sign * estimate(c) for c in comps)


def ratio(claim: dict, comps: list[tuple], effects: list[float] | None):
    """(reproduced / paper's effect, 95 % low, high) for the other cell with the lowest ratio; None without a paper
    effect; the bounds NaN when the comparison cannot be tested."""
    if effects is None:
        return None
    sign = -1 if claim["kind"] == "argmin" else 1
    ratios = [sign * estimate(c) / e for c, e in zip(comps, effects)]
    worst = int(np.argmin(ratios))
    if not can_test(comps[worst]):
        return ratios[worst], float("nan"), float("nan")
    low, high = sorted(sign * b / effects[worst] for b in interval95(comps[worst]))
    return ratios[worst], low, high


def reported_value(paper: str, ref: dict) -> float | None:
    folder = settings.REPO_ROOT / "papers" / paper / "reported"
    frames = [pd.read_csv(f, dtype=str, keep_default_na=False) for f in folder.glob("*.csv") if "." not in f.stem]
    table = pd.concat([f for f in frames if {"table", "row", "column", "value"} <= set(f.columns)])
    hit = pd.Series(True, index=table.index)
    for k, v in ref.items():
        hit &= table[k] == str(v)
    values = table.loc[hit, "value"]
    return float(values.iloc[0]) if len(values) == 1 and values.iloc[0] != "" else None


def paper_effects(paper: str, claim: dict) -> list[float] | None:
    """The paper's own effect(s) on its reported numbers, the descriptive ratio's denominator: left - right
    (argmax/argmin: expect's lead over each other cell); None for a within claim, a figure, a missing number, or
    when the paper's numbers show no effect in the claim's direction."""
    if claim["kind"] == "within" or claim.get("figure_only"):
        return None
    if claim["kind"] == "greater":
        refs = [claim["left"], claim["right"]]
    else:
        refs = [c for c in claim["cells"] if c != claim["expect"]] + [claim["expect"]]
    values = [reported_value(paper, ref) for ref in refs]
    if any(v is None for v in values):
        return None
    if claim["kind"] == "greater":
        effects = [values[0] - values[1]]
    else:
        sign = 1.0 if claim["kind"] == "argmax" else -1.0
        effects = [sign * (values[-1] - v) for v in values[:-1]]
    return effects if min(effects) > 0 else None


def margin_of(claim: dict) -> float | None:
    """The size verdict's bar: the margin the paper states (with its sentence), None without one."""
    if "margin" not in claim:
        return None
    assert claim["kind"] != "within" and claim["margin"] > 0 and str(claim.get("margin_quote", "")).strip()
    return float(claim["margin"])


def decided(p_for: float, p_against: float, p_adjusted: float) -> str:
    """One bar both ways: the adjusted two-sided p below ALPHA, the side with the smaller one-sided p."""
    if p_adjusted >= ALPHA or p_for == p_against:
        return "inconclusive"
    return "holds" if p_for < p_against else "fails"


def close(committed: str, expected: float) -> bool:
    """A committed number ("" for none) against the recomputed one (NaN for none), to the CSV's 4 decimals."""
    if committed == "" or np.isnan(expected):
        return committed == "" and np.isnan(expected)
    return float(committed) == pytest.approx(expected, abs=DECIMALS)


@pytest.mark.parametrize("paper", PAPERS)
def test_every_committed_verdict_is_recomputed_from_the_run_records(paper):
    committed = pd.read_csv(settings.REPO_ROOT / "results" / paper / PROFILE / "claims.csv", dtype=str)
    committed = committed.fillna("")
    claims = {
        c["id"]: c
        for c in yaml.safe_load((settings.REPO_ROOT / "papers" / paper / "claims.yaml").read_text())["claims"]
    }
    family = []  # (claim, "" for the direction or "size_" for the size, p for, p against): one Holm family
    checked = 0
    for _, row in committed.iterrows():
        assert row["direction_status"] == row["status"], row["claim"]
        if row["status"] in ("not run", "same runs"):
            assert row["evidence"] == "" and row["p_value"] == "" and row["size_status"] == row["status"]
            continue
        claim, evidence = claims[row["claim"]], json.loads(row["evidence"])
        for cell in evidence:
            check_values_trace(cell, row["claim"])
        constants = [len(e["values"]) == 1 and len(e["run_ids"]) >= 1 and _deterministic(e) for e in evidence]
        comps = comparisons(claim, evidence, constants)
        assert float(row["effect"]) == pytest.approx(effect(claim, comps), abs=DECIMALS), row["claim"]
        found = recompute(claim, comps, 0.0)
        if found is None:
            assert row["p_value"] == row["correction"] == "" and row["status"] == "inconclusive", row["claim"]
        else:
            family.append((row["claim"], "", *found))
        margin = margin_of(claim)
        if margin is None:  # no size verdict: the paper states no margin (or an equivalence claim)
            assert row["size_status"] == "no size", row["claim"]
            assert row["size_p_value"] == row["size_target"] == row["size_effect"] == "", row["claim"]
        else:
            assert float(row["size_target"]) == pytest.approx(margin), row["claim"]
            assert float(row["size_effect"]) == pytest.approx(effect(claim, comps) - margin, abs=DECIMALS), row["claim"]
            found = recompute(claim, comps, margin)
            if found is None:
                assert row["size_p_value"] == "" and row["size_status"] == "inconclusive", row["claim"]
            else:
                family.append((row["claim"], "size_", *found))
        described = ratio(claim, comps, paper_effects(paper, claim))  # descriptive, with or without a margin
        if described is None:
            assert row["size_ratio"] == row["size_ratio_low"] == row["size_ratio_high"] == "", row["claim"]
        else:
            for column, value in zip(("size_ratio", "size_ratio_low", "size_ratio_high"), described):
                assert close(row[column], value), (row["claim"], column, row[column], value)
        checked += 1
    assert checked > 0 or paper == "tncse"
    if not family:
        return
    raw = [min(1.0, 2 * min(p_for, p_against)) for _, _, p_for, p_against in family]
    adjusted = holm(raw) if len(raw) > 1 else raw
    words = f"Holm over the paper's {len(raw)} tests (two-sided)" if len(raw) > 1 else "none (one test)"
    rows = committed.set_index("claim")
    for (name, prefix, p_for, p_against), p, q in zip(family, raw, adjusted):
        row = rows.loc[name]
        status = decided(p_for, p_against, q)
        assert row[f"{prefix}status" if prefix else "status"] == status, (name, prefix, p_for, p_against, q)
        # 3 significant digits in the CSV: a relative rounding of at most 5e-3
        assert float(row[f"{prefix}p_value"]) == pytest.approx(p, rel=5e-3, abs=1e-12), (name, prefix, "p_value")
        assert float(row[f"{prefix}p_adjusted"]) == pytest.approx(q, rel=5e-3, abs=1e-12), (name, prefix, "adjusted")
        assert row["correction"] == words, name


def check_values_trace(cell: dict, claim: str) -> None:
    """Each value of a cell is a number of its run's records (aligned with its run ids, or, for a statistic over
    several runs such as a scan's max, one of them); the few computed cells are recomputed from their records."""
    values, ids = cell["values"], cell["run_ids"]
    kind = next((k for k in COMPUTED if k in cell["cell"]), None)
    if kind == "Downstream":  # DeCLUTR Table 1: the mean over the offline tasks of each task's (mean) score
        from papers.declutr.tables import downstream_average, task_scores

        for value, ident in zip(values, ids):
            assert downstream_average(task_scores(record(ident))) == pytest.approx(value, abs=1e-3), (claim, ident)
        return
    if kind == "Training Time":  # SimCSE++ Table 6: minutes a step x the paper's steps: one multiplier for all
        per_step = [record(i)["training"]["train_seconds"] / record(i)["spec"]["steps"] / 60 for i in ids]
        multipliers = [v / p for v, p in zip(values, per_step)]
        assert max(multipliers) == pytest.approx(min(multipliers), rel=1e-4), claim
        assert abs(multipliers[0] - round(multipliers[0])) < 0.05, claim
        return
    if len(values) == len(ids):
        for value, ident in zip(values, ids):
            assert traces(value, ident), (claim, cell["cell"], value, ident)
    else:
        assert all(any(traces(value, ident) for ident in ids) for value in values), (claim, cell["cell"])


#: Cells whose values are computed from a record, not stored in it (the check recomputes them).
COMPUTED = ("Downstream", "Training Time")


def _deterministic(cell: dict) -> bool:
    """A cell of one value without seed variance: an untrained pretrained backbone evaluated in eval mode (not the
    models of trained runs, not a post-processing fitted with a seed of its own, not a backbone built from the seed)."""
    r = record(cell["run_ids"][0])
    spec = r["spec"]
    seeded_post = "seed" in ((r.get("derived") or {}).get("params") or {})
    return (
        spec.get("objective", "none") == "none"
        and not spec.get("init_runs")
        and not seeded_post
        and spec["backbone"] != "tiny-random-bert"
    )
