"""Each paper's README paragraph on the full profile (sentemb.report.full_profile): its cost is the committed GPU
plan's row, its rehearsal counts are the grids', and a paper without a plan row (the overview) gets none."""

import csv

import pytest

from sentemb.paper import registry
from sentemb.report.full_profile import GPU_PLAN, full_profile_markdown


def plan_rows():
    with GPU_PLAN.open(newline="") as rows:
        return {row["paper"]: row for row in csv.DictReader(rows)}


@pytest.mark.parametrize("name", list(registry()))
def test_the_full_profile_paragraph_states_the_plans_cost_and_the_rehearsals_rows(name):
    paper = registry()[name]
    text = full_profile_markdown(paper)
    plan = plan_rows().get(name)
    if plan is None:
        assert text == ""
        return
    assert f"about **{plan['gpu_h']} H100 GPU-hours**" in text and f"{int(plan['steps']):,} steps" in text
    assert f"{plan['runs']} runs ({plan['training_runs']} trained)" in text
    rows = (len(paper.grid("rehearsal", extended=False)), len(paper.grid("full", extended=True)))
    assert f"{rows[0]} of the full grid's {rows[1]} rows" in text
    assert "every value of the full grid's" in text  # tests/test_rehearsal_reach.py: the papers reach every facet
    assert all(item in text for item in paper.full_profile_unrehearsed)
