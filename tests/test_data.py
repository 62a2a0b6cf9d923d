"""Data registry and loaders: sha256 checks and clear errors (always), real files (with the mirror)."""

import shutil

import numpy as np
import pytest
from conftest import mirror, needs_mirror

from sentemb import settings
from sentemb.data import files
from sentemb.data.corpora import load_nli_triples, load_sentences
from sentemb.data.registry import all_files, files_of, lookup
from sentemb.data.sts import ALL_TASKS, load_task
from sentemb.errors import ConfigError, DataError

STSB_DEV = "senteval/downstream/STS/STSBenchmark/sts-dev.csv"


@pytest.fixture(autouse=True)
def fresh_hash_memo(monkeypatch):
    monkeypatch.setattr(files, "_verified", {})


def test_registry_has_every_simcse_dataset_with_hashes():
    names = {f.dataset for f in all_files()}
    assert {
        "sts12",
        "sts13",
        "sts14",
        "sts15",
        "sts16",
        "stsb",
        "sickr",
        "wiki_sentences_combined",
        "snli_devtest_for_simcse",
        "wiki1m_for_simcse",
        "nli_for_simcse",
    } <= names
    for f in all_files():
        assert f.sha256 is None or len(f.sha256) == 64
        assert (
            f.sha256 is not None
            or f.source in ("wiki1m_for_simcse.txt", "nli_for_simcse.csv")
            or (f.source == "probing" and len(f.git_blob_sha1) == 40)
        )
    assert lookup(STSB_DEV).dataset == "stsb"
    with pytest.raises(ConfigError, match="unknown dataset"):
        files_of("sts99")


def test_missing_file_names_the_file_and_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("SENTEMB_DATA", str(tmp_path))
    with pytest.raises(DataError) as info:
        files.verified_path(STSB_DEV)
    message = str(info.value)
    assert "missing data file" in message and STSB_DEV in message and "Fix:" in message


def test_corrupt_file_names_expected_and_found_hash(tmp_path, monkeypatch):
    target = tmp_path / STSB_DEV
    target.parent.mkdir(parents=True)
    target.write_text("genre\tfile\tyear\t0\t5.0\ta\tb\n")
    monkeypatch.setenv("SENTEMB_DATA", str(tmp_path))
    with pytest.raises(DataError) as info:
        files.verified_path(STSB_DEV)
    message = str(info.value)
    assert lookup(STSB_DEV).sha256 in message and files.sha256_of(target) in message


def test_git_blob_sha1_guards_the_probing_files(tmp_path, monkeypatch):
    relpath = files_of("probing_past_present")[0].relpath
    target = tmp_path / relpath
    target.parent.mkdir(parents=True)
    target.write_text("tr\tPRES\tnot the real file\n")
    monkeypatch.setenv("SENTEMB_DATA", str(tmp_path))
    with pytest.raises(DataError, match="expected git blob sha1"):
        files.verified_path(relpath)


def test_mirror_only_files_say_so_without_a_mirror(monkeypatch, tmp_path):
    monkeypatch.delenv("SENTEMB_DATA", raising=False)
    monkeypatch.setenv("SENTEMB_CACHE", str(tmp_path))
    with pytest.raises(DataError, match="only in the offline mirror"):
        files.read_text("mteb/BIOSSES/all.tsv")


def test_a_missing_shipped_file_says_how_to_restore_it(monkeypatch, tmp_path):
    """Without a mirror the small profile's corpora come from data/; a clone that lost one is told to restore it."""
    monkeypatch.delenv("SENTEMB_DATA", raising=False)
    monkeypatch.setenv("SENTEMB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(settings, "shipped_data_root", lambda: tmp_path / "data")
    with pytest.raises(DataError, match=r"ships this file under data/.*git checkout -- data/"):
        load_sentences("wiki_sentences_combined")


def test_unknown_corpus_and_task():
    with pytest.raises(ConfigError):
        load_sentences("wiki2m")
    with pytest.raises(ConfigError):
        load_task("STS11")


def test_synthetic_data_is_deterministic():
    a, b = load_task("STS12", synthetic=True), load_task("STS12", synthetic=True)
    assert a.parts.keys() == b.parts.keys()
    np.testing.assert_array_equal(a.parts["subset-a"].scores, b.parts["subset-a"].scores)
    assert len(load_sentences("synthetic")) >= 300 and len(load_nli_triples("synthetic")) >= 100


# -- the real files (offline mirror) --------------------------------------------------------------
EXPECTED_PAIRS = {"STS12": 3108, "STS13": 1500, "STS14": 3750, "STS15": 3000, "STS16": 1186}


@needs_mirror
@pytest.mark.parametrize("task", ALL_TASKS)
def test_sts_loaders_on_the_mirror(task):
    loaded = load_task(task)
    if task in EXPECTED_PAIRS:
        assert sum(len(p) for p in loaded.parts.values()) == EXPECTED_PAIRS[task]
    elif task == "STSBenchmark":
        assert {k: len(v) for k, v in loaded.parts.items()} == {"train": 5749, "dev": 1500, "test": 1379}
    else:
        assert {k: len(v) for k, v in loaded.parts.items()} == {"train": 4500, "dev": 500, "test": 4927}
    for pairs in loaded.parts.values():
        assert pairs.scores.min() >= 0.0 and pairs.scores.max() <= 5.0
        assert all(s and s == " ".join(s.split()) for s in pairs.sentences())


@needs_mirror
def test_training_corpora_on_the_mirror():
    with files.track_reads() as seen:
        sentences = load_sentences("wiki_sentences_combined")
        triples = load_nli_triples("snli_devtest_for_simcse")
    assert len(sentences) == 107_873
    assert len(triples) == 5_883 and all(len(t) == 3 for t in triples)
    assert set(seen) == {f.relpath for f in files_of("wiki_sentences_combined") + files_of("snli_devtest_for_simcse")}


@needs_mirror
def test_full_profile_files_are_not_in_the_mirror():
    with pytest.raises(DataError, match="data fetch wiki1m_for_simcse"):
        load_sentences("wiki1m_for_simcse")


@needs_mirror
def test_corrupt_copy_of_the_mirror_is_caught(tmp_path, monkeypatch):
    target = tmp_path / STSB_DEV
    shutil.copytree((mirror() / STSB_DEV).parent, target.parent)
    with open(target, "a", encoding="utf-8") as handle:
        handle.write("x")
    monkeypatch.setenv("SENTEMB_DATA", str(tmp_path))
    with pytest.raises(DataError, match="corrupt data file"):
        load_task("STSBenchmark")
