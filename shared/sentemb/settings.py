"""Where things live. Every location can be overridden by one environment variable.

| variable          | default                         | what                                              |
|-------------------|---------------------------------|---------------------------------------------------|
| SENTEMB_DATA      | (unset)                         | offline mirror with the downloads' layout         |
| SENTEMB_CACHE     | ~/.cache/sentemb                | downloads, checkpoints, embedding cache           |
| SENTEMB_RESULTS   | <repo>/results                  | run records and reproduced tables                 |
| SENTEMB_FIGURES   | <repo>/figures                  | regenerated figures                               |
| SENTEMB_NOTEBOOKS | <repo>/notebooks                | executed notebooks (small: <paper>.ipynb itself)  |
| SENTEMB_MODELS    | <repo>/shared/models            | the archive's own backbones (``pretrain --publish``) |
| SENTEMB_MINILM_DIR | (the PyPI package's)          | all-MiniLM-L6-v2's files elsewhere (a GPU machine)  |
| SENTEMB_STATE_EVERY_S | 300                         | seconds between a training run's resumable states |

When SENTEMB_DATA is unset, data is read from ``$SENTEMB_CACHE/data`` where ``python -m sentemb
data fetch`` puts the real downloads (full profile).
"""

from __future__ import annotations

import os
from pathlib import Path

from sentemb.errors import ConfigError

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


def models_root() -> Path:
    """The archive's own pretrained backbones, one folder each (the only place in the repository with weights)."""
    value = os.environ.get("SENTEMB_MODELS", "").strip()
    return Path(value).expanduser() if value else REPO_ROOT / "shared" / "models"


def checkpoints_root() -> Path:
    return cache_root() / "checkpoints"


def state_every_s() -> float:
    """How often a training run writes its resumable ``state.pt`` (at an STS-B dev evaluation once this many seconds
    have passed since the last write): ``SENTEMB_STATE_EVERY_S``, default 300. On a cluster that preempts often, lower
    it (a requeued job resumes from the last state)."""
    value = os.environ.get("SENTEMB_STATE_EVERY_S", "").strip()
    try:
        seconds = float(value) if value else 300.0
    except ValueError:
        raise ConfigError(f"SENTEMB_STATE_EVERY_S={value!r} is not a number of seconds") from None
    if seconds < 0:
        raise ConfigError(f"SENTEMB_STATE_EVERY_S={value!r} must be >= 0 (0: at every evaluation)")
    return seconds


def embeddings_cache_root() -> Path:
    return cache_root() / "embeddings"


def paper_output_dirs(paper: str, profile: str) -> tuple[Path, Path]:
    """Where a paper's reproduced tables and its figures for ``profile`` go."""
    return results_root() / paper / profile, figures_root() / paper / profile
