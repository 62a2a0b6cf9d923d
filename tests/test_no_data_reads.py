"""The archive on a clone without data: the cached path reads no data file, and what ships stands in for the mirror.

A researcher's clone has the committed records and the training text under ``data/``, but no mirror and (until a
run needs them) no evaluation sets. Every paper's hooks must then build their tables, figures and claims from the
records alone: here each read of a registered data file is made to fail, and is counted, so that a read swallowed by
some ``except`` cannot hide.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys

import pandas as pd
import pytest
from conftest import mirror

from sentemb import settings
from sentemb.data import files
from sentemb.data.registry import all_files
from sentemb.paper import registry

COMMITTED = settings.REPO_ROOT / "results" / "runs" / "small"


@pytest.fixture
def no_data(isolated_outputs, monkeypatch):
    """Every data read raises and is recorded in the returned list; the records are a copy of the committed ones."""
    shutil.copytree(COMMITTED, isolated_outputs / "results" / "runs" / "small")
    monkeypatch.delenv("SENTEMB_DATA", raising=False)
    monkeypatch.setenv("SENTEMB_NO_DOWNLOAD", "1")
    reads: list[str] = []

    def refuse(relpath: str):  # verified_path then raises its "missing data file" error
        reads.append(relpath)
        return None

    monkeypatch.setattr(files, "locate", refuse)
    return reads


ARCHIVE_CODE = re.compile(r"/(papers|shared/sentemb)/")


class StageWatch:
    """Wraps a paper's stage hooks (on the instance, undone by ``monkeypatch``) to count their calls and, during the
    ``tables`` and ``figures`` hooks, to trace every Python call (``sys.setprofile``): which functions made the
    tables ``build.tables`` holds (returned the very object), and which functions the figures called."""

    TRACED = ("tables", "figures")

    def __init__(self, paper, monkeypatch):
        self.calls = {hook: 0 for hook in ("collect", "derived", "tables", "figures")}
        self.called: dict[str, set] = {hook: set() for hook in self.TRACED}
        self.returned: list[tuple] = []  # (code, frame) held, so that no object's id is reused while we compare
        for hook in self.calls:
            monkeypatch.setattr(paper, hook, self.wrap(hook, getattr(paper, hook)))

    def wrap(self, hook, method):
        def wrapped(build):
            self.calls[hook] += 1
            if hook not in self.TRACED:
                return method(build)

            def profile(frame, event, arg):
                if event == "call":
                    self.called[hook].add(frame.f_code)
                elif event == "return" and hook == "tables" and isinstance(arg, pd.DataFrame):
                    self.returned.append((frame.f_code, arg))

            sys.setprofile(profile)
            try:
                return method(build)
            finally:
                sys.setprofile(None)

        return wrapped

    def table_makers(self, tables: dict) -> set:
        """The archive's functions (``papers/``, ``shared/sentemb/``; not pandas') that returned a table of ``tables``,
        the hook's own code aside."""
        held = [t for t in tables.values() if isinstance(t, pd.DataFrame)]
        return {
            code
            for code, frame in self.returned
            if any(frame is t for t in held) and code.co_name != "tables" and ARCHIVE_CODE.search(code.co_filename)
        }


@pytest.mark.slow
@pytest.mark.parametrize("name", list(registry()))
def test_every_hook_runs_over_the_committed_records_without_data(name, no_data, monkeypatch):
    """``Paper.build`` as the notebook calls it: nothing trains, no data read, every table equals the committed CSV (the
    records alone determine it); and the contract that no hook recomputes another's output: each stage runs once, and
    the figures call none of the functions that made the tables (they read ``build.tables``)."""
    paper = registry()[name]
    watch = StageWatch(paper, monkeypatch)
    built = paper.build("small", run_missing=False, extended=False)
    assert no_data == []
    assert watch.calls == {"collect": 1, "derived": 1, "tables": 1, "figures": 1}
    makers = watch.table_makers(built.tables)
    assert makers, "no function was seen making a table: the trace is broken"
    again = {f"{code.co_filename}:{code.co_name}" for code in makers & watch.called["figures"]}
    assert not again, f"{name}: the figures recompute tables instead of reading build.tables: {sorted(again)}"
    written, committed = built.results_dir, settings.REPO_ROOT / "results" / name / "small"
    for path in sorted(written.glob("*.csv")):
        assert path.read_bytes() == (committed / path.name).read_bytes(), f"{name}: {path.name} differs"
    assert built.tables and all(path.is_file() for path in built.figures)


def test_shipped_training_text_is_the_registered_bytes():
    """Each file under data/ is registered as shipped and has the registry's sha256 (the mirror's copy's); every
    shipped entry is there."""
    shipped = {f.relpath: f for f in all_files() if f.source == "shipped"}
    root = settings.shipped_data_root()
    on_disk = {str(p.relative_to(root)) for p in root.rglob("*.gz")}
    assert on_disk == set(shipped)
    for relpath, entry in shipped.items():
        assert hashlib.sha256((root / relpath).read_bytes()).hexdigest() == entry.sha256, relpath
    manifest = (root / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()
    listed = {line.split("\t")[0]: line.split("\t")[1] for line in manifest[1:]}
    assert listed == {relpath: entry.sha256 for relpath, entry in shipped.items()}


def test_a_shipped_file_is_found_without_the_mirror(monkeypatch, tmp_path):
    """With SENTEMB_DATA unset and an empty cache, the small profile's corpora come from data/."""
    monkeypatch.delenv("SENTEMB_DATA", raising=False)
    monkeypatch.setenv("SENTEMB_CACHE", str(tmp_path))
    path = files.verified_path("training/nli/snli_devtest_for_simcse.csv.gz")
    assert path == settings.shipped_data_root() / "training/nli/snli_devtest_for_simcse.csv.gz"


def test_the_mirror_comes_first(monkeypatch, tmp_path):
    """SENTEMB_DATA, then data/, then the cache: a mirror's copy is the one read (and verified)."""
    relpath = "training/nli/snli_devtest_for_simcse.csv.gz"
    (tmp_path / relpath).parent.mkdir(parents=True)
    shutil.copy(settings.shipped_data_root() / relpath, tmp_path / relpath)
    monkeypatch.setenv("SENTEMB_DATA", str(tmp_path))
    assert files.verified_path(relpath) == tmp_path / relpath


@pytest.mark.skipif(mirror() is None, reason="needs the offline mirror (SENTEMB_DATA) to draw the queries again")
def test_committed_retrieval_queries_are_the_ones_the_data_gives():
    """``papers/*/retrieval_queries.json`` (what names the retrieval records) equals the queries drawn from the corpus
    (scripts/write_retrieval_queries.py)."""
    from papers.simcse import analyses as simcse
    from papers.simcse_pp import paper as simcse_pp

    writers = ((simcse.QUERIES_FILE, simcse.queries_from_data), (simcse_pp.QUERIES_FILE, simcse_pp.queries_from_data))
    for path, from_data in writers:
        for corpus, queries in json.loads(path.read_text(encoding="utf-8")).items():
            assert from_data(corpus) == queries, f"{path.name}: {corpus}"
