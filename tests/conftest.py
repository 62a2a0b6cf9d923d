"""Shared fixtures. Tests never write into the repository: results, figures and caches go to tmp."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

torch.set_num_threads(min(2, torch.get_num_threads()))


@pytest.fixture(autouse=True)
def isolated_outputs(tmp_path, monkeypatch):
    monkeypatch.setenv("SENTEMB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("SENTEMB_FIGURES", str(tmp_path / "figures"))
    monkeypatch.setenv("SENTEMB_CACHE", str(tmp_path / "cache"))
    return tmp_path


def mirror() -> Path | None:
    """The offline mirror, or None when SENTEMB_DATA is unset (then the mirror-backed tests skip).

    A SENTEMB_DATA that is set but is not a directory is a mistake, not a reason to skip: the session fails
    at once. So does CI (CI=true) without a mirror, where skipping would hide every mirror-backed test."""
    value = os.environ.get("SENTEMB_DATA", "").strip()
    if value and not Path(value).is_dir():
        pytest.exit(f"SENTEMB_DATA={value} is not a directory: point it at the offline mirror "
                    "(e.g. ../shared/datasets) or unset it to skip the mirror-backed tests", returncode=2)
    if not value and os.environ.get("CI", "").lower() in ("1", "true"):
        pytest.exit("CI runs without SENTEMB_DATA: the mirror-backed tests would be skipped; set it "
                    "(.ci/run does when ../shared/datasets exists)", returncode=2)
    return Path(value) if value else None


def require_committed_small_records(run_ids) -> None:
    """Fail when some of a grid's runs have committed small-profile records and others do not (a changed spec or
    SMAC proposal orphaned them); skip, saying why, when none has: the records of earlier code were removed and the
    paper's regeneration under ``CODE_VERSION`` is pending (README, "Status")."""
    from sentemb import settings

    folder = settings.REPO_ROOT / "results" / "runs" / "small"
    missing = [run_id for run_id in run_ids if not (folder / f"{run_id}.json").is_file()]
    if missing and len(missing) == len(run_ids):
        pytest.skip("no committed small-profile record of this grid: its regeneration is pending")
    assert not missing, f"grid runs without a committed record: {sorted(missing)}"


needs_mirror = pytest.mark.skipif(
    mirror() is None,
    reason="no offline mirror configured: set SENTEMB_DATA=../shared/datasets to run the data tests",
)
