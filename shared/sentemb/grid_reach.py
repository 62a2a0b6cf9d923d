"""A grid's core rows, plus on a rehearsal profile one row for each facet value only other rows reach.

The rehearsal (``./run_all.sh --profile rehearsal``) runs the full profile's code paths at a tiny scale. Its core rows
alone leave objectives, augmentations, training sets, evaluations and poolers of the full grid untouched (SimCSE's
crop and word-deletion views, SimCSE++'s NLI rows, ...), so a path a researcher's GPU run takes could crash the first
time it runs. On a profile with ``Profile.reaches_every_facet`` each paper's core selection gains, in the grid's
order, the first row that has a facet value the rows kept so far lack; the rest stay outside the budget
(``--extended`` runs them all).

Facets (:data:`FACETS`): the objective, the augmentation (``objective_params["augmentation"]``), the training data,
each final evaluation group and the pooler. ``tests/test_rehearsal_reach.py`` checks the rehearsal grids against the
full ones facet by facet, the backbone included.
"""

from __future__ import annotations

from collections.abc import Iterable

from sentemb.profiles import Profile
from sentemb.spec import RunSpec

FACETS = ("objective", "augmentation", "train_data", "final_eval", "pooler")


def facet_values(spec: RunSpec) -> set[tuple[str, str]]:
    """(facet, value) pairs of one spec."""
    values = {
        ("objective", spec.objective),
        ("augmentation", str(spec.objective_params.get("augmentation", "none"))),
        ("train_data", str(spec.train_data)),
        ("pooler", spec.pooler),
    }
    return values | {("final_eval", group) for group in spec.final_eval.split(",")}


def core_rows(runs: dict[str, RunSpec], core: Iterable[str], profile: Profile) -> dict[str, RunSpec]:
    """The rows of ``runs`` named in ``core``, in grid order, and on a profile that reaches every facet also each
    first row (in grid order) with a facet value none of the rows kept before it has."""
    core = set(core)
    kept = {name: spec for name, spec in runs.items() if name in core}
    if not profile.reaches_every_facet:
        return kept
    reached = set().union(*(facet_values(spec) for spec in kept.values()))
    for name, spec in runs.items():
        if name not in kept and facet_values(spec) - reached:
            kept[name] = spec
            reached |= facet_values(spec)
    return {name: spec for name, spec in runs.items() if name in kept}
