"""The records of a paper's grid for its report: every row, one record per seed, the rows outside the run set empty.

A paper whose small profile keeps some rows outside its time budget (``grid(profile, extended=False)``) still lists
them in its tables: their records are loaded when they exist (an earlier ``--extended`` run, or committed ones) and
are otherwise an empty list, which the report shows as *not run* with the reason.
"""

from __future__ import annotations

from typing import Callable

from sentemb.runs.execute import NotRun, ensure


def collect_records(grid: Callable[..., dict], profile: str, run_missing: bool = True, extended: bool = False,
                    progress: bool = True) -> dict[str, list[dict]]:
    """Run name -> records (one per seed) of ``grid(profile, extended=True)``; a row that is not in
    ``grid(profile, extended=extended)`` is never run here, only loaded (an empty list when it has no records)."""
    run_set = grid(profile, extended=extended)
    records = {}
    for name, specs in grid(profile, extended=True).items():
        try:
            records[name] = [ensure(spec, run_missing=run_missing and name in run_set, progress=progress)
                             for spec in specs]
        except NotRun:
            if name in run_set:
                raise
            records[name] = []
    return records
