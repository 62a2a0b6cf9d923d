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
