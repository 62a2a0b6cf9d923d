"""The provenance's dirty flag: code that differs from the commit, not outputs or prose written by a regeneration."""

import shutil
import subprocess

import pytest

from sentemb import settings
from sentemb.runs import provenance

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(root, *args):
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True, capture_output=True
    )


@pytest.fixture
def repo(tmp_path, monkeypatch):
    for path in (
        "shared/sentemb/loss.py",
        "papers/p/report.py",
        "results/p/small/table.csv",
        "figures/p/f.png",
        "notebooks/p.ipynb",
        "papers/p/README.md",
        "README.md",
    ):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("v1\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "init")
    monkeypatch.setattr(settings, "REPO_ROOT", tmp_path)
    return tmp_path


def test_a_clean_tree_is_clean(repo):
    assert provenance.code_is_dirty() is False


@pytest.mark.parametrize(
    "path",
    [
        "results/p/small/table.csv",
        "figures/p/f.png",
        "notebooks/p.ipynb",
        "papers/p/README.md",
        "README.md",
        "results/runs/small/new_record.json",
    ],
)
def test_outputs_prose_and_new_records_do_not_make_it_dirty(repo, path):
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text("v2\n")
    assert provenance.code_is_dirty() is False


@pytest.mark.parametrize("path", ["shared/sentemb/loss.py", "papers/p/report.py"])
def test_modified_code_makes_it_dirty(repo, path):
    (repo / path).write_text("v2\n")
    assert provenance.code_is_dirty() is True
