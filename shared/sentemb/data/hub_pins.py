"""A hub dataset read at a named ref (OpenWebText's ``refs/convert/parquet``), pinned to the commit it names.

The Hub's Parquet conversion lives at a ref that moves whenever the Hub converts the dataset again, and may be a
partial conversion of a large dataset. A run that read "the ref" could not say which corpus it trained on. So the
ref is resolved once to its commit and every later read on this machine uses that commit:

1. ``$<env_var>`` (e.g. ``SENTEMB_OPENWEBTEXT_COMMIT``), when set: a 40-hex commit, the researcher's pin (to rerun
   on the corpus a published record names);
2. else the pin recorded at this machine's first resolution, ``$SENTEMB_CACHE/pins/<dataset>.json``;
3. else the hub is asked (``HfApi.dataset_info(..., revision=ref).sha``, at ``HF_ENDPOINT`` when set), and the
   answer written to that file, said on stderr.

No copy of the commit could be found offline when this was written (no network here), so the archive pins none in
its code; the run record names it instead (:func:`lfs_hashes`: the key of each file read is
``hub:<dataset>@<commit>/<path>``, its value the sha256 the hub's LFS metadata gives).

Relations: :mod:`sentemb.data.documents` (``HubCorpus``, which reads the pinned commit), :mod:`sentemb.data.files`
(``note_read``, which puts the hashes in the run's provenance), :mod:`sentemb.data.registry` (``hub_endpoint``).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path

from sentemb import settings
from sentemb.errors import ConfigError, DataError

COMMIT = re.compile(r"[0-9a-f]{40}")


def pin_path(dataset: str) -> Path:
    return settings.cache_root() / "pins" / (dataset.replace("/", "__") + ".json")


def pinned_commit(dataset: str, ref: str, env_var: str) -> str:
    """The commit ``ref`` of hub dataset ``dataset`` is read at (the module docstring says which, in what order)."""
    override = os.environ.get(env_var, "").strip()
    if override:
        if not COMMIT.fullmatch(override):
            raise ConfigError(
                f"{env_var}={override!r} is not a commit.\n  Fix: give the 40-hex commit of {dataset} (a run record's "
                f"hub:{dataset}@<commit> key names it), or unset {env_var}."
            )
        return override
    path = pin_path(dataset)
    if path.is_file():
        try:
            pins = json.loads(path.read_text())
            commit = pins[ref]["commit"]
        except (ValueError, KeyError, TypeError) as exc:
            raise DataError(
                f"{path} is not a pin file with a commit for {ref!r} ({exc}).\n  Fix: delete it (the ref is resolved "
                f"again at the next run) or set {env_var} to the commit you want."
            ) from exc
        if isinstance(commit, str) and COMMIT.fullmatch(commit):
            return commit
        raise DataError(f"{path}: {commit!r} is not a commit.\n  Fix: delete the file or set {env_var}.")
    commit = _resolve(dataset, ref)
    _write_pin(path, ref, commit)
    print(
        f"[data] pinned {dataset}@{ref} to commit {commit} (first resolution on this machine; recorded in {path}, "
        f"and named in each run record; set {env_var} to read another commit)",
        file=sys.stderr,
    )
    return commit


def _resolve(dataset: str, ref: str) -> str:
    from huggingface_hub import HfApi

    from sentemb.data.registry import hub_endpoint

    try:
        return HfApi(endpoint=hub_endpoint()).dataset_info(dataset, revision=ref).sha
    except Exception as exc:  # huggingface_hub raises many types (connection, HTTP, offline mode) for one cause
        raise DataError(
            f"cannot resolve {dataset}@{ref} to a commit at {hub_endpoint()}: {exc}.\n  Fix: the full profile needs "
            "the Hugging Face hub (or a mirror named by HF_ENDPOINT)."
        ) from exc


def _write_pin(path: Path, ref: str, commit: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pins = json.loads(path.read_text()) if path.is_file() else {}
    pins[ref] = {"commit": commit}
    with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as out:
        json.dump(pins, out, indent=1, sort_keys=True)
    Path(out.name).replace(path)


def lfs_hashes(dataset: str, commit: str, split: str) -> dict[str, str]:
    """``hub:<dataset>@<commit>/<path> -> sha256`` of the Parquet files of ``split`` at ``commit``, from the hub's
    LFS metadata; DataError when the conversion of that split is partial (a ``partial-<split>`` folder: the Hub
    converted only a part of a large dataset) or holds no file of it."""
    from huggingface_hub import HfApi

    from sentemb.data.registry import hub_endpoint

    try:
        info = HfApi(endpoint=hub_endpoint()).dataset_info(dataset, revision=commit, files_metadata=True)
    except Exception as exc:  # as in _resolve
        raise DataError(f"cannot list the files of {dataset}@{commit} at {hub_endpoint()}: {exc}") from exc
    names = [s.rfilename for s in info.siblings or ()]
    partial = [n for n in names if f"/partial-{split}/" in f"/{n}"]
    if partial:
        raise DataError(
            f"{dataset}@{commit} is a partial Parquet conversion ({partial[0]} and {len(partial) - 1} more): it holds "
            f"a part of the {split} split only.\n  Fix: set the commit of a complete conversion, or read the corpus "
            "from a local copy."
        )
    hashes = {
        f"hub:{dataset}@{commit}/{s.rfilename}": s.lfs.sha256
        for s in info.siblings or ()
        if f"/{split}/" in f"/{s.rfilename}" and s.rfilename.endswith(".parquet") and s.lfs is not None
    }
    if not hashes:
        raise DataError(f"{dataset}@{commit} has no Parquet file of split {split!r} ({len(names)} files listed)")
    return dict(sorted(hashes.items()))
