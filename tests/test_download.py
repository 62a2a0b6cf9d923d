"""The full profile's download code, exercised offline: senteval.tar is built from the mirror and
served through a file:// URL, then fetched, unpacked into the cache and verified like a real download."""

import tarfile

import pytest
from conftest import mirror, needs_mirror

from sentemb.data import download, files, registry
from sentemb.data.sts import load_task
from sentemb.errors import DataError


@needs_mirror
@pytest.mark.parametrize("top", ["", "downstream/"])
def test_fetch_senteval_tar_from_a_file_url(tmp_path, monkeypatch, top):
    archive = tmp_path / "served" / "senteval.tar"
    archive.parent.mkdir()
    with tarfile.open(archive, "w") as tar:
        for folder in ("STS", "SICK"):
            tar.add(mirror() / "senteval" / "downstream" / folder, arcname=f"{top}{folder}")
    monkeypatch.setitem(registry.SOURCES, "senteval.tar", archive.as_uri())
    monkeypatch.delenv("SENTEMB_DATA")
    monkeypatch.setattr(files, "_verified", {})
    paths = download.fetch("stsb")
    assert [p.name for p in paths] == ["sts-train.csv", "sts-dev.csv", "sts-test.csv"]
    assert len(load_task("STSBenchmark").parts["test"]) == 1379  # read from the cache, hashes verified
    assert download.fetch("sickr")  # the archive is reused, not downloaded again


def test_failed_download_leaves_nothing_behind(tmp_path, monkeypatch):
    monkeypatch.setitem(registry.SOURCES, "wiki1m_for_simcse.txt", (tmp_path / "absent.txt").as_uri())
    with pytest.raises(DataError, match="could not download"):
        download.fetch("wiki1m_for_simcse")
    cache = tmp_path / "cache" / "data" / "training" / "unsup"
    assert not any(cache.glob("*")) if cache.exists() else True
