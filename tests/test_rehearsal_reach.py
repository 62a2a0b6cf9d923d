"""What the rehearsal profile reaches of the full profile (issue 67): each paper's rehearsal grid (its core rows, as
``./run_all.sh --profile rehearsal`` runs it) against its full grid with every row, facet by facet: the objectives,
the augmentations, the training data, the evaluation groups, the poolers and the backbones. What a full grid has and
the rehearsal does not reach is listed here, by paper, with the reason; a new gap fails the test, and so does a gap
that closed (remove it from the list)."""

from __future__ import annotations

import pytest

from sentemb.paper import registry

FACETS = ("objective", "augmentation", "train_data", "final_eval", "pooler", "backbone")

# What the rehearsal leaves unreached, with the reason. Each paper's core rows gain one row per facet value that only
# other rows reach (sentemb.grid_reach.core_rows, Profile.reaches_every_facet), so the papers' own grids reach all.
UNREACHED = {
    # the overview's TNCSE method is TNCSE's tncse_wiki row (Table 6), outside TNCSE's core; TNCSE's own rehearsal
    # trains the tncse objective (its core row and the rows grid_reach adds)
    "overview": {"objective": {"tncse"}},
}


def facets(grid) -> dict[str, set[str]]:
    """Each facet's values over every spec of ``grid``."""
    found: dict[str, set[str]] = {facet: set() for facet in FACETS}
    for specs in grid.values():
        for spec in specs:
            found["objective"].add(spec.objective)
            found["augmentation"].add(str(spec.objective_params.get("augmentation", "none")))
            found["train_data"].add(str(spec.train_data))
            found["final_eval"].update(spec.final_eval.split(","))
            found["pooler"].add(spec.pooler)
            found["backbone"].add(str(spec.backbone))
    return found


@pytest.mark.parametrize("name", list(registry()))
def test_the_rehearsal_reaches_every_facet_of_the_full_grid_but_those_listed(name):
    paper = registry()[name]
    full, rehearsed = facets(paper.grid("full", extended=True)), facets(paper.grid("rehearsal", extended=False))
    missing = {facet: full[facet] - rehearsed[facet] for facet in FACETS if full[facet] - rehearsed[facet]}
    assert missing == UNREACHED.get(name, {}), f"{name}: unreached facets changed: {missing}"


def test_core_rows_add_the_first_row_of_each_unreached_value_in_grid_order_only_on_a_reaching_profile():
    from sentemb.grid_reach import core_rows, facet_values
    from sentemb.paper import get_paper
    from sentemb.profiles import get_profile

    runs = get_paper("simcse").paper_grid()
    assert list(core_rows(runs, {"unsup"}, get_profile("small"))) == ["unsup"]
    kept = core_rows(runs, {"unsup"}, get_profile("rehearsal"))
    assert list(kept) == [name for name in runs if name in kept] and "unsup" in kept  # grid order
    everything = set().union(*(facet_values(spec) for spec in runs.values()))
    assert set().union(*(facet_values(spec) for spec in kept.values())) == everything
    seen = facet_values(runs["unsup"])
    for name, spec in kept.items():  # each added row is the first to bring a value
        if name != "unsup":
            assert facet_values(spec) - seen, name
            earlier = [n for n in runs if n not in kept and list(runs).index(n) < list(runs).index(name)]
            assert all(not (facet_values(runs[n]) - seen) for n in earlier), name
        seen |= facet_values(spec)
