"""Provenance of a run: code (commit, dirty flag), environment (versions, device, threads), time."""

from __future__ import annotations

import datetime as dt
import platform
import subprocess
from importlib import metadata

import torch

from sentemb import settings

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


def collect(device: torch.device) -> dict:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "commit": _git("rev-parse", "HEAD"),
        "dirty": None if status is None else bool(status),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": versions,
        "device": device_description(device),
        "torch_threads": torch.get_num_threads(),
        "hostname": platform.node(),
        "started_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
