"""No committed record was made by code that computed something else: every run record holds a spec of today's
``CODE_VERSION`` whose run id is its file name, and every derived record belongs to a committed run record.

A fix that changes what the code computes bumps ``CODE_VERSION`` (``sentemb/spec.py``): the records of the earlier
code then fail here until they are regenerated (or removed, and their rows shown as not run)."""

import json

import pytest

from sentemb import settings
from sentemb.spec import CODE_VERSION, RunSpec

RUNS = settings.REPO_ROOT / "results" / "runs"
RECORDS = sorted(RUNS.glob("*/*.json"))
DERIVED = sorted(RUNS.glob("*/derived/*.json"))


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_committed_run_record_is_of_todays_code(path):
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["spec"].get("code_version") == CODE_VERSION, f"{path} was made by earlier code: regenerate it"
    spec = RunSpec.from_dict(record["spec"])
    assert spec.run_id == record["run_id"] == path.stem
    assert spec.as_dict() == record["spec"]


def test_every_committed_derived_record_belongs_to_a_committed_run():
    for path in DERIVED:
        derived = json.loads(path.read_text(encoding="utf-8"))
        assert (path.parent.parent / f"{derived['run_id']}.json").is_file(), f"{path}: its run has no record"
