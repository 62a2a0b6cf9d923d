"""Provenance of a run: code (commit, dirty flag), environment (versions, device, threads), time.

``commit``: HEAD, or ``$SENTEMB_COMMIT`` in a copied tree without git (a GPU machine's copy of the checkout).
``dirty`` says whether the code that computes differs from ``commit``: a tracked file modified outside the outputs
and the prose. A regeneration writes tracked outputs as it goes (one paper's executed notebook, tables and figures
before the next paper's records), and those must not mark the later records as made by uncommitted code; untracked
files (new records) do not count either.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
from importlib import metadata

import torch

from sentemb import settings

# Tracked paths that are outputs or prose, not code (git pathspecs relative to the repository root).
NOT_CODE = ("results", "figures", "notebooks/*.ipynb", "*.md")
PACKAGES = ("torch", "transformers", "tokenizers", "numpy", "scipy", "pandas", "sentemb")


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=settings.REPO_ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _cpu_name() -> str:
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def device_description(device: torch.device) -> str:
    if device.type == "cuda":
        return f"cuda: {torch.cuda.get_device_name(device)} (driver CUDA {torch.version.cuda})"
    return f"cpu: {_cpu_name()}"


def code_is_dirty() -> bool | None:
    """Whether a tracked file other than outputs and prose (``NOT_CODE``) differs from HEAD; None without git."""
    status = _git(
        "status", "--porcelain", "--untracked-files=no", "--", ".", *(f":(exclude){pattern}" for pattern in NOT_CODE)
    )
    return None if status is None else bool(status)


def refuse_dirty_committed_store() -> None:
    """Refuse to compute a record for the committed store (the repository's ``results/``) from a modified tree: such
    a record's code is no commit (55 small records of 2026-11-24 say ``dirty: true``). A scratch store
    (``SENTEMB_RESULTS`` elsewhere) takes records from any tree, each saying whether its tree was dirty."""
    from sentemb import settings
    from sentemb.errors import SentembError

    committed = (settings.REPO_ROOT / "results").resolve()
    if settings.results_root().resolve() != committed or not code_is_dirty():
        return
    raise SentembError(
        f"the tree's code differs from its commit (git status), and the record would go into the committed store "
        f"{committed}: its code would be no commit.\n"
        "  Fix: commit (or stash) the change first, or write to a scratch store: SENTEMB_RESULTS=/tmp/scratch-results"
    )


def package_versions(names=PACKAGES) -> dict[str, str | None]:
    """The installed version of each package (None where it is not installed)."""
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def code_version() -> dict:
    """The code this process runs now: HEAD (``$SENTEMB_COMMIT`` without git) and whether tracked code differs from
    it. Taken when a computation starts: a commit made while it runs is not the code it ran."""
    return {"commit": _git("rev-parse", "HEAD") or os.environ.get("SENTEMB_COMMIT") or None, "dirty": code_is_dirty()}


def collect(device: torch.device) -> dict:
    versions = package_versions()
    return {
        **code_version(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": versions,
        "device": device_description(device),
        "torch_threads": torch.get_num_threads(),
        "hostname": platform.node(),
        "started_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
