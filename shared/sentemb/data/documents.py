"""Documents: the long texts DeCLUTR (Giorgi et al., 2021) samples its anchor and positive spans from.

Corpora: ``openwebtext`` (OpenWebText through ``datasets``; full profile), ``wikitext2_articles`` (the mirror's 722
WikiText-2 articles, a substitute: Wikipedia prose, not web text; small profile), ``synthetic`` (documents of the
synthetic grammar's sentences; smoke, no data).
Length bound: the paper (§4 "Dataset") keeps the documents of at least 2048 tokens; :func:`long_enough` applies the
DeCLUTR objective's ``min_document_tokens`` in subword tokens (by default the span sampler's ``2 * A * l_max``; the
grid sets one value per profile, so every run of a profile trains on the same documents in the same order).
Memory: an in-memory corpus (``wikitext2_articles``, ``synthetic``: a list of :class:`Document`) is tokenised
whole and held as Python objects, fine for the mirror's 2.8M tokens. OpenWebText (8 M documents, about 9e9 tokens) is
a lazy :class:`HubCorpus`, streamed from ``datasets``' memory-mapped Arrow files in batches into a memory-mapped
token store on disk (:mod:`sentemb.data.token_store`) that keeps only the long documents; :func:`kept_documents`
takes either, in corpus order.
Relations: :mod:`sentemb.augment.span_sampler` (the bound), :mod:`sentemb.objectives.declutr`,
:mod:`sentemb.data.token_store`.
Counts per corpus and profile: docs/derivations.md#sentembdatadocumentspy
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from sentemb.data.files import note_read, read_text
from sentemb.data.registry import files_of
from sentemb.data.synthetic import synthetic_sentences
from sentemb.errors import ConfigError, DataError

MIRROR_DOCUMENTS = "wikitext2_articles"
OPENWEBTEXT = "openwebtext"
#: The Hugging Face dataset the full profile reads OpenWebText from (the corpus the paper cites, [50]). Its ``main``
#: branch is a loading script, which ``datasets`` >= 4 no longer runs; the Hub's Parquet conversion of it
#: (``refs/convert/parquet``, a ref that moves) is read instead, pinned to the commit it names at this machine's first
#: read or to ``$SENTEMB_OPENWEBTEXT_COMMIT`` (:mod:`sentemb.data.hub_pins`); a partial conversion is refused, and
#: each run record names the commit and each Parquet file's sha256.
OPENWEBTEXT_DATASET = "Skylion007/openwebtext"
OPENWEBTEXT_REVISION = "refs/convert/parquet"
OPENWEBTEXT_COMMIT_ENV = "SENTEMB_OPENWEBTEXT_COMMIT"
DOCUMENT_CORPORA = (OPENWEBTEXT, MIRROR_DOCUMENTS)


@dataclass(frozen=True)
class Document:
    id: str
    text: str


@dataclass(frozen=True)
class TokenisedDocument:
    """A document as the span sampler sees it: its subword token ids (no special tokens)."""

    id: str
    token_ids: tuple[int, ...]


def load_documents(name: str) -> list[Document] | HubCorpus:
    """The documents of a corpus, in file order: a list, or for OpenWebText a lazy :class:`HubCorpus` (nothing is
    read until it is iterated)."""
    if name == "synthetic":
        return synthetic_documents()
    if name == MIRROR_DOCUMENTS:
        return _mirror_documents()
    if name == OPENWEBTEXT:
        return HubCorpus(OPENWEBTEXT_DATASET, revision=OPENWEBTEXT_REVISION, pin_env=OPENWEBTEXT_COMMIT_ENV)
    raise ConfigError(f"unknown document corpus {name!r}; choose from {', '.join(DOCUMENT_CORPORA)} or synthetic")


def _mirror_documents() -> list[Document]:
    relpath = files_of(MIRROR_DOCUMENTS)[0].relpath
    documents = []
    for number, line in enumerate(read_text(relpath).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            documents.append(Document(id=str(row["id"]), text=str(row["text"])))
        except (ValueError, KeyError, TypeError) as exc:
            raise DataError(
                f"{relpath}, line {number}: not a JSON object with 'id' and 'text' ({exc}).\n"
                "  Fix: restore the file from the mirror (its sha256 is in the MANIFEST)."
            ) from exc
    if not documents:
        raise DataError(f"{relpath} holds no documents")
    return documents


class HubCorpus:
    """A corpus read lazily through ``datasets.load_dataset(dataset, data_files=..., split=..., revision=...)``:
    the full profile's OpenWebText from the Hugging Face hub (downloaded once into the ``datasets`` cache), or any
    local file the ``datasets`` builders read (``dataset="json"`` with ``data_files``). The rows stay in
    ``datasets``' memory-mapped Arrow files; :meth:`batches` hands them out as :class:`Document` lists, in row order,
    ids ``<dataset>:<row>``. :meth:`identity` names what would be read (the key of its token store).

    With ``pin_env`` the hub dataset's ``revision`` is a ref, read at the commit it is pinned to
    (:func:`~sentemb.data.hub_pins.pinned_commit`, resolved at the first read), and the run's provenance gets each
    Parquet file's sha256 at that commit (:func:`~sentemb.data.hub_pins.lfs_hashes`)."""

    def __init__(
        self,
        dataset: str,
        data_files: str | Sequence[str] | None = None,
        split: str = "train",
        text_field: str = "text",
        limit: int | None = None,
        revision: str | None = None,
        pin_env: str | None = None,
    ) -> None:
        self.dataset, self.split, self.text_field = dataset, split, text_field
        self.limit, self.revision, self.pin_env = limit, revision, pin_env
        self.commit: str | None = None  # the commit a pinned ref was read at (set by rows())
        self._hashes: dict[str, str] = {}
        if isinstance(data_files, str):
            data_files = (data_files,)
        self.data_files = tuple(data_files) if data_files else None
        self._rows = None  # the loaded datasets.Dataset

    def __repr__(self) -> str:
        return f"HubCorpus({self.dataset!r}, revision={self.revision!r}, data_files={self.data_files!r})"

    def rows(self):
        """The ``datasets.Dataset`` (loaded once), only its text column; DataError when it cannot be loaded."""
        if self._rows is not None:
            for key, sha256 in self._hashes.items():
                note_read(key, sha256)
            return self._rows
        import datasets

        files = list(self.data_files) if self.data_files else None
        revision = self.revision
        if self.pin_env:
            from sentemb.data.hub_pins import lfs_hashes, pinned_commit

            self.commit = revision = pinned_commit(self.dataset, self.revision, self.pin_env)
            self._hashes = lfs_hashes(self.dataset, self.commit, self.split)
            for key, sha256 in self._hashes.items():
                note_read(key, sha256)
        try:
            rows = datasets.load_dataset(self.dataset, data_files=files, split=self.split, revision=revision)
        except Exception as exc:  # the datasets library raises many types (connection, file, builder) for one cause
            raise DataError(
                f"cannot load documents from {self.dataset!r}"
                f"{f' ({files})' if files else ''}: {exc}.\n  Fix: the full profile needs network "
                f"access to the Hugging Face hub, or a local copy passed as data_files."
            ) from exc
        if self.text_field not in rows.column_names:
            raise DataError(f"{self.dataset!r} has no {self.text_field!r} column (columns: {rows.column_names})")
        self._rows = rows.select_columns([self.text_field])
        return self._rows

    def __len__(self) -> int:
        rows = self.rows()
        return len(rows) if self.limit is None else min(self.limit, len(rows))

    def batches(self, batch_size: int = 1000) -> Iterator[list[Document]]:
        """The documents in row order, ``batch_size`` rows at a time (only one batch's texts in memory)."""
        rows = self.rows()
        for start in range(0, len(self), batch_size):
            texts = rows[start : min(start + batch_size, len(self))][self.text_field]
            yield [Document(id=f"{self.dataset}:{start + k}", text=str(t)) for k, t in enumerate(texts)]

    def __iter__(self) -> Iterator[Document]:
        for batch in self.batches():
            yield from batch

    def identity(self) -> str:
        """What this corpus reads, as a stable JSON string: dataset, revision, split, text field, limit, the number
        of rows and each local data file's path, size and modification time (a changed file is a new corpus)."""
        files = []
        for name in self.data_files or ():
            path = Path(name)
            stat = path.stat() if path.is_file() else None
            files.append([str(path.resolve()), stat.st_size, stat.st_mtime_ns] if stat else name)
        if self.pin_env:
            self.rows()  # resolves the pin: a store is keyed by the commit read, not the ref
        fields = {
            "dataset": self.dataset,
            "revision": self.commit or self.revision,
            "split": self.split,
            "text_field": self.text_field,
        }
        return json.dumps({**fields, "limit": self.limit, "rows": len(self), "data_files": files}, sort_keys=True)


def synthetic_documents(n: int = 40, sentences_per_document: int = 60, seed: int = 0) -> list[Document]:
    """``n`` documents, each a random sequence of the synthetic grammar's sentences (smoke profile only)."""
    pool = synthetic_sentences()
    rng = random.Random(seed)
    return [
        Document(id=f"synthetic-{i:03d}", text=" ".join(rng.choice(pool) for _ in range(sentences_per_document)))
        for i in range(n)
    ]


_TOKENISED: dict[str, list[TokenisedDocument]] = {}  # this process's tokenised corpora (a grid tokenises once)


def tokenise(documents: Sequence[Document], tokenizer) -> list[TokenisedDocument]:
    """Each document's subword token ids, without special tokens and without truncation. Kept for the process, by
    the tokenizer and the documents' content, so that the runs of a grid tokenise a corpus once."""
    digest = hashlib.sha256(f"{getattr(tokenizer, 'name_or_path', '')}|{len(tokenizer)}".encode())
    for d in documents:
        digest.update(d.id.encode() + b"\0" + d.text.encode() + b"\0")
    key = digest.hexdigest()
    if key not in _TOKENISED:
        ids = tokenizer([d.text for d in documents], add_special_tokens=False, truncation=False, verbose=False)[
            "input_ids"
        ]
        _TOKENISED.clear()  # one corpus at a time
        _TOKENISED[key] = [TokenisedDocument(d.id, tuple(i)) for d, i in zip(documents, ids)]
    return list(_TOKENISED[key])


def _none_long_enough(corpus: str, min_tokens: int, longest: int, count: int) -> DataError:
    return DataError(
        f"no document of {corpus or 'the corpus'} has {min_tokens} subword tokens (the longest has "
        f"{longest} of {count} documents).\n  Fix: lower min_document_tokens, or "
        "num_anchors or max_span_len (a document needs 2 * num_anchors * max_span_len tokens), or "
        "use longer documents."
    )


def long_enough(documents: Sequence[TokenisedDocument], min_tokens: int, corpus: str = "") -> list[TokenisedDocument]:
    """The documents with at least ``min_tokens`` subword tokens, in order; DataError when none is left."""
    kept = [d for d in documents if len(d.token_ids) >= min_tokens]
    if not kept:
        longest = max((len(d.token_ids) for d in documents), default=0)
        raise _none_long_enough(corpus, min_tokens, longest, len(documents))
    return kept


def kept_documents(
    documents: Sequence[Document] | HubCorpus, tokenizer, min_tokens: int
) -> Sequence[TokenisedDocument]:
    """The documents of at least ``min_tokens`` subword tokens, tokenised, in corpus order; DataError when none is.

    A list of documents is tokenised in memory (:func:`tokenise`, :func:`long_enough`); a :class:`HubCorpus` is
    streamed into its token store on disk, built on first use under ``$SENTEMB_CACHE/token_stores``, and read back
    memory-mapped (:class:`~sentemb.data.token_store.TokenStore`): the same documents, ids and order either way.
    """
    if not isinstance(documents, HubCorpus):
        return long_enough(tokenise(documents, tokenizer), min_tokens)
    from sentemb.data.token_store import build_token_store, store_path

    source = documents.identity()
    store = build_token_store(
        store_path(source, tokenizer, min_tokens),
        documents.batches(),
        tokenizer,
        min_tokens,
        source,
        total=len(documents),
    )
    if not len(store):
        raise _none_long_enough(repr(documents), min_tokens, store.meta["longest_tokens"], store.meta["documents_read"])
    return store
