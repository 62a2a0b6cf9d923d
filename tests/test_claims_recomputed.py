"""Every committed claim verdict recomputed from the run records by a second, independent implementation.

Written from the rules in docs/reference.md ("Claims: the rules"), not from ``sentemb.report``: it reads each
``claims.csv`` row's evidence (every cell's values and run ids), checks that each value is a number of its run's
record, decides the design from the records itself (paired on matched seeds or init runs, lineage, Welch, one-sample,
or no test), computes the one-sided p-values with scipy, corrects them per paper by hand (Benjamini-Hochberg for
holds, Holm for fails) and compares p-values, adjusted p-values and both verdicts with the committed ones.
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
ALPHA, FRACTION = 0.05, 0.5
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


def bh(p: list[float]) -> list[float]:
    m, order = len(p), np.argsort(p)
    out, running = [0.0] * m, 1.0
    for rank in range(m, 0, -1):
        running = min(running, p[order[rank - 1]] * m / rank)
        out[order[rank - 1]] = running
    return out


def holm(p: list[float]) -> list[float]:
    m, order = len(p), np.argsort(p)
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def recompute(claim: dict, evidence: list[dict], constants: list[bool], shifts: list[float], equivalence=None):
    """(p for, p against) of the claim's test with the given shifts (0: the direction), or None: no test;
    ``equivalence`` (centre, tolerance): a TOST of left - right around the centre instead."""
    cells = [e["values"] for e in evidence]
    ids = [e["run_ids"] for e in evidence]
    if claim["kind"] in ("greater", "within"):
        pairs = [(0, 1)]
    else:
        pairs = [(len(cells) - 1, i) for i in range(len(cells) - 1)]
    results = []
    for (a, b), shift in zip(pairs, shifts):
        if constants[a] and constants[b]:
            return None
        if constants[a] or constants[b]:
            kind = ("welch",)
        elif len(ids[a]) == len(cells[a]) and len(ids[b]) == len(cells[b]):
            kind = design(ids[a], ids[b])
        else:
            kind = ("welch",)
        if kind[0] == "none" or (kind[0] == "paired" and len(kind[1]) < 2):
            return None
        if kind[0] != "paired" and any(len(cells[x]) < 2 and not constants[x] for x in (a, b)):
            return None
        results.append((cells[a], cells[b], kind, (constants[a], constants[b])))
    if claim["kind"] == "within" and equivalence is None:
        right = results[0][1]
        tol = claim.get("tolerance")
        equivalence = (0.0, tol if tol is not None else claim["tolerance_relative"] * abs(np.mean(right)))
    if equivalence is not None:
        left, right, kind, constant = results[0]
        centre, tol = equivalence
        above_low = one_sided(left, right, kind, centre - tol, constant)
        above_high = one_sided(left, right, kind, centre + tol, constant)
        return max(above_low[0], above_high[1]), min(above_high[0], above_low[1])
    if claim["kind"] == "greater":
        p_for, p_against, _ = one_sided(*results[0][:2], results[0][2], shifts[0], results[0][3])
        return p_for, p_against
    sign = 1 if claim["kind"] == "argmax" else -1
    wins, loses = [], []
    for (left, right, kind, constant), shift in zip(results, shifts):
        g, less_, _ = one_sided(left, right, kind, sign * shift, constant)
        wins.append(g if sign > 0 else less_)
        loses.append(less_ if sign > 0 else g)
    return max(wins), min(1.0, len(results) * min(loses))


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
    """The paper's effect(s) the size is half of: its stated margin, else left - right (argmax/argmin: expect's lead
    over each other cell) on its reported numbers; None when there is no size."""
    if claim["kind"] == "within":
        return None
    if claim["kind"] == "greater" and "margin" in claim:
        return [float(claim["margin"])] if claim["margin"] else None
    if claim.get("figure_only"):
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


def decided(p_for: float, p_against: float) -> str:
    return "inconclusive" if (p_for < ALPHA) == (p_against < ALPHA) else "holds" if p_for < ALPHA else "fails"


@pytest.mark.parametrize("paper", PAPERS)
def test_every_committed_verdict_is_recomputed_from_the_run_records(paper):
    committed = pd.read_csv(settings.REPO_ROOT / "results" / paper / PROFILE / "claims.csv", dtype=str)
    committed = committed.fillna("")
    claims = {
        c["id"]: c
        for c in yaml.safe_load((settings.REPO_ROOT / "papers" / paper / "claims.yaml").read_text())["claims"]
    }
    direction, size = {}, {}
    checked = 0
    for _, row in committed.iterrows():
        if row["status"] in ("not run", "same runs"):
            assert row["evidence"] == "" and row["p_value"] == ""
            continue
        claim, evidence = claims[row["claim"]], json.loads(row["evidence"])
        for cell in evidence:
            check_values_trace(cell, row["claim"])
        constants = [len(e["values"]) == 1 and len(e["run_ids"]) >= 1 and _deterministic(e) for e in evidence]
        k = 1 if claim["kind"] in ("greater", "within") else len(evidence) - 1
        found = recompute(claim, evidence, constants, [0.0] * k)
        if found is None:
            assert row["p_value"] == "" and row["status"] == "inconclusive", row["claim"]
        else:
            direction[row["claim"]] = found
        effects = paper_effects(paper, claim)
        if effects is None:
            assert row["size_status"] == "no size" and row["size_p_value"] == "", row["claim"]
        else:
            tolerance = claim.get("size_tolerance")
            if tolerance is not None:
                found = recompute(claim, evidence, constants, [0.0], equivalence=(effects[0], tolerance))
            else:
                found = recompute(claim, evidence, constants, [FRACTION * e for e in effects])
            if len(effects) == 1:
                target = effects[0] if tolerance is not None else FRACTION * effects[0]
                assert float(row["size_target"]) == pytest.approx(target, rel=1e-6), row["claim"]
            if found is None:
                assert row["size_p_value"] == "" and row["size_status"] == "inconclusive", row["claim"]
            else:
                size[row["claim"]] = found
        checked += 1
    assert checked > 0 or paper == "tncse"
    for family, status_column, p_column, adjusted_column in (
        (direction, "status", "p_value", "p_adjusted"),
        (size, "size_status", "size_p_value", "size_p_adjusted"),
    ):
        if not family:
            continue
        names = list(family)
        adjusted_for = bh([family[n][0] for n in names]) if len(names) > 1 else [family[n][0] for n in names]
        adjusted_against = holm([family[n][1] for n in names]) if len(names) > 1 else [family[n][1] for n in names]
        for name, q_for, q_against in zip(names, adjusted_for, adjusted_against):
            row = committed[committed["claim"] == name].iloc[0]
            status = decided(q_for, q_against)
            assert row[status_column] == status, (name, status_column, q_for, q_against)
            raw = family[name][1] if status == "fails" else family[name][0]
            # 3 significant digits in the CSV: a relative rounding of at most 5e-3
            assert float(row[p_column]) == pytest.approx(raw, rel=5e-3, abs=1e-12), (name, p_column)
            assert float(row[adjusted_column]) == pytest.approx(
                q_against if status == "fails" else q_for, rel=5e-3, abs=1e-12
            ), (name, adjusted_column)


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
