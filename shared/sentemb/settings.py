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
| SENTEMB_NO_DOWNLOAD | (unset)                       | 1: a missing data file is an error, not downloaded  |

A data file is looked for in three places, in order: the offline mirror (``SENTEMB_DATA``, when set), the training
text that ships with the archive (``<repo>/data``, CC BY-SA: the small profile's corpora and the pretraining text), then
the download cache ``$SENTEMB_CACHE/data``, where ``python -m sentemb data fetch`` puts the evaluation sets and the
full profile's corpora (:func:`data_roots`). A registered file found nowhere that has a download source is
fetched into the cache when a run needs it, unless SENTEMB_NO_DOWNLOAD=1 (:func:`downloads_enabled`).
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


def shipped_data_root() -> Path:
    """The training text that ships with the archive (``data/`` at the repository's top; its MANIFEST.tsv and
    ATTRIBUTION.md say where each file comes from and what its licence allows)."""
    return REPO_ROOT / "data"


def data_roots() -> list[tuple[Path, str]]:
    """Where a data file is looked for, in order, each with how an error message names it: the mirror
    (``SENTEMB_DATA``, when set), the shipped ``data/`` folder, the download cache."""
    roots = []
    mirror = data_root()
    if mirror is not None:
        roots.append((mirror, f"the offline mirror SENTEMB_DATA={mirror}"))
    roots.append((shipped_data_root(), f"the archive's shipped data {shipped_data_root()}"))
    roots.append((download_root(), f"the download cache {download_root()}"))
    return roots


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


def downloads_enabled() -> bool:
    """Whether a missing data file may be downloaded on its own (``files.verified_path``): not when
    ``SENTEMB_NO_DOWNLOAD`` is 1 (or true/yes/on); ``data fetch`` still downloads. Only this variable decides:
    HF_HUB_OFFLINE is the hub's switch for models, not for these files."""
    value = os.environ.get("SENTEMB_NO_DOWNLOAD", "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return True
    if value in ("1", "true", "yes", "on"):
        return False
    raise ConfigError(f"SENTEMB_NO_DOWNLOAD={value!r}: set it to 1 to turn automatic downloads off, or unset it")
