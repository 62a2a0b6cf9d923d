"""The records of a paper's grid for its report: every row, one record per seed, the rows outside the run set empty.

A paper whose small profile keeps some rows outside its time budget (``grid(profile, extended=False)``) still lists
them in its tables: their records are loaded when they exist (an earlier ``--extended`` run, or committed ones) and
are otherwise left out (a row with none is an empty list, which the report shows as *not run* with the reason; a
row with some of its seeds shows those).
"""

from __future__ import annotations

from typing import Callable

from sentemb.runs import events
from sentemb.runs.execute import NotRun, ensure


def collect_records(
    grid: Callable[..., dict], profile: str, run_missing: bool = True, extended: bool = False, progress: bool = True
) -> dict[str, list[dict]]:
    """Run name -> records (one per seed) of ``grid(profile, extended=True)``; a spec that is not in
    ``grid(profile, extended=extended)`` (a row, or some seeds of a row, kept outside the time budget) is never run
    here, only loaded, and left out when it has no record."""
    run_set = {spec.run_id for specs in grid(profile, extended=extended).values() for spec in specs}
    records = {}
    for name, specs in grid(profile, extended=True).items():
        records[name] = []
        for spec in specs:
            try:
                records[name].append(
                    ensure(spec, run_missing=run_missing and spec.run_id in run_set, progress=progress)
                )
            except NotRun:
                if spec.run_id in run_set:
                    raise
                events.note("not_run", spec.run_id, reason=f"outside the {profile} profile's budget (--extended)")
    return records
