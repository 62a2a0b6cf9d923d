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
    value = os.environ.get("SENTEMB_DATA", "").strip()
    return Path(value) if value and Path(value).is_dir() else None


needs_mirror = pytest.mark.skipif(
    mirror() is None,
    reason="no offline mirror configured: set SENTEMB_DATA=../shared/datasets to run the data tests",
)
