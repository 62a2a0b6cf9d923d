"""A spec's run record from the store, checked against the spec: what :func:`sentemb.runs.execute.ensure` returns
when the run needs no training.

Apart from :mod:`sentemb.runs.execute` so that a process that only reads records (``sentemb run`` over a grid that
is already recorded: every paper of a cached ``./run_all.sh``) does not import the training and evaluation code,
about 1.5 s of CPU per process on 2 cores.
"""

from __future__ import annotations

import functools

from sentemb.errors import SentembError
from sentemb.runs import events, store
from sentemb.spec import RunSpec


@functools.cache
def current_revision(backbone: str) -> str:
    """What ``backbone`` resolves to now (:func:`sentemb.models.backbone.backbone_revision`: the package version,
    the pinned hub commit, or ``sha256:`` of the archive's own weights), once a process: hashing a backbone's weights
    for each of hundreds of records would cost seconds."""
    from sentemb.models.backbone import backbone_revision

    return backbone_revision(backbone)


def recorded(spec: RunSpec, run_missing: bool = True) -> dict | None:
    """The record of ``spec``, or None when there is none. A record that cannot be read is moved aside and None is
    returned (``run_missing``) or is an error naming it; a record whose stored spec is not ``spec`` (stale code, or
    edited by hand) is an error, and so is one made with other weights than the spec's backbone names now (its
    ``provenance.backbone_revision``: a run id hashes the backbone's name, not its bytes)."""
    record = store.load(spec.profile, spec.run_id, on_broken="recompute" if run_missing else "raise")
    if record is None:
        return None
    if record.get("spec") != spec.as_dict():
        raise SentembError(
            f"run record {store.record_path(spec.profile, spec.run_id)} does not hold the spec of "
            f"run {spec.run_id} as this code computes it (stale, or edited by hand).\n"
            "  Fix: delete it to run the spec again."
        )
    made_with = record.get("provenance", {}).get("backbone_revision")
    now = current_revision(spec.backbone)
    if made_with != now:
        raise SentembError(
            f"run record {store.record_path(spec.profile, spec.run_id)} was made with backbone {spec.backbone!r} at "
            f"{made_with or 'an unrecorded revision'}, but that name resolves to {now} now: the record is stale.\n"
            "  Fix: restore the backbone the record names (git checkout shared/models/, or the package version), or "
            "delete the record to run the spec again on the current weights."
        )
    events.note("loaded", spec.run_id)
    return record
