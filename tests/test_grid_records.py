"""collect_records: a report's records of every row and seed, running only what the run set holds."""

from types import SimpleNamespace

import pytest

from sentemb.report import grid_records
from sentemb.runs.execute import NotRun


def _spec(run_id):
    return SimpleNamespace(run_id=run_id)


def _grid(profile, extended=True):
    """Row 'a' is core with one seed in the core and three when extended; row 'b' is extended only."""
    if extended:
        return {"a": (_spec("a42"), _spec("a43"), _spec("a44")), "b": (_spec("b42"),)}
    return {"a": (_spec("a42"),)}


def test_seeds_outside_the_run_set_are_loaded_never_run_and_left_out_when_missing(monkeypatch):
    stored = {"a42": {"run_id": "a42"}, "a44": {"run_id": "a44"}}
    ran = []

    def ensure(spec, run_missing=True, progress=True):
        if spec.run_id in stored:
            return stored[spec.run_id]
        if not run_missing:
            raise NotRun(spec.run_id)
        ran.append(spec.run_id)
        stored[spec.run_id] = {"run_id": spec.run_id}
        return stored[spec.run_id]

    monkeypatch.setattr(grid_records, "ensure", ensure)
    records = grid_records.collect_records(_grid, "small", run_missing=True, extended=False)
    assert [r["run_id"] for r in records["a"]] == ["a42", "a44"] and records["b"] == [] and ran == []
    stored.pop("a42")
    records = grid_records.collect_records(_grid, "small", run_missing=True, extended=False)
    assert ran == ["a42"]  # a spec of the run set is run when missing ...
    stored.pop("a42")
    with pytest.raises(NotRun):  # ... and is an error when running is disabled
        grid_records.collect_records(_grid, "small", run_missing=False, extended=False)
    records = grid_records.collect_records(_grid, "small", run_missing=True, extended=True)
    assert [r["run_id"] for r in records["a"]] == ["a42", "a43", "a44"] and ran[-2:] == ["a43", "b42"]
