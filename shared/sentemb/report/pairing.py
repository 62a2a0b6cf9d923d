"""Which seeds of two claim cells share their randomness, read from the run records.

Two cells are compared paired when each value of one has a partner in the other from a run sharing its randomness,
decided per value from its record (never from a hand-written list): shared ``init_runs`` (TNCSE's rows of one
seed), the same seed and data order (``train_data``, ``batch_size``, the rows the objective kept), or lineage (a run
against the mean of its own init runs' values). Otherwise independent.
No test at all (``Design.refused``) when the values are not independent replicates: two values of a cell start from
the same init run (a ring of stage-1 pairs), or a cell pools configurations (spec fields other than the seed vary
inside it) that no matched grid point pairs.
Keys: (the grid point, then the init runs or the seed and data order); the grid coordinates are the spec fields that
vary inside both cells (DeCLUTR's "A = 2" spans Figure 2's (P, tau) points); a derived record takes its run's spec
plus its derived parameters. Unmatched values are reported, not used; a missing record or a non-unique key makes
the comparison independent, saying why.
Relations: :mod:`sentemb.report.claims` (the tests).
The rules in full: docs/derivations.md#sentembreportpairingpy
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable

from sentemb import settings

#: Spec fields that never tell two runs' randomness apart.
_NOT_COORDINATES = ("notes", "seed", "profile", "code_version")

RecordLookup = Callable[[str, str], "dict | None"]


_READ: dict[str, dict] = {}  # records are written once: a record read is kept for the process (a missing one is not)


def _read_json(path: str) -> dict | None:
    if path not in _READ:
        try:
            with open(path, encoding="utf-8") as handle:
                _READ[path] = json.load(handle)
        except (OSError, ValueError):
            return None
    return _READ[path]


def stored_record(profile: str, ident: str) -> dict | None:
    """The run record ``ident`` of ``profile``, or the run record of the derived record ``ident``, the derived
    parameters added as ``derived_params``; None when neither exists."""
    root = settings.results_root() / "runs" / profile
    record = _read_json(str(root / f"{ident}.json"))
    if record is not None:
        return record
    derived = _read_json(str(root / "derived" / f"{ident}.json"))
    if derived is None or not derived.get("run_id"):
        return None
    run = _read_json(str(root / f"{derived['run_id']}.json"))
    if run is None:
        return None
    return {**run, "derived_params": {"analysis": derived.get("analysis"), **(derived.get("params") or {})}}


@dataclass(frozen=True)
class Unit:
    """What one value of a cell is: its run, seed, data order, init runs and spec coordinates."""

    run_id: str
    seed: object
    data_order: tuple
    init_runs: tuple[str, ...]
    coordinates: dict = field(hash=False, compare=False)


def unit_of(record: dict) -> Unit:
    spec = record["spec"]
    params = dict(record.get("derived_params") or {})
    seed = params.pop("seed", spec.get("seed"))  # a post-processing fitted with its own seed (a flow)
    coordinates = {
        k: json.dumps(v, sort_keys=True)
        for k, v in spec.items()
        if k not in _NOT_COORDINATES and k != "objective_params"
    }
    coordinates.update(
        {
            f"objective_params.{k}": json.dumps(v, sort_keys=True)
            for k, v in (spec.get("objective_params") or {}).items()
        }
    )
    coordinates.update({f"derived.{k}": json.dumps(v, sort_keys=True) for k, v in params.items()})
    trains = spec.get("objective", "none") != "none"
    rows = (record.get("training") or {}).get("n_training_rows_available")
    data_order = (spec.get("train_data"), spec.get("batch_size"), rows) if trains else ()
    return Unit(record["run_id"], seed, data_order, tuple(spec.get("init_runs") or ()), coordinates)


@dataclass(frozen=True)
class Design:
    """How two cells are compared. ``pairs``: (left indices, right indices) for a paired design, each side the mean
    of those values (one index, or a run's init runs under lineage), empty when independent; ``why`` says what the
    design rests on."""

    paired: bool
    why: str
    pairs: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = ()
    unmatched: str = ""
    refused: str = ""  # why no test may run (the values are not independent replicates); "" when one may


def _independent(why: str) -> Design:
    return Design(False, why)


def _refused(why: str) -> Design:
    return Design(False, why, refused=why)


def _shared_init_run(units: list[Unit]) -> tuple[Unit, Unit, str] | None:
    """Two values of one cell that start from the same init run (so they are not independent), and that run."""
    first_user: dict[str, Unit] = {}
    for unit in units:
        for run in unit.init_runs:
            if run in first_user and first_user[run].run_id != unit.run_id:
                return first_user[run], unit, run
            first_user.setdefault(run, unit)
    return None


def _varying(units: list[Unit]) -> dict[str, int]:
    """The spec fields that vary inside a cell, with their number of values."""
    keys = set().union(*(u.coordinates for u in units)) if units else set()
    counts = {k: len({u.coordinates.get(k) for u in units}) for k in sorted(keys)}
    return {k: n for k, n in counts.items() if n > 1}


def _configurations(units: list[Unit]) -> dict[str, int]:
    """The spec fields (other than the seed's: seed, init runs) that vary inside a cell, with their number of values."""
    return {k.removeprefix("objective_params."): n for k, n in _varying(units).items() if k != "init_runs"}


def _units(run_ids: list[str], profile: str, lookup: RecordLookup) -> list[Unit] | None:
    records = [lookup(profile, ident) for ident in run_ids]
    if any(r is None for r in records):
        return None
    return [unit_of(r) for r in records]


def _grid_fields(left: list[Unit], right: list[Unit]) -> list[str]:
    """The spec fields that vary inside both cells: the grid coordinates their values spread over. (A field that
    varies in one cell only, such as the widths of a projection head against a run without one, is no shared grid.)"""
    return sorted((set(_varying(left)) & set(_varying(right))) - {"init_runs"})


def _key(unit: Unit, grid: list[str], by_init: bool) -> tuple:
    point = tuple(unit.coordinates.get(k) for k in grid)
    return (point, unit.init_runs) if by_init else (point, unit.seed, unit.data_order)


def _lineage(left: list[Unit], right: list[Unit]) -> tuple[tuple[int, tuple[int, ...]], ...] | None:
    """Each left value is a run trained from right-cell runs: (left index, its init runs' indices in right)."""
    index = {u.run_id: i for i, u in enumerate(right)}
    if not all(u.init_runs and all(r in index for r in u.init_runs) for u in left):
        return None
    return tuple((i, tuple(index[r] for r in u.init_runs)) for i, u in enumerate(left))


def design(left_ids: list[str], right_ids: list[str], profile: str, lookup: RecordLookup = stored_record) -> Design:
    """The design comparing two cells whose values come from the runs ``left_ids`` and ``right_ids``."""
    if not left_ids or not right_ids:
        return _independent("independent: no run records")
    left, right = _units(left_ids, profile, lookup), _units(right_ids, profile, lookup)
    if left is None or right is None:
        return _independent("independent: a run record is missing")
    for side, units in (("left", left), ("right", right)):
        seeds = [u.seed for u in units]
        if len(set(seeds)) < len(seeds):
            repeated = sorted({str(x) for x in seeds if seeds.count(x) > 1})
            return _refused(
                f"descriptive: the {side} cell's {len(units)} values come from runs of seed {', '.join(repeated)} "
                "(grid points of one seed, not replicates; replicates differ in seed): no test"
            )
    if set(left_ids) & set(right_ids):
        return _independent("independent: the cells share runs")
    for side, units in (("left", left), ("right", right)):
        shared = _shared_init_run(units)
        if shared is not None:
            one, other, run = shared
            return _refused(
                f"not independent: the {side} cell's seeds {one.seed} and {other.seed} both start from run {run} "
                "(overlapping init runs): no test"
            )
    for first, second, flip in ((left, right, False), (right, left, True)):
        found = _lineage(first, second)
        if found is not None:
            used = {j for _, js in found for j in js}
            unused = [str(second[j].seed) for j in range(len(second)) if j not in used]
            pairs = tuple(((js, (i,)) if flip else ((i,), js)) for i, js in found)
            return Design(
                True,
                "paired: each seed against the mean of its own init runs",
                pairs,
                f"init-run seeds not used: {', '.join(unused)}" if unused else "",
            )
    grid = _grid_fields(left, right)
    for by_init, what in ((True, "the same init runs"), (False, "the same seed and data order")):
        if by_init and not all(u.init_runs for u in left + right):
            continue
        if not by_init and not all(u.data_order for u in left + right):
            continue
        left_keys = [_key(u, grid, by_init) for u in left]
        right_keys = [_key(u, grid, by_init) for u in right]
        if len(set(left_keys)) < len(left_keys) or len(set(right_keys)) < len(right_keys):
            continue
        where = {k: j for j, k in enumerate(right_keys)}
        pairs = tuple(((i,), (where[k],)) for i, k in enumerate(left_keys) if k in where)
        if not pairs:
            continue
        matched_left = {i for (i,), _ in pairs}
        matched_right = {j for _, (j,) in pairs}
        lost = [f"left {left[i].seed}" for i in range(len(left)) if i not in matched_left]
        lost += [f"right {right[j].seed}" for j in range(len(right)) if j not in matched_right]
        at = f" at the same grid point ({', '.join(g.removeprefix('objective_params.') for g in grid)})" if grid else ""
        return Design(True, f"paired: {what}{at}", pairs, f"unmatched seeds: {', '.join(lost)}" if lost else "")
    for side, units in (("left", left), ("right", right)):
        pooled = _configurations(units)
        if pooled:
            fields = ", ".join(f"{k} ({n} values)" for k, n in pooled.items())
            return _refused(
                f"descriptive: the {side} cell pools {len(units)} runs of different configurations ({fields}), not "
                "seeds, and no matched grid point pairs them: no test"
            )
    return _independent("independent: no shared seed, data order or init runs")
