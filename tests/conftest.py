"""Shared fixtures. Tests never write into the repository: results, figures and caches go to tmp."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

if os.environ.get("PYTEST_XDIST_WORKER"):
    # run_tests.sh runs two pytest-xdist workers on a 2-core machine: one thread each (and in the processes the tests
    # start), since two workers with two OpenMP threads each on two cores run slower than one
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = "1"
    torch.set_num_threads(1)
else:
    torch.set_num_threads(min(2, torch.get_num_threads()))


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist's worksteal (run_tests.sh), each worker starts with a contiguous chunk of the collection and
    later steals from the tail of the other's. The tests marked ``slow`` (seconds each: notebooks, fresh processes,
    the real MiniLM) go to the front of the chunks, dealt round-robin, so that no worker ends the session alone on
    a long test. Without xdist the order is pytest's."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers < 2:
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    rest = [item for item in items if not item.get_closest_marker("slow")]
    sizes, remaining = [], len(items)
    for k in range(workers):  # the chunk sizes xdist's worksteal scheduler hands out
        sizes.append(remaining // (workers - k))
        remaining -= sizes[-1]
    ordered = []
    for k, size in enumerate(sizes):
        chunk = slow[k::workers]
        take = max(0, size - len(chunk))
        chunk += rest[:take]
        rest = rest[take:]
        ordered += chunk
    items[:] = ordered + rest


@pytest.fixture(autouse=True)
def isolated_outputs(tmp_path, monkeypatch):
    monkeypatch.setenv("SENTEMB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("SENTEMB_FIGURES", str(tmp_path / "figures"))
    monkeypatch.setenv("SENTEMB_NOTEBOOKS", str(tmp_path / "notebooks"))
    monkeypatch.setenv("SENTEMB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SENTEMB_RUN_EVENTS", raising=False)  # run_all.sh's event log is not the tests' to write
    monkeypatch.setenv("SENTEMB_NO_DOWNLOAD", "1")  # a missing data file is an error, never a network request
    return tmp_path


def mirror() -> Path | None:
    """The offline mirror, or None when SENTEMB_DATA is unset (then the mirror-backed tests skip).

    A SENTEMB_DATA that is set but is not a directory is a mistake, not a reason to skip: the session fails
    at once. So does CI (CI=true) without a mirror, where skipping would hide every mirror-backed test."""
    value = os.environ.get("SENTEMB_DATA", "").strip()
    if value and not Path(value).is_dir():
        pytest.exit(
            f"SENTEMB_DATA={value} is not a directory: point it at the offline mirror "
            "(e.g. ../shared/datasets) or unset it to skip the mirror-backed tests",
            returncode=2,
        )
    if not value and os.environ.get("CI", "").lower() in ("1", "true"):
        pytest.exit(
            "CI runs without SENTEMB_DATA: the mirror-backed tests would be skipped; set it "
            "(.ci/run does when ../shared/datasets exists)",
            returncode=2,
        )
    return Path(value) if value else None


def require_committed_small_records(paper: str, run_ids) -> None:
    """Fail when ``paper``'s small-profile tables are committed but some of its grid's runs have no committed record
    (a changed spec or SMAC proposal orphaned them). Without committed tables the paper's regeneration under
    ``CODE_VERSION`` is pending or in progress (README, "Status"): its records so far are a resumable cache, some
    of them shared with other papers' grids, so the test skips, saying how far it got."""
    from sentemb import settings

    folder = settings.REPO_ROOT / "results" / "runs" / "small"
    missing = [run_id for run_id in run_ids if not (folder / f"{run_id}.json").is_file()]
    tables = settings.REPO_ROOT / "results" / paper / "small"
    if not (tables.is_dir() and any(tables.glob("*.csv"))):
        pytest.skip(
            f"{paper}: no committed small-profile tables, regeneration pending "
            f"({len(run_ids) - len(missing)} of {len(run_ids)} grid runs recorded so far)"
        )
    assert not missing, f"{paper}'s tables are committed but grid runs have no committed record: {sorted(missing)}"


needs_mirror = pytest.mark.skipif(
    mirror() is None,
    reason="no offline mirror configured: set SENTEMB_DATA=../shared/datasets to run the data tests",
)


TINY_SPEC = dict(  # a smoke run of a few seconds on generated rows, for tests of the run machinery
    profile="smoke",
    backbone="tiny-random-bert",
    pooler="cls_before_pooler",
    objective="simcse_unsup",
    train_data="wiki_sentences_combined",
    steps=6,
    batch_size=8,
    eval_every=3,
    lr=1e-3,
    final_eval="stsb_dev",
    synthetic_data=True,
)


@pytest.fixture(scope="session")
def pretrain_cache(tmp_path_factory) -> Path:
    """A $SENTEMB_CACHE holding the packed pretraining text (``sentemb.pretrain.corpus``), made once per session and
    shared by the xdist workers: the first packs it under a file lock (tokenising the text takes about 7 s), the others
    find it. Without the mirror it is an empty folder (the tests that pack are skipped then)."""
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "pretrain-cache"
    root.mkdir(parents=True, exist_ok=True)
    if mirror() is None:
        return root
    from sentemb.models.backbone import MINILM, load_tokenizer
    from sentemb.pretrain.configs import PretrainConfig
    from sentemb.pretrain.corpus import load_corpus

    with FileLock(str(root / ".lock")), pytest.MonkeyPatch.context() as patch:
        patch.setenv("SENTEMB_CACHE", str(root))
        load_corpus(load_tokenizer(MINILM), PretrainConfig().max_len)
    return root
