"""The committed executed notebooks are the main command's executions (``./run_all.sh``: small profile, no
``--extended``), so a cached run of it re-executes them byte for byte and leaves the working tree clean. A notebook
committed from an ``--extended`` run differs in its injected parameters."""

from __future__ import annotations

import json

import pytest

from sentemb import settings

NOTEBOOKS = sorted((settings.REPO_ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebook_was_executed_by_the_main_command(path):
    parameters = json.loads(path.read_text(encoding="utf-8"))["metadata"].get("papermill", {}).get("parameters")
    assert parameters is not None, f"{path.name} has no papermill execution: run ./run_all.sh --paper {path.stem}"
    assert parameters == {"profile": "small", "run_missing": True}, (
        f"{path.name} was executed with {parameters}; re-execute it with ./run_all.sh --paper {path.stem}"
    )


COPIES = sorted((settings.REPO_ROOT / "notebooks" / "executed").glob("*/*.ipynb"))


@pytest.mark.parametrize("path", COPIES, ids=[f"{p.parent.name}-{p.stem}" for p in COPIES])
def test_another_profiles_copy_opens_with_its_banner_under_a_fixed_id(path):
    """A copy for another profile starts with the profile's banner, whose cell id is fixed (not nbformat's random one),
    so a cached rerun of that profile rewrites the copy byte for byte."""
    first = json.loads(path.read_text(encoding="utf-8"))["cells"][0]
    assert first["cell_type"] == "markdown" and first["id"] == f"profile-{path.parent.name}", first["id"]
