"""requirements.lock pins what pyproject.toml asks for, and the environment the tests run in is the lock's."""

import importlib.metadata
import re

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from sentemb.settings import REPO_ROOT

TORCH = "2.13.0"


def _locked() -> dict[str, str]:
    pins = {}
    for line in (REPO_ROOT / "requirements.lock").read_text().splitlines():
        if line and not line.startswith((" ", "#")):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def _declared() -> list[Requirement]:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["dev"]]


def test_every_declared_dependency_is_pinned_within_its_range():
    pins = _locked()
    for requirement in _declared():
        name = canonicalize_name(requirement.name)
        if name == "torch":
            assert name not in pins and requirement.specifier.contains(TORCH)
            continue
        assert name in pins, f"{name} is in pyproject.toml but not in requirements.lock: run scripts/refresh_lock.sh"
        assert requirement.specifier.contains(pins[name]), f"{name}=={pins[name]} is outside {requirement}"


def test_torch_is_pinned_alike_where_it_is_installed():
    bootstrap = (REPO_ROOT / "scripts" / "bootstrap.sh").read_text()
    environment = (REPO_ROOT / "environment.yml").read_text()
    assert re.findall(r"torch==([\d.]+)", bootstrap) == [TORCH]
    assert re.findall(r"torch==([\d.]+)", environment) == [TORCH]
    assert "-r requirements.lock" in environment and '-r "$root/requirements.lock"' in bootstrap


def test_the_environment_is_the_locked_one():
    mismatched = []
    for name, version in _locked().items():
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            installed = None
        if installed is None or Version(installed) != Version(version):
            mismatched.append(f"{name}: locked {version}, installed {installed}")
    if mismatched:
        pytest.fail(
            "the environment differs from requirements.lock (rerun scripts/bootstrap.sh):\n  " + "\n  ".join(mismatched)
        )
    assert importlib.metadata.version("torch").split("+")[0] == TORCH
