"""A paper's notebook over the store a from-scratch ``./run_all.sh`` makes without ``--extended``: only the core
grid's runs (and the derived records of those runs), no extended row.

The committed store holds every row, so the committed notebooks never meet a core grid alone (a notebook that still
asks for an extended row, as SimCSE's Figure 2 once asked for ``dropout_0``, fails only from scratch). Each notebook
here runs with ``run_missing=False``
(what is missing is shown as not run; nothing trains) over a copy of the committed records of the core grids of the
papers run_all.sh runs up to it (a later paper reads the runs of an earlier one, e.g. SimCSE's backbone)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from sentemb import settings
from sentemb.paper import get_paper, registry
from sentemb.runs.fixed_point import run_to_fixed_point

COMMITTED = settings.REPO_ROOT / "results" / "runs" / "small"
RUN_ALL_ORDER = tuple(registry())  # run_all.sh's papers, in its order


def fill_with_core_runs(store, papers) -> set[str]:
    """Copy into ``store`` the committed records of each paper's small grid without --extended, paper by paper as
    run_all.sh runs them, each grid asked again until it proposes nothing new (the non-contrastive grid proposes its
    trials and headline rows from the records there, the overview's from the papers' grids); return their run ids."""
    ids: set[str] = set()
    for paper in papers:

        def load(name, spec, paper=paper):
            path = COMMITTED / f"{spec.run_id}.json"
            assert path.is_file(), f"{paper}: core run {name} ({spec.run_id}) has no committed record"
            shutil.copy(path, store)

        ids |= run_to_fixed_point(lambda paper=paper: get_paper(paper).grid("small", extended=False), load)
    return ids


@pytest.mark.slow
@pytest.mark.parametrize("paper", ["simcse", "noncontrastive", "overview"])  # the grids with extended rows
def test_notebook_runs_over_the_core_grid_alone(paper, isolated_outputs):
    store = isolated_outputs / "results" / "runs" / "small"
    (store / "derived").mkdir(parents=True)
    ids = fill_with_core_runs(store, RUN_ALL_ORDER[: RUN_ALL_ORDER.index(paper) + 1])
    for path in (COMMITTED / "derived").glob("*.json"):
        if json.loads(path.read_text(encoding="utf-8"))["run_id"] in ids:
            shutil.copy(path, store / "derived")
    derived_before = sorted(p.name for p in (store / "derived").glob("*.json"))
    # the overview runs as run_all.sh runs it (allowed to train and compute): without --extended it must do neither
    no_run = [] if paper == "overview" else ["--no-run"]
    result = subprocess.run(
        [sys.executable, "-m", "sentemb", "notebook", "--paper", paper, "--profile", "small", *no_run],
        cwd=settings.REPO_ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    notebook = (isolated_outputs / "notebooks" / f"{paper}.ipynb").read_text(encoding="utf-8")
    assert sorted(p.stem for p in store.glob("*.json")) == sorted(ids)  # nothing trained or added
    assert sorted(p.name for p in (store / "derived").glob("*.json")) == derived_before
    if paper == "overview":  # TNCSE's wiki-only row is outside TNCSE's core: listed as not run, not silently absent
        assert "not run (no records" in notebook and "TNCSE" in notebook
