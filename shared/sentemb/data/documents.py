"""Documents: the long texts DeCLUTR (Giorgi et al., 2021) samples its anchor and positive spans from.

Corpora: ``openwebtext`` (OpenWebText through ``datasets``; full profile), ``wikitext2_articles`` (the mirror's 722
WikiText-2 articles, a substitute: Wikipedia prose, not web text; small profile), ``synthetic`` (documents of the
synthetic grammar's sentences; smoke, no data).
Length bound: the paper (§4 "Dataset") keeps the documents of at least 2048 tokens; :func:`long_enough` applies the
DeCLUTR objective's ``min_document_tokens`` in subword tokens (by default the span sampler's ``2 * A * l_max``; the
grid sets one value per profile, so every run of a profile trains on the same documents in the same order).
Limitation: documents and their token ids are held in memory as Python objects, fine for the mirror's 2.8M tokens;
OpenWebText (over 1e9 tokens) needs a memory-mapped token store, not built yet.
Relations: :mod:`sentemb.augment.span_sampler` (the bound), :mod:`sentemb.objectives.declutr`.
Counts per corpus and profile: docs/derivations.md#sentembdatadocumentspy
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from typing import Sequence

from sentemb.data.files import read_text
from sentemb.data.registry import files_of
from sentemb.data.synthetic import synthetic_sentences
from sentemb.errors import ConfigError, DataError

MIRROR_DOCUMENTS = "wikitext2_articles"
OPENWEBTEXT = "openwebtext"
#: The Hugging Face dataset the full profile reads OpenWebText from (the corpus the paper cites, [50]). Its ``main``
#: branch is a loading script, which ``datasets`` >= 4 no longer runs; the Hub's Parquet conversion of it
#: (``refs/convert/parquet``) is read instead. Not verifiable offline: whether that conversion is complete (the Hub
#: converts large datasets only in part) is to be checked when the full profile first runs.
OPENWEBTEXT_DATASET = "Skylion007/openwebtext"
OPENWEBTEXT_REVISION = "refs/convert/parquet"
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


def load_documents(name: str) -> list[Document]:
    """The documents of a corpus, in file order."""
    if name == "synthetic":
        return synthetic_documents()
    if name == MIRROR_DOCUMENTS:
        return _mirror_documents()
    if name == OPENWEBTEXT:
        return hub_documents(OPENWEBTEXT_DATASET, revision=OPENWEBTEXT_REVISION)
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


def hub_documents(
    dataset: str,
    data_files: str | Sequence[str] | None = None,
    split: str = "train",
    text_field: str = "text",
    limit: int | None = None,
    revision: str | None = None,
) -> list[Document]:
    """Documents through ``datasets.load_dataset(dataset, data_files=..., split=...)``: the full profile's
    OpenWebText from the Hugging Face hub (downloaded once into the ``datasets`` cache), or any local file the
    ``datasets`` builders read (``dataset="json"`` with ``data_files``). Document ids are ``<dataset>:<row>``."""
    import datasets

    try:
        rows = datasets.load_dataset(dataset, data_files=data_files, split=split, revision=revision)
    except Exception as exc:  # the datasets library raises many types (connection, file, builder) for one cause
        raise DataError(
            f"cannot load documents from {dataset!r}"
            f"{f' ({data_files})' if data_files else ''}: {exc}.\n  Fix: the full profile needs network "
            f"access to the Hugging Face hub, or a local copy passed as data_files."
        ) from exc
    if text_field not in rows.column_names:
        raise DataError(f"{dataset!r} has no {text_field!r} column (columns: {rows.column_names})")
    count = len(rows) if limit is None else min(limit, len(rows))
    return [Document(id=f"{dataset}:{i}", text=str(rows[i][text_field])) for i in range(count)]


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


def long_enough(documents: Sequence[TokenisedDocument], min_tokens: int, corpus: str = "") -> list[TokenisedDocument]:
    """The documents with at least ``min_tokens`` subword tokens, in order; DataError when none is left."""
    kept = [d for d in documents if len(d.token_ids) >= min_tokens]
    if not kept:
        longest = max((len(d.token_ids) for d in documents), default=0)
        raise DataError(
            f"no document of {corpus or 'the corpus'} has {min_tokens} subword tokens (the longest has "
            f"{longest} of {len(documents)} documents).\n  Fix: lower min_document_tokens, or "
            "num_anchors or max_span_len (a document needs 2 * num_anchors * max_span_len tokens), or "
            "use longer documents."
        )
    return kept
