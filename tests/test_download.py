"""The download code, exercised offline: a real HTTP server on 127.0.0.1 (started here) redirects, truncates bodies,
honours or ignores Range requests and serves wrong bytes; senteval.tar is built from the mirror and served through it
(or through a file:// URL), fetched, unpacked into the cache and verified like a real download. Tars built here from
made-up files (``synth``) check senteval.tar's own sha256 (recorded at first download, or pinned) and its members' (a
member that differs from the mirror's copy is reported and kept), without the mirror."""

import gzip
import hashlib
import io
import json
import re
import tarfile
import threading
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import mirror, needs_mirror

from sentemb import cli
from sentemb.data import download, files, registry
from sentemb.data.registry import DataFile
from sentemb.data.sts import load_task
from sentemb.errors import DataError

STSB_DEV = "senteval/downstream/STS/STSBenchmark/sts-dev.csv"
LABELS_GZ = "training/nli/snli_1.0_devtest_senteval_format/labels.dev.gz"
CONTENT = b"".join(b"%06d a sentence of the sample file to download\n" % i for i in range(6000))  # 330 kB
RELPATH = "test/sample.txt"


class Server:
    """What the handler serves (``files``), how it misbehaves, and the requests it saw: ``(path, Range header)``."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.redirects: dict[str, str] = {}
        self.truncate_next: dict[str, int] = {}  # path -> bytes sent (of a larger Content-Length) before closing
        self.ignore_range = False
        self.requests: list[tuple[str, str | None]] = []
        self.base = ""

    def handler(self):
        state = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                state.requests.append((self.path, self.headers.get("Range")))
                if self.path in state.redirects:  # as huggingface.co's resolve/<rev>/<file> answers: 302 to a CDN
                    self.send_response(302)
                    self.send_header("Location", state.base + state.redirects[self.path])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = state.files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                start, asked = 0, re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
                if asked and not state.ignore_range:
                    start = int(asked.group(1))
                    if start >= len(body):
                        self.send_error(416)
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                payload = body[start:]
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                cut = state.truncate_next.pop(self.path, None)
                self.wfile.write(payload if cut is None else payload[:cut])
                self.close_connection = True  # with a cut: the client sees EOF before Content-Length

        return Handler


@pytest.fixture
def server():
    state = Server()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), state.handler())
    state.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()
    thread.join()


@pytest.fixture(autouse=True)
def fresh_hash_memo(monkeypatch):
    monkeypatch.setattr(files, "_verified", {})


def serve_dataset(monkeypatch, server, entries, bodies, prefix="/files/"):
    """Register ``entries`` as dataset ``testset`` with source ``test-http`` (``<server><prefix><name>``)."""
    monkeypatch.setitem(registry.SOURCES, "test-http", server.base + prefix + "{name}")
    monkeypatch.setattr(download, "files_of", lambda dataset: list(entries))
    for entry, body in zip(entries, bodies):
        server.files["/files/" + entry.relpath.rsplit("/", 1)[-1]] = body


def sample_entry(content=CONTENT):
    return DataFile("testset", RELPATH, hashlib.sha256(content).hexdigest(), "test-http")


def test_a_redirect_to_the_file_is_followed(tmp_path, monkeypatch, server):
    serve_dataset(monkeypatch, server, [sample_entry()], [CONTENT], prefix="/resolve/rev/")
    server.redirects["/resolve/rev/sample.txt"] = "/files/sample.txt"
    (path,) = download.fetch("testset")
    assert path == tmp_path / "cache" / "data" / RELPATH and path.read_bytes() == CONTENT
    assert [p for p, _ in server.requests] == ["/resolve/rev/sample.txt", "/files/sample.txt"]
    assert not path.with_name("sample.txt.part").exists()
    # Interrupted behind the redirect: the Range header of the resumed try reaches the redirect's target.
    path.unlink()
    server.truncate_next["/files/sample.txt"] = 1000
    with pytest.raises(DataError, match="closed after 1,000 of"):
        download.fetch("testset")
    assert download.fetch("testset") == [path] and path.read_bytes() == CONTENT
    assert server.requests[-2:] == [("/resolve/rev/sample.txt", "bytes=1000-"), ("/files/sample.txt", "bytes=1000-")]


def test_a_truncated_body_keeps_the_part_and_the_next_try_resumes_with_range(tmp_path, monkeypatch, server):
    serve_dataset(monkeypatch, server, [sample_entry()], [CONTENT])
    server.truncate_next["/files/sample.txt"] = 100_000
    target = tmp_path / "cache" / "data" / RELPATH
    part = target.with_name("sample.txt.part")
    with pytest.raises(DataError) as info:
        download.fetch("testset")
    message = str(info.value)
    assert f"{server.base}/files/sample.txt" in message and f"100,000 of {len(CONTENT):,} bytes" in message
    assert str(part) in message and "run the same command again (it resumes)" in message and str(target) in message
    assert "SENTEMB_DATA" in message
    assert part.read_bytes() == CONTENT[:100_000] and not target.exists()
    (path,) = download.fetch("testset")
    assert server.requests[-1] == ("/files/sample.txt", "bytes=100000-")
    assert path.read_bytes() == CONTENT and not part.exists()
    assert len(server.requests) == 2
    assert download.fetch("testset") == [path] and len(server.requests) == 2  # present and verified: not again


def test_a_server_that_ignores_range_still_gives_the_right_file(tmp_path, monkeypatch, server, capsys):
    serve_dataset(monkeypatch, server, [sample_entry()], [CONTENT])
    server.ignore_range = True
    part = tmp_path / "cache" / "data" / "test" / "sample.txt.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(CONTENT[:5000])
    (path,) = download.fetch("testset")
    assert server.requests == [("/files/sample.txt", "bytes=5000-")]  # asked to resume, answered 200: starts over
    assert path.read_bytes() == CONTENT and not part.exists()
    assert "starting over" in capsys.readouterr().err


def test_a_part_longer_than_the_file_starts_over(tmp_path, monkeypatch, server):
    serve_dataset(monkeypatch, server, [sample_entry()], [CONTENT])
    part = tmp_path / "cache" / "data" / "test" / "sample.txt.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(CONTENT + b"stale tail")
    (path,) = download.fetch("testset")  # 416 for the range, then the whole file
    assert [r for _, r in server.requests] == [f"bytes={len(CONTENT) + 10}-", None]
    assert path.read_bytes() == CONTENT


def test_a_wrong_hash_deletes_the_file_and_names_both_hashes(tmp_path, monkeypatch, server):
    wrong = CONTENT.replace(b"sentence", b"sentense", 1)
    serve_dataset(monkeypatch, server, [sample_entry()], [wrong])
    with pytest.raises(DataError) as info:
        download.fetch("testset")
    message = str(info.value)
    assert f"{server.base}/files/sample.txt" in message and "deleted" in message and "Fix:" in message
    assert hashlib.sha256(CONTENT).hexdigest() in message and hashlib.sha256(wrong).hexdigest() in message
    assert not any((tmp_path / "cache" / "data" / "test").iterdir())  # neither the file nor a .part


def test_a_missing_url_is_a_data_error_naming_it(monkeypatch, server):
    serve_dataset(monkeypatch, server, [sample_entry()], [CONTENT], prefix="/nowhere/")
    with pytest.raises(DataError, match=r"could not download .*/nowhere/sample.txt: the server answered HTTP 404"):
        download.fetch("testset")


@needs_mirror
def test_a_recompressed_gz_verifies_by_its_content_sha256(tmp_path, monkeypatch, server):
    entry = registry.lookup(LABELS_GZ)
    original = (mirror() / LABELS_GZ).read_bytes()
    recompressed = gzip.compress(gzip.decompress(original), compresslevel=1, mtime=0)
    assert recompressed != original and entry.content_sha256 == hashlib.sha256(gzip.decompress(original)).hexdigest()
    serve_dataset(monkeypatch, server, [replace(entry, source="test-http")], [recompressed])
    (path,) = download.fetch(entry.dataset)
    assert path.read_bytes() == recompressed
    # Read through a mirror that holds the recompressed copy: accepted, and the run records the sha256 of its bytes.
    monkeypatch.setenv("SENTEMB_DATA", str(tmp_path / "cache" / "data"))
    with files.track_reads() as seen:
        files.read_text(LABELS_GZ)
    assert seen == {LABELS_GZ: hashlib.sha256(recompressed).hexdigest()}
    # Other data compressed: both hashes named, the file deleted.
    path.unlink()
    server.files["/files/labels.dev.gz"] = gzip.compress(b"entailment\n" * 10)
    with pytest.raises(DataError, match=f"content sha256 {entry.content_sha256}"):
        download.fetch(entry.dataset)
    assert not path.exists()


def senteval_tar(tmp_path):
    """senteval.tar with only STS-B, from the mirror's copies, inside one top folder (as SimCSE's)."""
    archive = tmp_path / "served" / "senteval.tar"
    archive.parent.mkdir()
    with tarfile.open(archive, "w") as tar:
        tar.add(mirror() / "senteval/downstream/STS/STSBenchmark", arcname="downstream/STS/STSBenchmark")
    return archive.read_bytes()


@needs_mirror
def test_a_missing_evaluation_file_downloads_itself(tmp_path, monkeypatch, server, capsys):
    server.files["/cdn/senteval.tar"] = senteval_tar(tmp_path)
    server.redirects["/resolve/rev/senteval.tar"] = "/cdn/senteval.tar"
    monkeypatch.setitem(registry.SOURCES, "senteval.tar", server.base + "/resolve/rev/senteval.tar")
    monkeypatch.delenv("SENTEMB_DATA", raising=False)
    monkeypatch.delenv("SENTEMB_NO_DOWNLOAD", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the hub's switch for models: does not stop data downloads
    with files.track_reads() as seen:
        path = files.verified_path(STSB_DEV)
    assert path == tmp_path / "cache" / "data" / STSB_DEV
    assert seen == {STSB_DEV: registry.lookup(STSB_DEV).sha256}  # the file's bytes, as for the mirror's copy
    err = capsys.readouterr().err
    assert f"{STSB_DEV} is missing: downloading dataset stsb" in err and str(tmp_path / "cache" / "data") in err
    assert len(load_task("STSBenchmark").parts["test"]) == 1379
    assert [p for p, _ in server.requests] == ["/resolve/rev/senteval.tar", "/cdn/senteval.tar"]  # once


def test_no_download_gives_the_missing_file_error_without_a_request(monkeypatch, server):
    monkeypatch.setitem(registry.SOURCES, "senteval.tar", server.base + "/senteval.tar")
    monkeypatch.delenv("SENTEMB_DATA", raising=False)
    monkeypatch.setenv("SENTEMB_NO_DOWNLOAD", "1")
    with pytest.raises(DataError) as info:
        files.verified_path(STSB_DEV)
    message = str(info.value)
    assert "missing data file" in message and STSB_DEV in message and "data fetch stsb" in message
    assert server.requests == []


def test_data_verify_reports_a_missing_file_without_downloading_it(monkeypatch, server, capsys):
    monkeypatch.setitem(registry.SOURCES, "senteval.tar", server.base + "/senteval.tar")
    monkeypatch.delenv("SENTEMB_DATA", raising=False)
    monkeypatch.delenv("SENTEMB_NO_DOWNLOAD", raising=False)
    assert cli.main(["data", "verify", "stsb"]) == 1
    assert f"PROBLEM  missing data file {STSB_DEV}" in capsys.readouterr().out
    assert server.requests == []


def test_data_fetch_without_names_fetches_every_downloadable_dataset(monkeypatch, capsys):
    fetched = []
    monkeypatch.setattr(download, "fetch", lambda name: fetched.append(name) or [])
    assert cli.main(["data", "fetch"]) == 0
    assert {"sts12", "sts16", "stsb", "sickr", "mr", "cr", "subj", "mpqa", "sst2", "sst5", "trec", "mrpc"} <= set(
        fetched
    )
    assert set(fetched) == set(download.downloadable())
    assert not {registry.lookup(LABELS_GZ).dataset, "mteb_BIOSSES"} & set(fetched)  # no download source
    assert not set(download.FULL_PROFILE_CORPORA) & set(fetched)  # ~300 MB, the full profile's: only when named


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


# -- senteval.tar: checked by its own sha256; its members' sha256 recorded from the extraction ------------------------

SYNTH_DIR = "senteval/downstream/STS/STSBenchmark"
MIRROR_COPIES = {  # what the offline mirror holds (registry.tsv's sha256), for a dataset of three senteval.tar files
    f"{SYNTH_DIR}/sts-{part}.csv": b"".join(
        b"%s\t%d\tA sentence.\tAnother one.\n" % (part.encode(), i) for i in range(50)
    )
    for part in ("train", "dev", "test")
}
DEV = f"{SYNTH_DIR}/sts-dev.csv"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tar_of(contents: dict[str, bytes]) -> bytes:
    """A senteval.tar holding ``contents`` (relpath in the cache -> bytes) under one top folder, as SimCSE's."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for relpath, body in contents.items():
            info = tarfile.TarInfo("downstream/" + relpath.removeprefix("senteval/downstream/"))
            info.size, info.mtime = len(body), 0
            tar.addfile(info, io.BytesIO(body))
    return buffer.getvalue()


@pytest.fixture
def synth(monkeypatch, server, tmp_path):
    """Dataset ``stssynth``: three senteval.tar files registered with the mirror's copies' sha256; senteval.tar is
    served at ``/senteval.tar`` (set ``server.files["/senteval.tar"]``). Returns the download cache."""
    entries = tuple(DataFile("stssynth", relpath, sha(body), "senteval.tar") for relpath, body in MIRROR_COPIES.items())
    monkeypatch.setattr(registry, "all_files", lambda: entries)
    monkeypatch.setattr(registry, "SENTEVAL_TAR_SHA256", None)
    monkeypatch.setitem(registry.SOURCES, "senteval.tar", server.base + "/senteval.tar")
    monkeypatch.delenv("SENTEMB_DATA", raising=False)
    return tmp_path / "cache" / "data"


def test_a_member_that_differs_from_the_mirror_is_reported_kept_and_used(synth, server, tmp_path, capsys):
    tar_dev = MIRROR_COPIES[DEV].replace(b"A sentence.", b"A sentence .", 1)  # SimCSE's copy differs from the mirror's
    served = tar_of({**MIRROR_COPIES, DEV: tar_dev, f"{SYNTH_DIR}/readme.txt": b"extra\n"})
    server.files["/senteval.tar"] = served
    paths = download.fetch("stssynth")
    assert paths == [synth / relpath for relpath in MIRROR_COPIES]
    assert {p.relative_to(synth).as_posix(): p.read_bytes() for p in paths} == {**MIRROR_COPIES, DEV: tar_dev}
    err = capsys.readouterr().err
    assert f"WARNING: {DEV} differs" in err and sha(tar_dev) in err and sha(MIRROR_COPIES[DEV]) in err
    assert "The mirror's copies and SimCSE's tar differ in 1 file(s)" in err and "use the tar's" in err
    assert "recorded at first download" in err and "not pinned" in err and sha(served) in err
    record = json.loads((synth / "senteval.tar.sha256.json").read_text())
    assert record["sha256"] == sha(served) and record["bytes"] == len(served)
    assert record["revision"] == registry.SIMCSE_DATASETS_REVISION and record["url"] == server.base + "/senteval.tar"
    assert "recorded at first download, not pinned" in record["sha256_source"] and record["date"]
    assert record["members"] == {
        **{relpath: sha(body) for relpath, body in MIRROR_COPIES.items()},
        DEV: sha(tar_dev),
        f"{SYNTH_DIR}/readme.txt": sha(b"extra\n"),
    }
    # Again: present and accepted (the tar's copy), so nothing is downloaded, unpacked or deleted.
    assert download.fetch("stssynth") == paths and len(server.requests) == 1
    assert (synth / DEV).read_bytes() == tar_dev and (tmp_path / "cache" / "downloads" / "senteval.tar").is_file()
    assert capsys.readouterr().err == ""
    # A run reads it, records the tar's sha256 and says why it differs from the mirror's; `data verify` accepts it.
    with files.track_reads() as seen:
        assert files.verified_path(DEV) == synth / DEV
    assert seen == {DEV: sha(tar_dev)}
    assert "is SimCSE's senteval.tar copy" in capsys.readouterr().err
    assert cli.main(["data", "verify", "stssynth"]) == 0
    # Lost from the cache: unpacked again from the kept tar (checked against the record), not downloaded again.
    (synth / DEV).unlink()
    assert download.fetch("stssynth") == paths and (synth / DEV).read_bytes() == tar_dev
    assert len(server.requests) == 1 and f"WARNING: {DEV} differs" in capsys.readouterr().err
    # A copy that is neither the mirror's nor the tar's still fails.
    (synth / DEV).write_bytes(b"edited\n")
    assert not download._present(registry.lookup(DEV), synth)


def test_a_tar_that_fails_its_recorded_sha256_is_an_error_once_and_is_deleted(synth, server, tmp_path, capsys):
    first = tar_of(MIRROR_COPIES)
    server.files["/senteval.tar"] = first
    download.fetch("stssynth")
    record = (synth / "senteval.tar.sha256.json").read_text()
    archive = tmp_path / "cache" / "downloads" / "senteval.tar"
    # The cache loses a file and the tar; the server now serves other bytes.
    (synth / DEV).unlink()
    archive.unlink()
    other = tar_of({**MIRROR_COPIES, DEV: b"other\n"})
    server.files["/senteval.tar"] = other
    for attempt in (2, 3):  # each try downloads once and stops: no loop
        with pytest.raises(DataError) as info:
            download.fetch("stssynth")
        assert len(server.requests) == attempt
        message = str(info.value)
        assert f"expected sha256 {sha(first)}" in message and f"found    sha256 {sha(other)}" in message
        assert "recorded at first download, not pinned" in message and "it was deleted" in message
        assert "Fix: run the same command again" in message and "senteval.tar.sha256.json" in message
        assert not archive.exists() and not (synth / DEV).exists()
        assert (synth / "senteval.tar.sha256.json").read_text() == record  # the record is enforced, not replaced
    # A kept tar that changed is caught too (without a download).
    server.files["/senteval.tar"] = first
    download.fetch("stssynth")
    (synth / DEV).unlink()
    archive.write_bytes(archive.read_bytes() + b"\0" * 512)
    with pytest.raises(DataError, match="kept from an earlier download"):
        download.fetch("stssynth")
    assert len(server.requests) == 4 and not archive.exists()
    assert download.fetch("stssynth") and len(server.requests) == 5  # the right bytes again: accepted


def test_a_tar_that_fails_the_pinned_sha256_is_deleted_and_not_recorded(synth, server, tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "SENTEVAL_TAR_SHA256", "0" * 64)
    server.files["/senteval.tar"] = tar_of(MIRROR_COPIES)
    with pytest.raises(DataError, match=f"expected sha256 {'0' * 64} \\(pinned in sentemb.data.registry"):
        download.fetch("stssynth")
    assert len(server.requests) == 1 and not (tmp_path / "cache" / "downloads" / "senteval.tar").exists()
    assert not (synth / "senteval.tar.sha256.json").exists() and not (synth / DEV).exists()
    monkeypatch.setattr(registry, "SENTEVAL_TAR_SHA256", sha(tar_of(MIRROR_COPIES)))
    assert download.fetch("stssynth")
    assert "pinned" in json.loads((synth / "senteval.tar.sha256.json").read_text())["sha256_source"]


def test_a_registered_file_the_tar_lacks_is_an_error_that_keeps_the_tar(synth, server, tmp_path):
    server.files["/senteval.tar"] = tar_of({k: v for k, v in MIRROR_COPIES.items() if k != DEV})
    for _ in range(2):
        with pytest.raises(DataError, match=f"did not provide {DEV}: SimCSE's senteval.tar .* has no such file"):
            download.fetch("stssynth")
    assert len(server.requests) == 1 and (tmp_path / "cache" / "downloads" / "senteval.tar").is_file()


def test_a_record_of_another_revision_downloads_the_tar_again(synth, server, tmp_path, capsys):
    server.files["/senteval.tar"] = tar_of(MIRROR_COPIES)
    download.fetch("stssynth")
    record_file = synth / "senteval.tar.sha256.json"
    record = json.loads(record_file.read_text())
    record_file.write_text(json.dumps({**record, "revision": "f" * 40, "sha256": "1" * 64}))
    (synth / DEV).unlink()
    assert download.fetch("stssynth") and len(server.requests) == 2
    assert f"is of revision {'f' * 40}" in capsys.readouterr().err
    assert json.loads(record_file.read_text())["revision"] == registry.SIMCSE_DATASETS_REVISION
