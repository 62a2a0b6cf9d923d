"""A token store: a corpus's long documents tokenised once, on disk, and read back memory-mapped.

DeCLUTR trains on the documents of at least ``min_tokens`` subword tokens (§4: OpenWebText's of >= 2048). Holding
the full profile's corpus as Python objects (8 M documents, about 9e9 token ids as Python ints) does not fit on a
machine, once per DDP rank; so :func:`build_token_store` tokenises the corpus in batches, keeps the documents long
enough and appends their ids to a flat file, and :class:`TokenStore` reads it back as a sequence of
:class:`~sentemb.data.documents.TokenisedDocument`, each document's ids a tuple of ints as :func:`tokenise` gives
(so the span sampler draws the same spans), the rest left on disk. Memory while building is one batch's ids, whatever
the size of the corpus.
Layout (a folder): ``tokens.u32`` (every kept document's ids, uint32, in corpus order), ``token_offsets.i64``
(n + 1 int64 offsets into it), ``doc_ids.utf8`` and ``doc_id_offsets.i64`` (the documents' ids), ``meta.json``
(format, tokenizer, ``min_tokens``, source, documents read and kept, tokens, the longest document, each file's bytes
and sha256).
Atomicity: a build writes into a hidden temporary folder beside the store and renames it into place
(``os.replace``) only when complete; an interrupted build leaves no store. Concurrent builders (the ranks of a
torchrun run) take a file lock so that one builds; where the lock does not hold (some network file systems) each
builds its own and the loser of the rename uses the winner's.
Where: ``$SENTEMB_CACHE/token_stores/<key>``, the key a sha256 of the source's identity, the tokenizer's, ``min_tokens``
and :data:`FORMAT_VERSION` (:func:`store_path`).
Relations: :mod:`sentemb.data.documents` (:class:`~sentemb.data.documents.HubCorpus`, the source the full profile
streams), :mod:`sentemb.objectives.declutr` (``select_rows``), :mod:`sentemb.augment.span_sampler`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import uuid
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from sentemb import settings
from sentemb.data.documents import Document, TokenisedDocument
from sentemb.errors import ConfigError, DataError

FORMAT_VERSION = 1  # bump when the layout or what is kept changes: old stores are then refused, not misread
BATCH_DOCUMENTS = 1000  # documents tokenised per call when the source hands them one by one
TOKENS, TOKEN_OFFSETS, DOC_IDS, DOC_ID_OFFSETS, META = (
    "tokens.u32",
    "token_offsets.i64",
    "doc_ids.utf8",
    "doc_id_offsets.i64",
    "meta.json",
)
_DTYPES = {TOKENS: np.uint32, TOKEN_OFFSETS: np.int64, DOC_IDS: np.uint8, DOC_ID_OFFSETS: np.int64}
_HASH_CHUNK = 1 << 24  # bytes read at a time when checking a file's sha256


def tokenizer_identity(tokenizer) -> dict:
    """What decides a tokenizer's ids: its ``name_or_path``, its size and (a fast tokenizer) the sha256 of its
    serialised pipeline (vocabulary, normaliser, pre-tokeniser, ...) less the truncation and padding that each call
    sets, so that two tokenizers of one name but different files do not share a store."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    pipeline = None
    if backend is not None:
        serialised = {k: v for k, v in json.loads(backend.to_str()).items() if k not in ("truncation", "padding")}
        pipeline = hashlib.sha256(json.dumps(serialised, sort_keys=True).encode()).hexdigest()
    return {"name_or_path": str(getattr(tokenizer, "name_or_path", "")), "len": len(tokenizer), "sha256": pipeline}


def store_key(source: str, tokenizer, min_tokens: int) -> str:
    """The store's folder name: a sha256 (16 hex digits) of the source's identity, the tokenizer's, ``min_tokens``
    and the format version."""
    identity = {
        "format": FORMAT_VERSION,
        "source": source,
        "tokenizer": tokenizer_identity(tokenizer),
        "min_tokens": min_tokens,
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


def store_path(source: str, tokenizer, min_tokens: int) -> Path:
    """Where the store of ``source`` (an identity string) for this tokenizer and bound lives."""
    return settings.cache_root() / "token_stores" / store_key(source, tokenizer, min_tokens)


def _batched(items: Iterable[Document] | Iterable[Sequence[Document]], size: int) -> Iterator[list[Document]]:
    """Batches of documents: a source's own batches as they come, single documents gathered ``size`` at a time."""
    buffer: list[Document] = []
    for item in items:
        if isinstance(item, Document):
            buffer.append(item)
            if len(buffer) == size:
                yield buffer
                buffer = []
            continue
        if buffer:
            yield buffer
            buffer = []
        yield list(item)
    if buffer:
        yield buffer


class _Writer:
    """The store's four data files, opened for appending, each with a running sha256."""

    def __init__(self, folder: Path) -> None:
        self.files = {name: open(folder / name, "wb") for name in _DTYPES}
        self.digests = {name: hashlib.sha256() for name in _DTYPES}
        self.sizes = dict.fromkeys(_DTYPES, 0)
        self.tokens = self.names = 0
        self.write(TOKEN_OFFSETS, np.zeros(1, np.int64))
        self.write(DOC_ID_OFFSETS, np.zeros(1, np.int64))

    def write(self, name: str, array: np.ndarray) -> None:
        data = np.ascontiguousarray(array, dtype=_DTYPES[name]).tobytes()
        self.files[name].write(data)
        self.digests[name].update(data)
        self.sizes[name] += len(data)

    def append(self, ids: list[str], token_ids: list[list[int]]) -> None:
        """Append a batch's kept documents: their ids and token ids, with the offsets after each."""
        lengths = np.fromiter((len(t) for t in token_ids), np.int64, count=len(token_ids))
        tokens = np.fromiter(itertools.chain.from_iterable(token_ids), np.uint32, count=int(lengths.sum()))
        self.write(TOKENS, tokens)
        self.write(TOKEN_OFFSETS, self.tokens + np.cumsum(lengths))
        self.tokens += int(lengths.sum())
        names = [i.encode() for i in ids]
        self.write(DOC_IDS, np.frombuffer(b"".join(names), np.uint8))
        self.write(DOC_ID_OFFSETS, self.names + np.cumsum([len(n) for n in names], dtype=np.int64))
        self.names += sum(len(n) for n in names)

    def close(self) -> dict:
        """Flush and close the files; their bytes and sha256."""
        for file in self.files.values():
            file.flush()
            os.fsync(file.fileno())
            file.close()
        return {name: {"bytes": self.sizes[name], "sha256": self.digests[name].hexdigest()} for name in _DTYPES}


def _append_batch(writer: _Writer, batch: list[Document], tokenizer, min_tokens: int) -> tuple[int, int]:
    """Tokenise one batch and append its documents of at least ``min_tokens`` ids; (kept, the longest's ids). Its
    ids are freed on return, before the next batch is tokenised."""
    ids = tokenizer([d.text for d in batch], add_special_tokens=False, truncation=False, verbose=False)["input_ids"]
    keep = [k for k, token_ids in enumerate(ids) if len(token_ids) >= min_tokens]
    writer.append([batch[k].id for k in keep], [ids[k] for k in keep])
    return len(keep), max((len(token_ids) for token_ids in ids), default=0)


def _tokenise_into(writer: _Writer, batches: Iterable[list[Document]], tokenizer, min_tokens: int, bar) -> dict:
    """Append every batch's long documents; the counts."""
    read = kept = longest = 0
    for batch in batches:
        batch_kept, batch_longest = _append_batch(writer, batch, tokenizer, min_tokens)
        read, kept, longest = read + len(batch), kept + batch_kept, max(longest, batch_longest)
        bar.update(len(batch))
    return {"documents_read": read, "documents_kept": kept, "longest_tokens": longest}


def _write_store(folder: Path, batches, tokenizer, min_tokens: int, source: str, total: int | None) -> None:
    """The complete store in ``folder`` (an empty, private folder)."""
    from sentemb.progress import progress

    writer = _Writer(folder)
    try:
        with progress(total=total, desc="tokenising into a token store", unit="doc", disable=total is None) as bar:
            counts = _tokenise_into(writer, batches, tokenizer, min_tokens, bar)
    finally:
        files = writer.close()
    meta = {
        "format": FORMAT_VERSION,
        "tokenizer": tokenizer_identity(tokenizer),
        "min_tokens": min_tokens,
        "source": source,
        **counts,
        "total_tokens": writer.tokens,
        "files": files,
    }
    (folder / META).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _publish(tmp: Path, path: Path) -> TokenStore:
    """Rename the complete store ``tmp`` to ``path``; if another builder got there first, use its store instead."""
    try:
        os.replace(tmp, path)
    except OSError:  # a non-empty folder is in place: another process's store (renamed there complete)
        if not path.is_dir():
            raise
        shutil.rmtree(tmp, ignore_errors=True)
        return TokenStore(path)
    return TokenStore(path, verify=False)  # just written, its hashes computed while writing


def build_token_store(
    path: Path,
    documents: Iterable[Document] | Iterable[Sequence[Document]],
    tokenizer,
    min_tokens: int,
    source: str,
    total: int | None = None,
    batch_size: int = BATCH_DOCUMENTS,
) -> TokenStore:
    """The store at ``path`` of the documents of at least ``min_tokens`` subword tokens, built when absent.

    Args:
        path: the store's folder (:func:`store_path`); an existing store there is opened (and checked), not rebuilt.
        documents: the corpus in order, as batches of documents or as documents (gathered ``batch_size`` at a time);
            consumed once, lazily.
        tokenizer: a Hugging Face tokenizer, called on a batch's texts without special tokens or truncation.
        min_tokens: the shortest document kept, in subword tokens.
        source: what the corpus is (written to the metadata).
        total: the number of documents, for the progress bar (none when unknown).
    """
    from filelock import FileLock

    if len(tokenizer) >= 2**32:
        raise ConfigError(
            f"a vocabulary of {len(tokenizer)} tokens does not fit the token store's uint32 ids.\n  Fix: widen "
            "_DTYPES[TOKENS] in sentemb/data/token_store.py and bump FORMAT_VERSION."
        )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path.parent / f".{path.name}.lock")):  # released when the process dies: no stale locks
        if path.exists():
            return TokenStore(path)
        tmp = path.parent / f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
        tmp.mkdir()
        try:
            _write_store(tmp, _batched(documents, batch_size), tokenizer, min_tokens, source, total)
            return _publish(tmp, path)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)  # gone after a rename; a failed build's partial files


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _mapped(path: Path, dtype) -> np.ndarray:
    """The file as a read-only array (an empty file, which cannot be memory-mapped, as an empty one)."""
    if path.stat().st_size == 0:
        return np.zeros(0, dtype)
    return np.memmap(path, dtype=dtype, mode="r")


class TokenStore(Sequence[TokenisedDocument]):
    """A built store, read-only: ``store[i]`` is the i-th kept document in corpus order, its ids a tuple of ints read
    from the memory-mapped file (only that document's). Opening checks the metadata, each file's size against the
    counts and offsets, and (``verify``, the default) each file's sha256: a store that fails raises DataError.

    Attributes:
        path: the store's folder.
        meta: its ``meta.json`` (counts, tokenizer, source, ``min_tokens``).
    """

    def __init__(self, path: Path, verify: bool = True) -> None:
        self.path = Path(path)
        self.meta = self._read_meta()
        self._check_files(verify)
        self._tokens = _mapped(self.path / TOKENS, np.uint32)
        self._token_offsets = _mapped(self.path / TOKEN_OFFSETS, np.int64)
        self._names = _mapped(self.path / DOC_IDS, np.uint8)
        self._name_offsets = _mapped(self.path / DOC_ID_OFFSETS, np.int64)
        for offsets, end, name in (
            (self._token_offsets, self.meta["total_tokens"], TOKEN_OFFSETS),
            (self._name_offsets, self.meta["files"][DOC_IDS]["bytes"], DOC_ID_OFFSETS),
        ):
            if offsets[0] != 0 or offsets[-1] != end or np.any(np.diff(offsets) < 0):
                raise self._broken(f"{name} is not a nondecreasing sequence of offsets from 0 to {end}")

    def _broken(self, what: str) -> DataError:
        return DataError(
            f"token store {self.path}: {what}.\n  Fix: delete the folder {self.path}; the next run that needs it "
            "rebuilds it from the corpus."
        )

    def _read_meta(self) -> dict:
        try:
            meta = json.loads((self.path / META).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise self._broken(f"no {META} (not a token store, or a build that did not finish)") from None
        except ValueError as exc:
            raise self._broken(f"{META} is not JSON ({exc})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT_VERSION:
            found = meta.get("format") if isinstance(meta, dict) else None
            raise self._broken(f"format version {found!r}, this code reads version {FORMAT_VERSION}")
        missing = [k for k in ("documents_kept", "total_tokens", "files") if k not in meta]
        missing += [name for name in _DTYPES if name not in meta.get("files", {})]
        if missing:
            raise self._broken(f"{META} lacks {', '.join(missing)}")
        return meta

    def _check_files(self, verify: bool) -> None:
        kept = self.meta["documents_kept"]
        expected = {
            TOKENS: 4 * self.meta["total_tokens"],
            TOKEN_OFFSETS: 8 * (kept + 1),
            DOC_ID_OFFSETS: 8 * (kept + 1),
        }
        for name in _DTYPES:
            file, recorded = self.path / name, self.meta["files"][name]
            if not file.is_file():
                raise self._broken(f"{name} is missing")
            size = file.stat().st_size
            if size != recorded["bytes"] or size != expected.get(name, size):
                raise self._broken(
                    f"{name} has {size} bytes, its metadata and offsets say {expected.get(name, recorded['bytes'])}"
                    " (truncated or overwritten)"
                )
            if verify and _file_sha256(file) != recorded["sha256"]:
                raise self._broken(f"{name} does not match its sha256 in {META} (corrupted)")

    def __len__(self) -> int:
        return int(self.meta["documents_kept"])

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        i = range(len(self))[index]  # negative indices; IndexError out of range
        a, b = int(self._name_offsets[i]), int(self._name_offsets[i + 1])
        start, end = int(self._token_offsets[i]), int(self._token_offsets[i + 1])
        return TokenisedDocument(bytes(self._names[a:b]).decode(), tuple(self._tokens[start:end].tolist()))

    def __reduce__(self):  # pickled as its folder, not as the arrays the memory maps would copy
        return TokenStore, (self.path, False)

    def __repr__(self) -> str:
        return f"TokenStore({str(self.path)!r}, {len(self)} documents, {self.meta['total_tokens']} tokens)"
