"""No record from a modified tree in the committed store: the runner refuses to compute a run or derived record for
the repository's ``results/`` when the tree's code differs from its commit, before any training; a scratch store
takes it."""

from __future__ import annotations

import pytest

from sentemb.errors import SentembError
from sentemb.runs import derived, execute, provenance
from sentemb.spec import RunSpec


@pytest.fixture
def dirty(monkeypatch):
    monkeypatch.setattr(provenance, "code_is_dirty", lambda: True)


def test_a_modified_tree_cannot_write_into_the_committed_store_and_trains_nothing(dirty, monkeypatch):
    monkeypatch.delenv("SENTEMB_RESULTS", raising=False)  # the repository's results/
    trained = []
    monkeypatch.setattr(execute, "_run", lambda *a, **k: trained.append(a))
    monkeypatch.setattr(execute, "recorded", lambda spec, run_missing=True: None)  # no record yet
    with pytest.raises(SentembError, match="differs from its commit") as refused:
        execute.ensure(RunSpec(profile="smoke", backbone="tiny-random-bert"))
    assert "SENTEMB_RESULTS=" in str(refused.value) and trained == []
    with pytest.raises(SentembError, match="differs from its commit"):
        derived._ensure({"run_id": "x", "profile": "smoke"}, "an analysis", {}, None, True, None)


def test_a_scratch_store_or_a_clean_tree_is_not_refused(dirty, monkeypatch, tmp_path):
    monkeypatch.setenv("SENTEMB_RESULTS", str(tmp_path / "results"))
    provenance.refuse_dirty_committed_store()  # scratch: allowed
    monkeypatch.delenv("SENTEMB_RESULTS")
    monkeypatch.setattr(provenance, "code_is_dirty", lambda: False)
    provenance.refuse_dirty_committed_store()  # clean: allowed
