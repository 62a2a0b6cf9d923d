"""Build a stand-in hub folder: tiny repos under the ids and pinned revisions that the full profile downloads.

Contents (:func:`build_stand_in_hub`, laid out as :mod:`sentemb.rehearsal.hub` serves it):
    models    every id of ``sentemb.models.backbone.HUB_REVISIONS`` at its pinned commit, ``main`` -> that commit. A
              BERT id: a 2-layer, 64-wide ``BertForMaskedLM`` (random, seeded) with bert-base-uncased's WordPiece
              vocabulary (the offline all-MiniLM-L6-v2 package's ``vocab.txt``, lower-casing); a RoBERTa id: the same
              shape as ``RobertaForMaskedLM`` with a byte-level BPE tokenizer trained here on generated sentences.
              Safetensors weights (``save_pretrained``). A legacy id pinned to the same commit as ``<owner>/<id>``
              (``bert-base-uncased``) is a renamed repo (``moved.json``), which the hub answers with a 307.
    datasets  ``princeton-nlp/datasets-for-simcse`` at ``registry.SIMCSE_DATASETS_REVISION``: every file that
              ``registry.SOURCES`` downloads from it, generated small (``wiki1m_for_simcse.txt``: one sentence a line;
              ``nli_for_simcse.csv``: ``sent0,sent1,hard_neg``) or, for ``senteval.tar``, packed from the offline
              mirror (``SENTEMB_DATA``): the registry's senteval.tar files, task folders at the top as in SimCSE's tar;
              without the mirror it is left out (``skipped`` says so). ``Skylion007/openwebtext`` (the corpus and
              revision of ``sentemb.data.documents``): ``main`` -> a commit with only its loading script (which
              ``datasets`` >= 4 refuses, as on the hub), ``refs/convert/parquet`` -> a commit with the hub's Parquet
              conversion layout, ``plain_text/train/0000.parquet``: generated documents in a ``text`` column, every
              eighth longer than 2,048 subword tokens.
    ``stand_in.json``  what was built: each repo's refs, the sha256 of every file (by its path under ``root``), and
              what was left out and why.
Not the real files: registry.tsv pins the sha256 of SimCSE's real training files, which the stand-ins do not match; a
rehearsal (or a test) takes the stand-ins' sha256 from ``stand_in.json``. Commits of refs that the archive does not pin
(OpenWebText's) are made up: the sha1 of the repo id and the ref.
Determinism: fixed seeds; the same library versions write the same bytes.
Usage: ``python -m sentemb.rehearsal.stand_in ROOT [--no-senteval]``; then ``python -m sentemb.rehearsal.hub --root
ROOT``.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import random
import sys
import tarfile
from pathlib import Path

from sentemb.errors import ConfigError

MANIFEST = "stand_in.json"
EXPECTED_SHA256 = "expected_sha256.json"  # relpath -> sha256 of the generated training files (SENTEMB_REHEARSAL_HASHES)
PARQUET_FILE = "plain_text/train/0000.parquet"  # the hub's conversion: <config>/<split>/<shard>.parquet
SPECIALS_BPE = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
TINY = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128)
LONG_SENTENCES = 420  # a long document's sentences: about 4,000 subword tokens, past DeCLUTR's 2,048
BPE_TEXT = [  # beside the synthetic grammar's sentences: capitals, digits and punctuation for the byte-level BPE
    "The quick brown fox jumps over the lazy dog.",
    "In 2021, DeCLUTR sampled spans from documents of at least 2,048 tokens!",
    "SimCSE (Gao et al.) uses dropout as minimal data augmentation; it works well.",
    "What is the capital of France? Paris, of course.",
]


def _commit_of(repo_id: str, ref: str) -> str:
    """A made-up commit for a ref the archive does not pin: the sha1 of the repo id and the ref."""
    return hashlib.sha1(f"sentemb stand-in {repo_id} {ref}".encode()).hexdigest()


def _repo(root: Path, kind: str, repo_id: str, refs: dict[str, str]) -> Path:
    folder = root / kind / repo_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "refs.json").write_text(json.dumps(refs, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return folder


def _seeded(seed: int, make):
    """``make()`` under ``torch.manual_seed(seed)``, the global random state left as it was."""
    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # save_pretrained's "Writing model shards" bar, as sentemb.models.backbone does

    state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        return make()
    finally:
        torch.random.set_rng_state(state)


def _bert(folder: Path, seed: int) -> None:
    import transformers

    from sentemb.models.backbone import minilm_dir

    vocab_txt = (minilm_dir() / "vocab.txt").read_text(encoding="utf-8")
    vocab = {word: i for i, word in enumerate(vocab_txt.splitlines())}
    tokenizer = transformers.BertTokenizer(vocab=vocab, do_lower_case=True, model_max_length=512)
    tokenizer.save_pretrained(folder)
    (folder / "vocab.txt").write_text(vocab_txt, encoding="utf-8")
    config = transformers.BertConfig(vocab_size=len(vocab), max_position_embeddings=512, **TINY)
    _seeded(seed, lambda: transformers.BertForPreTraining(config)).save_pretrained(folder)  # with its pooler, as BERT


def _roberta(folder: Path, seed: int) -> None:
    import tokenizers
    import transformers

    from sentemb.data.synthetic import synthetic_sentences

    bpe = tokenizers.ByteLevelBPETokenizer()
    text = synthetic_sentences(400, seed=seed) + BPE_TEXT
    bpe.train_from_iterator(text, vocab_size=512, min_frequency=1, special_tokens=SPECIALS_BPE, show_progress=False)
    bpe.save_model(str(folder))  # vocab.json, merges.txt, as the hub's RoBERTa repos hold them
    model = json.loads(bpe.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    tokenizer = transformers.RobertaTokenizer(vocab=model["vocab"], merges=merges, model_max_length=512)
    tokenizer.save_pretrained(folder)
    config = transformers.RobertaConfig(
        vocab_size=len(model["vocab"]),
        max_position_embeddings=514,
        type_vocab_size=1,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        **TINY,
    )
    _seeded(seed, lambda: transformers.RobertaForMaskedLM(config)).save_pretrained(folder)


def _shape(repo_id: str):
    """The builder of the stand-in for ``repo_id``: by its family, RoBERTa or BERT."""
    name = repo_id.lower()
    if "roberta" in name:
        return _roberta
    if "bert" in name:
        return _bert
    raise ConfigError(
        f"no stand-in shape for the pinned backbone {repo_id!r}: the stand-in hub knows BERT and RoBERTa ids.\n"
        f"  Fix: add a builder for its family to {__name__}._shape."
    )


def _models(root: Path, seed: int, built: dict) -> None:
    """Every pinned id of HUB_REVISIONS: a repo at its commit, or a renamed repo for a legacy alias."""
    from sentemb.models.backbone import HUB_REVISIONS

    for k, (repo_id, commit) in enumerate(sorted(HUB_REVISIONS.items())):
        target = next((r for r, c in HUB_REVISIONS.items() if r.endswith(f"/{repo_id}") and c == commit), None)
        if target is not None:  # a legacy id: the hub redirects it to its <owner>/<name> repo
            folder = root / "models" / repo_id
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "moved.json").write_text(json.dumps({"to": target}) + "\n", encoding="utf-8")
            built["repos"][f"models/{repo_id}"] = {"moved_to": target}
            continue
        folder = _repo(root, "models", repo_id, {"main": commit}) / commit
        folder.mkdir()
        _shape(repo_id)(folder, seed + k)
        built["repos"][f"models/{repo_id}"] = {"refs": {"main": commit}}


def _simcse_sources() -> dict[str, tuple[str, str, str]]:
    """The files that registry.SOURCES downloads from the hub: source key -> (repo id, revision, file name)."""
    from sentemb.data.registry import SOURCES

    found = {}
    for key, template in SOURCES.items():
        if template is None or not template.startswith("{hub}/datasets/"):
            continue
        parts = template.format(hub="", name="").split("/")  # ['', 'datasets', owner, name, 'resolve', rev, file]
        if len(parts) != 7 or parts[4] != "resolve":
            raise ConfigError(f"registry.SOURCES[{key!r}] = {template!r} is not a hub resolve URL of one file")
        found[key] = (f"{parts[2]}/{parts[3]}", parts[5], parts[6])
    return found


def _wiki1m(seed: int) -> bytes:
    from sentemb.data.synthetic import synthetic_sentences

    return "".join(f"{s}\n" for s in synthetic_sentences(1000, seed=seed)).encode()


def _nli(seed: int) -> bytes:
    from sentemb.data.synthetic import synthetic_nli_triples

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["sent0", "sent1", "hard_neg"])
    writer.writerows(row[:3] for row in synthetic_nli_triples(200, seed=seed))
    return out.getvalue().encode()


def _senteval_tar(path: Path) -> str | None:
    """senteval.tar packed from the mirror's copies of the registry's senteval.tar files (task folders at the top, as
    ``download._unpack_senteval`` expects); the reason when it cannot be (no mirror, or no STS files in it)."""
    from sentemb import settings
    from sentemb.data.registry import all_files

    mirror = settings.data_root()
    if mirror is None:
        return "SENTEMB_DATA is not set: senteval.tar is packed from the offline mirror's SentEval files"
    prefix = "senteval/downstream/"
    members = [f.relpath for f in all_files() if f.source == "senteval.tar" and (mirror / f.relpath).is_file()]
    if not any(m.startswith(f"{prefix}STS/") for m in members):
        return f"the mirror {mirror} holds no {prefix}STS/ files to pack into senteval.tar"
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as tar:
        for relpath in sorted(members):
            data = (mirror / relpath).read_bytes()
            member = tarfile.TarInfo(relpath[len(prefix) :])
            member.size, member.mode, member.mtime = len(data), 0o644, 0
            tar.addfile(member, io.BytesIO(data))
    return None


def _simcse(root: Path, seed: int, senteval: bool, built: dict) -> None:
    from sentemb.data.registry import all_files

    generators = {"wiki1m_for_simcse.txt": _wiki1m, "nli_for_simcse.csv": _nli}
    for key, (repo_id, revision, name) in sorted(_simcse_sources().items()):
        folder = _repo(root, "datasets", repo_id, {"main": revision}) / revision
        folder.mkdir(exist_ok=True)
        built["repos"][f"datasets/{repo_id}"] = {"refs": {"main": revision}}
        if name == "senteval.tar":
            reason = _senteval_tar(folder / name) if senteval else "left out on request (senteval=False)"
            if reason is not None:
                built["skipped"][name] = reason
        elif name in generators:
            data = generators[name](seed)
            (folder / name).write_bytes(data)
            for f in all_files():  # the registry's files downloaded from this source: the stand-in's sha256
                if f.source == key:
                    built["expected_sha256"][f.relpath] = hashlib.sha256(data).hexdigest()
        else:
            raise ConfigError(
                f"registry.SOURCES[{key!r}] downloads {name}, which the stand-in hub cannot make.\n"
                f"  Fix: add a generator for it to {__name__}._simcse."
            )


def generated_documents(n: int, seed: int) -> list[str]:
    """``n`` web-text-like documents of the synthetic grammar's sentences, in paragraphs; every eighth is long
    (:data:`LONG_SENTENCES` sentences, past 2,048 subword tokens), the others 3 to 150 sentences."""
    from sentemb.data.synthetic import synthetic_sentences

    rng = random.Random(seed)
    pool = [s[0].upper() + s[1:] for s in synthetic_sentences(2000, seed=seed)]
    documents = []
    for k in range(n):
        count = LONG_SENTENCES if k % 8 == 7 else rng.randint(3, 150)
        sentences = [rng.choice(pool) for _ in range(count)]
        paragraphs = [" ".join(sentences[i : i + 8]) for i in range(0, count, 8)]
        documents.append("\n\n".join(paragraphs))
    return documents


def _openwebtext(root: Path, seed: int, documents: int, built: dict) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sentemb.data.documents import OPENWEBTEXT_DATASET, OPENWEBTEXT_REVISION

    repo_id = OPENWEBTEXT_DATASET
    refs = {"main": _commit_of(repo_id, "main"), OPENWEBTEXT_REVISION: _commit_of(repo_id, OPENWEBTEXT_REVISION)}
    folder = _repo(root, "datasets", repo_id, refs)
    script = folder / refs["main"] / f"{repo_id.split('/')[-1]}.py"
    script.parent.mkdir(parents=True)
    script.write_text('"""A stand-in of the loading script of the hub\'s main branch (not run)."""\n', encoding="utf-8")
    parquet = folder / refs[OPENWEBTEXT_REVISION] / PARQUET_FILE
    parquet.parent.mkdir(parents=True)
    pq.write_table(pa.table({"text": generated_documents(documents, seed)}), parquet)
    built["repos"][f"datasets/{repo_id}"] = {"refs": refs}


def build_stand_in_hub(root: str | Path, senteval: bool = True, documents: int = 300, seed: int = 0) -> dict:
    """Write the stand-in repos into ``root`` (absent or empty) and return what ``stand_in.json`` records there:
    ``repos`` (``<kind>/<repo id>`` -> refs, or ``moved_to``), ``files`` (path under ``root`` -> sha256),
    ``skipped`` (file name -> why it was left out). ``senteval=False`` leaves senteval.tar out (it needs the mirror).
    """
    root = Path(root).expanduser()
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise ConfigError(f"{root} exists and is not an empty folder.\n  Fix: pass a new or empty folder.")
    root.mkdir(parents=True, exist_ok=True)
    built: dict = {"repos": {}, "files": {}, "skipped": {}, "expected_sha256": {}}
    _models(root, seed, built)
    _simcse(root, seed, senteval, built)
    _openwebtext(root, seed, documents, built)
    from sentemb.data.files import sha256_of

    for path in sorted(p for kind in ("models", "datasets") for p in (root / kind).rglob("*") if p.is_file()):
        if path.name not in ("refs.json", "moved.json"):
            built["files"][path.relative_to(root).as_posix()] = sha256_of(path)
    (root / MANIFEST).write_text(json.dumps(built, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    # the generated training files' sha256, for SENTEMB_REHEARSAL_HASHES (sentemb.data.registry)
    (root / EXPECTED_SHA256).write_text(json.dumps(built["expected_sha256"], indent=1) + "\n", encoding="utf-8")
    return built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sentemb.rehearsal.stand_in", description=__doc__.splitlines()[0])
    parser.add_argument("root", help="a new or empty folder")
    parser.add_argument("--no-senteval", action="store_true", help="leave senteval.tar out (it needs SENTEMB_DATA)")
    args = parser.parse_args(argv)
    try:
        built = build_stand_in_hub(args.root, senteval=not args.no_senteval)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for name, reason in built["skipped"].items():
        print(f"[stand-in] left out {name}: {reason}", file=sys.stderr)
    print(f"[stand-in] {len(built['repos'])} repos, {len(built['files'])} files in {args.root}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
