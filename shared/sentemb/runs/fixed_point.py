"""Run a grid whose specs depend on the records already there, until it proposes nothing new.

The non-contrastive paper's grid is the reason: its SMAC scan proposes the next trial from the records of the
earlier ones, and its headline rows follow the scan's best trials. So the grid is asked again after each pass, and
the loop ends when a pass brings no run id it has not seen. Every other paper's grid is fixed: one pass, then one
empty ask. ``sentemb run`` (:mod:`sentemb.grid_run`) and the non-contrastive paper's ``collect`` both use this
loop.
"""

from __future__ import annotations

from typing import Callable, Iterable

from sentemb.spec import RunSpec


def run_to_fixed_point(
    ask: Callable[[], dict[str, list[RunSpec]]],
    run: Callable[[str, RunSpec], None],
    names: Iterable[str] | None = None,
    run_many: Callable[[list[tuple[str, RunSpec]]], None] | None = None,
) -> set[str]:
    """Call ``run(name, spec)`` once for every spec ``ask()`` returns (only the rows in ``names`` when given), asking
    again after each pass until a pass has no new run id; return the run ids seen. With ``run_many``, a pass of
    several runs is handed to it whole instead (``sentemb run --jobs``: :mod:`sentemb.runs.side_by_side`)."""
    wanted = None if names is None else list(names)
    seen: set[str] = set()
    while True:
        grid = ask()
        todo = [
            (name, spec)
            for name in (wanted if wanted is not None else grid)
            if name in grid
            for spec in grid[name]
            if spec.run_id not in seen
        ]
        if not todo:
            return seen
        seen.update(spec.run_id for _, spec in todo)
        if run_many is not None and len(todo) > 1:
            run_many(todo)
            continue
        for name, spec in todo:
            run(name, spec)
