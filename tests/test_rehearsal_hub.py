"""The stand-in hub (sentemb.rehearsal): the full profile's hub-facing code, run unchanged against 127.0.0.1.

The stand-in is built once for the module (tiny models under the pinned ids and commits, SimCSE's files, an OpenWebText
Parquet conversion) and served from a daemon thread. The clients are pointed at it in this process: ``HF_ENDPOINT``,
and the values huggingface_hub and datasets read from the environment at import time (their endpoint, offline flag
and caches), patched for each test; the caches are fresh folders under tmp_path, never the real ones (the stand-ins
carry the real ids and pins). CI sets ``HF_HUB_OFFLINE=1``: it is unset here, since the clients must reach the stand-in.
"""

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from conftest import mirror, needs_mirror

from sentemb import settings
from sentemb.data import download, registry
from sentemb.data.files import sha256_of, track_reads
from sentemb.data.registry import DataFile
from sentemb.errors import ConfigError, DataError
from sentemb.models.backbone import HUB_REVISIONS
from sentemb.rehearsal.hub import serve
from sentemb.rehearsal.stand_in import PARQUET_FILE, build_stand_in_hub, generated_documents

SIMCSE = "princeton-nlp/datasets-for-simcse"
OWT = "Skylion007/openwebtext"
BERT_PIN = HUB_REVISIONS["bert-base-uncased"]
DOCUMENTS = 240


@dataclass
class Hub:
    root: Path
    url: str
    log: list[str]
    built: dict

    def served(self, line: str) -> bool:
        return line in self.log


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("stand-in") / "hub"
    built = build_stand_in_hub(root, senteval=mirror() is not None, documents=DOCUMENTS)
    log: list[str] = []
    with serve(root, log=log) as url:
        yield Hub(root, url, log, built)


@pytest.fixture
def client(hub, monkeypatch, tmp_path):
    """huggingface_hub, transformers and datasets pointed at the stand-in, with caches under tmp_path."""
    import datasets
    from huggingface_hub import constants, hf_api

    home = tmp_path / "hf"
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    env = {"HF_ENDPOINT": hub.url, "HF_HOME": home, "HF_HUB_CACHE": home / "hub", "HF_DATASETS_CACHE": home / "ds"}
    for name, value in env.items():
        monkeypatch.setenv(name, str(value))
    # read from the environment when the packages were imported: patched as well
    monkeypatch.setattr(constants, "ENDPOINT", hub.url)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", hub.url + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HOME", str(home))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(home / "hub"))
    monkeypatch.setattr(hf_api.api, "endpoint", hub.url)  # the module's HfApi behind huggingface_hub.model_info & co.
    config = datasets.config
    monkeypatch.setattr(config, "HF_ENDPOINT", hub.url)
    monkeypatch.setattr(config, "HUB_DATASETS_URL", hub.url + "/datasets/{repo_id}/resolve/{revision}/{path}")
    monkeypatch.setattr(config, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(config, "HF_DATASETS_OFFLINE", False)
    for name, value in (("HF_DATASETS_CACHE", "ds"), ("DOWNLOADED_DATASETS_PATH", "ds/downloads")):
        monkeypatch.setattr(config, name, home / value)
    monkeypatch.setattr(config, "EXTRACTED_DATASETS_PATH", home / "ds" / "downloads" / "extracted")
    monkeypatch.setattr(config, "HF_MODULES_CACHE", home / "modules")
    return home


def _chain(exc: BaseException) -> list[str]:
    names = []
    while exc is not None:
        names.append(type(exc).__name__)
        exc = exc.__cause__ or exc.__context__
    return names


# (a) backbones at their pins


def test_the_pinned_bert_loads_at_its_pin_through_the_renamed_repo(hub, client):
    from sentemb.models.backbone import load_backbone, load_tokenizer

    tokenizer, model = load_backbone("bert-base-uncased")
    assert (model.config.hidden_size, model.config.num_hidden_layers) == (64, 2)
    assert tokenizer("Hello World").input_ids == [101, 7592, 2088, 102]  # bert-base-uncased's WordPiece vocabulary
    assert hub.served(f"HEAD /bert-base-uncased/resolve/{BERT_PIN}/config.json 307")  # the legacy id, renamed
    assert hub.served(f"GET /google-bert/bert-base-uncased/resolve/{BERT_PIN}/model.safetensors 200")
    assert (client / "hub" / "models--bert-base-uncased" / "snapshots" / BERT_PIN / "model.safetensors").is_file()
    roberta = load_tokenizer("roberta-base")
    assert type(roberta).__name__ == "RobertaTokenizer"
    ids = roberta("A man is playing a guitar.").input_ids
    assert (ids[0], ids[-1]) == (roberta.bos_token_id, roberta.eos_token_id) == (0, 2)


def test_another_revision_is_refused_with_the_clients_revision_error(hub, client):
    from sentemb.models.backbone import load_backbone

    with pytest.raises(ConfigError, match="at revision 0{40}") as caught:
        load_backbone("bert-base-uncased", revision="0" * 40)
    assert "RevisionNotFoundError" in _chain(caught.value)


# (b) SimCSE's files through registry.source_url and the archive's download code


def _pinned_to_stand_in(monkeypatch, hub, name: str) -> DataFile:
    """registry.tsv pins the sha256 of SimCSE's real file, which the stand-in is not: pinned to the stand-in's."""
    stand_in = hub.built["files"][f"datasets/{SIMCSE}/{registry.SIMCSE_DATASETS_REVISION}/{name}"]
    files = tuple(replace(f, sha256=stand_in) if f.source == name else f for f in registry.all_files())
    monkeypatch.setattr(registry, "all_files", lambda: files)
    return next(f for f in files if f.source == name)


def test_a_simcse_training_file_downloads_resumes_and_verifies(hub, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    url = registry.source_url("wiki1m_for_simcse.txt")
    assert url == f"{hub.url}/datasets/{SIMCSE}/resolve/{registry.SIMCSE_DATASETS_REVISION}/wiki1m_for_simcse.txt"
    with pytest.raises(DataError, match="does not match registry.tsv"):  # the real pin refuses the stand-in
        download.fetch("wiki1m_for_simcse")
    entry = _pinned_to_stand_in(monkeypatch, hub, "wiki1m_for_simcse.txt")
    target = settings.download_root() / entry.relpath
    served = hub.root / "datasets" / SIMCSE / registry.SIMCSE_DATASETS_REVISION / "wiki1m_for_simcse.txt"
    target.with_name(target.name + ".part").write_bytes(served.read_bytes()[:1000])  # an interrupted download
    assert download.fetch("wiki1m_for_simcse") == [target]
    assert sha256_of(target) == entry.sha256
    assert target.read_text().splitlines()[0].endswith(" .")
    path = url.removeprefix(hub.url)
    assert hub.log.count(f"GET {path} 200") == 1 and hub.served(f"GET {path} 206")  # refused once, then resumed


@needs_mirror
def test_senteval_tar_is_packed_from_the_mirror_and_fetched_through_the_stand_in(hub, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    paths = download.fetch("stsb")
    for f, path in zip(registry.files_of("stsb"), paths):
        assert sha256_of(path) == f.sha256  # the mirror's copies, through SimCSE's tar layout and back
    record = json.loads((settings.download_root() / "senteval.tar.sha256.json").read_text())
    assert record["sha256"] == hub.built["files"][f"datasets/{SIMCSE}/{registry.SIMCSE_DATASETS_REVISION}/senteval.tar"]


def test_senteval_tar_is_left_out_without_the_mirror(tmp_path, monkeypatch):
    monkeypatch.delenv("SENTEMB_DATA", raising=False)
    from sentemb.rehearsal.stand_in import _senteval_tar

    assert "SENTEMB_DATA is not set" in _senteval_tar(tmp_path / "senteval.tar")
    assert not (tmp_path / "senteval.tar").exists()


# (c) OpenWebText through datasets, at the Parquet conversion's ref


def test_openwebtext_reads_the_parquet_conversion_through_datasets(hub, client):
    from sentemb.data.documents import HubCorpus, kept_documents, load_documents
    from sentemb.models.backbone import load_tokenizer

    corpus = load_documents("openwebtext")
    assert isinstance(corpus, HubCorpus) and corpus.revision == "refs/convert/parquet"
    with track_reads() as read:
        assert len(corpus) == DOCUMENTS
    first = next(iter(corpus))
    assert (first.id, first.text) == (f"{OWT}:0", generated_documents(DOCUMENTS, 0)[0])
    assert hub.served(f"GET /api/datasets/{OWT}/revision/refs%2Fconvert%2Fparquet 200")
    commit = hub.built["repos"][f"datasets/{OWT}"]["refs"]["refs/convert/parquet"]
    assert corpus.commit == commit and json.loads(corpus.identity())["revision"] == commit  # the store's key
    assert hub.served(f"GET /datasets/{OWT}/resolve/{commit}/{PARQUET_FILE} 200")
    parquet = hub.root / "datasets" / OWT / commit / PARQUET_FILE
    assert read == {f"hub:{OWT}@{commit}/{PARQUET_FILE}": sha256_of(parquet)}  # the run record's provenance
    long = kept_documents(corpus, load_tokenizer("tiny-random-bert"), 2048)  # MiniLM's = bert-base-uncased's vocab
    assert len(long) == DOCUMENTS // 8  # every eighth has LONG_SENTENCES sentences, the others at most 150


def test_openwebtext_is_read_at_the_commit_its_first_read_pinned(hub, client, monkeypatch, tmp_path, capsys):
    """The ref is asked for once; later reads use the recorded commit (a moved ref changes nothing), a researcher's
    SENTEMB_OPENWEBTEXT_COMMIT wins, and a malformed pin or override is a clear error."""
    from sentemb.data.documents import load_documents
    from sentemb.data.hub_pins import pin_path

    monkeypatch.setenv("SENTEMB_CACHE", str(tmp_path / "cache"))
    commit = hub.built["repos"][f"datasets/{OWT}"]["refs"]["refs/convert/parquet"]
    ref_route = f"GET /api/datasets/{OWT}/revision/refs%2Fconvert%2Fparquet 200"
    assert load_documents("openwebtext").rows() is not None
    assert "pinned Skylion007/openwebtext@refs/convert/parquet to commit" in capsys.readouterr().err
    assert json.loads(pin_path(OWT).read_text()) == {"refs/convert/parquet": {"commit": commit}}
    asked = hub.log.count(ref_route)
    corpus = load_documents("openwebtext")
    assert len(corpus) == DOCUMENTS and corpus.commit == commit and hub.log.count(ref_route) == asked
    pin_path(OWT).write_text(json.dumps({"refs/convert/parquet": {"commit": "0" * 40}}))  # as if pinned elsewhere
    with pytest.raises(DataError, match="0000000000"):  # read at the pin, not at wherever the ref points now
        load_documents("openwebtext").rows()
    monkeypatch.setenv("SENTEMB_OPENWEBTEXT_COMMIT", commit)
    corpus = load_documents("openwebtext")
    assert len(corpus) == DOCUMENTS and corpus.commit == commit  # the override, not the pin file's
    monkeypatch.setenv("SENTEMB_OPENWEBTEXT_COMMIT", "refs/convert/parquet")
    with pytest.raises(ConfigError, match="is not a commit"):
        load_documents("openwebtext").rows()
    monkeypatch.delenv("SENTEMB_OPENWEBTEXT_COMMIT")
    pin_path(OWT).write_text("{not json")
    with pytest.raises(DataError, match="Fix: delete it"):
        load_documents("openwebtext").rows()


def test_a_partial_parquet_conversion_is_refused(monkeypatch):
    """The Hub converts only a part of a large dataset into ``partial-<split>`` folders: such a corpus is refused."""
    from types import SimpleNamespace

    from huggingface_hub import HfApi

    from sentemb.data.hub_pins import lfs_hashes

    def files(*names):
        lfs = SimpleNamespace(sha256="f" * 64)
        info = SimpleNamespace(siblings=[SimpleNamespace(rfilename=n, lfs=lfs) for n in names])
        monkeypatch.setattr(HfApi, "dataset_info", lambda self, *a, **k: info)

    files("plain_text/partial-train/0000.parquet", "plain_text/partial-train/0001.parquet")
    with pytest.raises(DataError, match="partial Parquet conversion"):
        lfs_hashes(OWT, "a" * 40, "train")
    files("plain_text/train/0000.parquet", "plain_text/train/0001.parquet", "README.md")
    assert lfs_hashes(OWT, "a" * 40, "train") == {
        f"hub:{OWT}@{'a' * 40}/plain_text/train/000{i}.parquet": "f" * 64 for i in (0, 1)
    }
    files("README.md")
    with pytest.raises(DataError, match="no Parquet file"):
        lfs_hashes(OWT, "a" * 40, "train")


def test_openwebtext_main_and_an_unknown_ref_are_refused(hub, client):
    from sentemb.data.documents import HubCorpus

    with pytest.raises(DataError, match="Dataset scripts are no longer supported"):  # as on the hub: main is a script
        HubCorpus(OWT).rows()
    with pytest.raises(DataError, match="refs/convert/duckdb"):
        HubCorpus(OWT, revision="refs/convert/duckdb").rows()


# (d) the routes themselves: errors, listings, ranges, the command line


def test_unknown_repos_files_and_revisions_answer_the_hubs_errors(hub, client):
    from huggingface_hub import HfApi, hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError

    api = HfApi(endpoint=hub.url)
    with pytest.raises(RepositoryNotFoundError):
        api.model_info("nobody/nothing")
    with pytest.raises(RepositoryNotFoundError):
        api.dataset_info("bert-base-uncased")  # a model id is no dataset
    with pytest.raises(EntryNotFoundError):
        hf_hub_download("google-bert/bert-base-uncased", "pytorch_model.bin", revision=BERT_PIN)
    with pytest.raises(RevisionNotFoundError):
        api.dataset_info(SIMCSE, revision="f" * 40)
    for path, code in (
        ("/nobody/nothing/resolve/main/config.json", "RepoNotFound"),
        (f"/datasets/{SIMCSE}/resolve/main/no_such_file.txt", "EntryNotFound"),
        (f"/datasets/{SIMCSE}/resolve/no-such-branch/nli_for_simcse.csv", "RevisionNotFound"),
        ("/api/spaces/someone/app", None),
    ):
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(hub.url + path, timeout=10)
        assert (caught.value.code, caught.value.headers.get("X-Error-Code")) == (404, code), path


def test_listings_info_and_paths_info_name_the_commit_and_the_sha256(hub, client):
    from huggingface_hub import HfApi

    api = HfApi(endpoint=hub.url)
    commit = hub.built["repos"][f"datasets/{OWT}"]["refs"]["refs/convert/parquet"]
    info = api.dataset_info(OWT, revision="refs/convert/parquet", files_metadata=True)
    assert info.sha == commit and [s.rfilename for s in info.siblings] == [PARQUET_FILE]
    sha256 = hub.built["files"][f"datasets/{OWT}/{commit}/{PARQUET_FILE}"]
    assert info.siblings[0].lfs.sha256 == sha256
    tree = list(
        api.list_repo_tree(OWT, "plain_text", recursive=True, revision="refs/convert/parquet", repo_type="dataset")
    )
    assert [t.path for t in tree] == ["plain_text/train", PARQUET_FILE] and tree[1].lfs.sha256 == sha256
    found = api.get_paths_info(OWT, [PARQUET_FILE, "absent.txt"], revision="refs/convert/parquet", repo_type="dataset")
    assert [f.path for f in found] == [PARQUET_FILE]
    assert api.model_info("bert-base-uncased").sha == BERT_PIN  # main -> the pin, through the rename
    assert api.model_info("FacebookAI/roberta-base", revision="main").sha == HUB_REVISIONS["roberta-base"]


def test_ranges_and_an_unencoded_named_ref(hub):
    commit = hub.built["repos"][f"datasets/{OWT}"]["refs"]["refs/convert/parquet"]
    served = (hub.root / "datasets" / OWT / commit / PARQUET_FILE).read_bytes()
    url = f"{hub.url}/datasets/{OWT}/resolve/refs/convert/parquet/{PARQUET_FILE}"
    request = urllib.request.Request(url, headers={"Range": "bytes=4-"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 206 and answer.headers["X-Repo-Commit"] == commit
        assert answer.headers["Content-Range"] == f"bytes 4-{len(served) - 1}/{len(served)}"
        assert answer.read() == served[4:]
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(urllib.request.Request(url, headers={"Range": f"bytes={len(served)}-"}), timeout=10)
    assert caught.value.code == 416


def test_the_command_line_prints_the_url_and_the_modules_import_light(hub):
    env = {**os.environ, "PYTHONPATH": str(settings.REPO_ROOT / "shared")}
    probe = "import sys, sentemb.rehearsal.hub, sentemb.rehearsal.stand_in\n"
    probe += (
        "print([m for m in ('torch', 'transformers', 'datasets', 'pyarrow', 'huggingface_hub') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr
    command = [sys.executable, "-m", "sentemb.rehearsal.hub", "--root", str(hub.root), "--port", "0"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{url}/api/models/google-bert/bert-base-uncased", timeout=10) as answer:
            assert json.loads(answer.read())["sha"] == BERT_PIN
    finally:
        server.terminate()
        server.wait(timeout=10)
    done = subprocess.run([*command[:3], "--root", str(hub.root / "models")], env=env, capture_output=True, text=True)
    assert done.returncode == 2 and "not a stand-in hub folder" in done.stderr


def test_the_builder_refuses_a_folder_that_is_not_empty(tmp_path):
    (tmp_path / "kept.txt").write_text("x")
    with pytest.raises(ConfigError, match="not an empty folder"):
        build_stand_in_hub(tmp_path)


def test_a_rehearsal_checks_the_stand_ins_training_files_against_their_own_sha256(tmp_path, monkeypatch, capsys):
    """SENTEMB_REHEARSAL_HASHES replaces registry.tsv's sha256 of the files it names (the stand-in's generated
    wiki1m and NLI files), says so, and refuses a file it cannot read or a path the registry does not know."""
    import json

    from sentemb.data import registry
    from sentemb.errors import ConfigError

    real = registry.lookup("training/unsup/wiki1m_for_simcse.txt")
    mapping = tmp_path / "expected_sha256.json"
    monkeypatch.setenv(registry.REHEARSAL_HASHES, str(mapping))
    try:
        mapping.write_text(json.dumps({real.relpath: "a" * 64}))
        registry.all_files.cache_clear()
        assert registry.lookup(real.relpath).sha256 == "a" * 64 != real.sha256
        assert registry.lookup("training/nli/nli_for_simcse.csv").sha256 is not None  # the others unchanged
        assert "rehearsal" in capsys.readouterr().err
        for content, what in (("{", "not a readable JSON"), (json.dumps({"no/such/file": "a" * 64}), "not in")):
            mapping.write_text(content)
            registry.all_files.cache_clear()
            with pytest.raises(ConfigError, match=what):
                registry.all_files()
    finally:
        monkeypatch.delenv(registry.REHEARSAL_HASHES)
        registry.all_files.cache_clear()
    assert registry.lookup(real.relpath).sha256 == real.sha256
