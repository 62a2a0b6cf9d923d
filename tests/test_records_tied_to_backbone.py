"""A run record is tied to its backbone's bytes: a run id hashes the backbone's name, so a record made with other
weights under the same name (an archive backbone published again elsewhere, another package version) must not load
as if it were this code's and these weights' result."""

from __future__ import annotations

import json

import pytest

from sentemb.errors import SentembError
from sentemb.runs import recorded as recorded_module
from sentemb.runs import store
from sentemb.spec import RunSpec

NAME = "sentemb-test-two-weights"


def _backbone(root, weights: bytes) -> str:
    """An archive backbone folder under ``root`` whose MANIFEST names ``weights``; its revision."""
    import hashlib

    folder = root / NAME
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(weights)
    sha = hashlib.sha256(weights).hexdigest()
    (folder / "MANIFEST.json").write_text(json.dumps({"name": NAME, "files": {"model.safetensors": sha}}))
    return f"sha256:{sha}"


def test_a_record_made_with_other_weights_under_the_same_name_is_refused_as_stale(tmp_path, monkeypatch):
    first, second = tmp_path / "models-a", tmp_path / "models-b"
    made_with, other = _backbone(first, b"weights A"), _backbone(second, b"weights B")
    monkeypatch.setenv("SENTEMB_RESULTS", str(tmp_path / "results"))
    spec = RunSpec(profile="smoke", backbone=NAME)
    store.save(
        {"profile": spec.profile, "run_id": spec.run_id, "spec": spec.as_dict(),
         "provenance": {"backbone_revision": made_with}}
    )  # fmt: skip

    monkeypatch.setenv("SENTEMB_MODELS", str(first))
    recorded_module.current_revision.cache_clear()
    assert recorded_module.recorded(spec)["run_id"] == spec.run_id  # the weights it was made with: loads

    monkeypatch.setenv("SENTEMB_MODELS", str(second))
    recorded_module.current_revision.cache_clear()
    with pytest.raises(SentembError) as stale:
        recorded_module.recorded(spec)
    message = str(stale.value)
    assert "stale" in message and made_with in message and other in message and "Fix:" in message
    recorded_module.current_revision.cache_clear()


def test_a_record_without_a_backbone_revision_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("SENTEMB_RESULTS", str(tmp_path / "results"))
    spec = RunSpec(profile="smoke", backbone="tiny-random-bert")
    store.save({"profile": spec.profile, "run_id": spec.run_id, "spec": spec.as_dict(), "provenance": {}})
    with pytest.raises(SentembError, match="an unrecorded revision"):
        recorded_module.recorded(spec)
