"""Where things live. Every location can be overridden by one environment variable.

| variable          | default                         | what                                              |
|-------------------|---------------------------------|---------------------------------------------------|
| SENTEMB_DATA      | (unset)                         | offline mirror with the downloads' layout         |
| SENTEMB_CACHE     | ~/.cache/sentemb                | downloads, checkpoints, embedding cache           |
| SENTEMB_RESULTS   | <repo>/results                  | run records and reproduced tables                 |
| SENTEMB_FIGURES   | <repo>/figures                  | regenerated figures                               |
| SENTEMB_NOTEBOOKS | <repo>/notebooks                | executed notebooks (small: <paper>.ipynb itself)  |

When SENTEMB_DATA is unset, data is read from ``$SENTEMB_CACHE/data`` where ``python -m sentemb
data fetch`` puts the real downloads (full profile).
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def data_root() -> Path | None:
    """The offline mirror (``SENTEMB_DATA``), or None when reading from the download cache."""
    value = os.environ.get("SENTEMB_DATA", "").strip()
    return Path(value).expanduser().resolve() if value else None


def cache_root() -> Path:
    value = os.environ.get("SENTEMB_CACHE", "").strip()
    return Path(value).expanduser() if value else Path.home() / ".cache" / "sentemb"


def download_root() -> Path:
    """Where the full profile's downloads are unpacked (same layout as the mirror)."""
    return cache_root() / "data"


def results_root() -> Path:
    value = os.environ.get("SENTEMB_RESULTS", "").strip()
    return Path(value).expanduser() if value else REPO_ROOT / "results"


def figures_root() -> Path:
    value = os.environ.get("SENTEMB_FIGURES", "").strip()
    return Path(value).expanduser() if value else REPO_ROOT / "figures"


def notebooks_root() -> Path:
    """Where executed notebooks go: the small profile's replaces ``<paper>.ipynb`` there, others go to
    ``executed/<profile>/``. The sources are always read from ``<repo>/notebooks``."""
    value = os.environ.get("SENTEMB_NOTEBOOKS", "").strip()
    return Path(value).expanduser() if value else REPO_ROOT / "notebooks"


def checkpoints_root() -> Path:
    return cache_root() / "checkpoints"


def embeddings_cache_root() -> Path:
    return cache_root() / "embeddings"


def paper_output_dirs(paper: str, profile: str) -> tuple[Path, Path]:
    """Where a paper's reproduced tables and its figures for ``profile`` go."""
    return results_root() / paper / profile, figures_root() / paper / profile
