"""The contract every paper of the registry keeps (``sentemb.paper.Paper``), checked once per paper."""

from __future__ import annotations

import inspect

import nbformat
import pandas as pd
import pytest
from conftest import require_committed_small_records

from sentemb import settings
from sentemb.errors import ConfigError
from sentemb.paper import Paper, get_paper, registry, reproduced_papers
from sentemb.profiles import PROFILES

PAPERS = list(registry())
REPRODUCED = list(reproduced_papers())
HOOKS = ("grid", "tables", "claim_cells", "summary")


def test_the_registry_lists_every_paper_folder_once_the_overview_last():
    folders = sorted(p.parent.name for p in (settings.REPO_ROOT / "papers").glob("*/paper.py"))
    assert sorted(PAPERS) == folders and len(set(PAPERS)) == len(PAPERS)
    assert PAPERS[-1] == "overview" and "overview" not in REPRODUCED


def test_a_paper_that_misses_a_hook_cannot_be_made():
    for hook in HOOKS:
        members = {h: (lambda self, *a, **k: None) for h in HOOKS if h != hook}
        incomplete = type("Incomplete", (Paper,), {"name": "incomplete", **members})
        with pytest.raises(TypeError, match=hook):
            incomplete()


def test_an_unknown_paper_is_a_clear_error():
    with pytest.raises(ConfigError, match="unknown paper 'bert'; choose from simcse"):
        get_paper("bert")


@pytest.mark.parametrize("name", PAPERS)
def test_metadata_hooks_and_folder(name):
    paper = get_paper(name)
    assert paper.name == name and paper.title and paper.citation and paper.official_code
    for hook in (*HOOKS, "derived", "figures", "not_run", "collect", "write_tables", "coverage", "build"):  # the base's
        mine, base = (inspect.signature(getattr(cls, hook)).parameters for cls in (type(paper), Paper))
        assert [(p.name, p.default) for p in mine.values()] == [(p.name, p.default) for p in base.values()], hook
    folder = settings.REPO_ROOT / "papers" / name
    assert (folder / "README.md").is_file() and (folder / "experiments.py").is_file()
    assert (settings.REPO_ROOT / "notebooks" / f"{name}.ipynb").is_file()
    assert (folder / "claims.yaml").is_file() == paper.reproduces
    assert (folder / "reported" / "index.csv").is_file() == paper.reproduces


@pytest.mark.parametrize("name", PAPERS)
def test_the_notebook_calls_the_paper_through_the_contract(name):
    notebook = nbformat.read(settings.REPO_ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    source = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert f'get_paper("{name}")' in source
    assert source.count("paper.build(") == 1, "a notebook's set-up is one call: paper.build(profile, ...)"
    for hook in ("collect", "derived", "tables", "write_tables", "figures"):  # Paper.build's stages, never again
        assert f"paper.{hook}(" not in source, hook


@pytest.mark.parametrize("name", REPRODUCED)
def test_coverage_lists_every_table_and_figure_of_the_paper(name):
    coverage = get_paper(name).coverage()
    index = pd.read_csv(settings.REPO_ROOT / "papers" / name / "reported" / "index.csv", dtype=str)
    assert list(coverage["item"]) == list(index["item"])
    assert coverage["status"].str.len().gt(0).all() and coverage["where / why"].str.len().gt(0).all()


@pytest.mark.parametrize("profile", list(PROFILES))
@pytest.mark.parametrize("name", PAPERS)
def test_every_grid_row_has_specs_of_its_profile(name, profile):
    grid = get_paper(name).grid(profile, extended=True)
    core = get_paper(name).grid(profile, extended=False)
    assert grid and set(core) <= set(grid)
    for specs in grid.values():
        assert all(spec.profile == profile for spec in specs)
        assert len({spec.seed for spec in specs}) == len(specs)


@pytest.mark.parametrize("name", PAPERS)
def test_committed_small_records_match_the_grid(name):
    """Every run of the small grid (its --extended rows included) has a committed record: a changed spec or search
    proposal would orphan them."""
    grid = get_paper(name).grid("small", extended=True)
    require_committed_small_records(name, [spec.run_id for specs in grid.values() for spec in specs])
