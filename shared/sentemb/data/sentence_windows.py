"""Ordered text for SimCSE Table 2's next-sentence objectives: windows of consecutive sentences of one article.

A row is (s_i, s_{i+1}, s_{i+2}, s_{i+3}): a sentence and the three that follow it in the same article. "Next
sentence" takes s_{i+1} as the positive, "next 3 sentences" one of the three drawn at random (Table 2's caption);
both read the same rows, so the two rows of the table see the same anchors.

``wikitext2_windows``: the mirror's WikiText-2 articles (``training/longdocs``, the DeCLUTR corpus) split into
sentences as the mirror's own sentence files were (``training/README.md``): pysbd 0.3.4 (English) per paragraph,
sentences of fewer than 3 words dropped. The articles' text is already detokenised. A window with a ``<unk>`` in
any of its sentences (WikiText-2's train articles replace rare words by it) is left out; the windows of an article
run over its paragraphs in order. SimCSE's next-sentence rows used ordered Wikipedia text (Logeswaran and Lee,
2018); this is the offline substitute, and the small profile says so.

Splitting 722 articles takes about a minute, so the windows are cached in ``$SENTEMB_CACHE/sentence_windows``
under the articles file's sha256 and the pysbd version (a change of either makes a new file).
"""

from __future__ import annotations

import gzip
import json
from functools import lru_cache

from sentemb import settings
from sentemb.data.documents import MIRROR_DOCUMENTS, load_documents
from sentemb.data.registry import files_of
from sentemb.data.synthetic import synthetic_sentences
from sentemb.errors import ConfigError

WINDOW = 4  # a sentence and the 3 after it
MIN_WORDS = 3
CORPORA = ("wikitext2_windows",)


def article_sentences(text: str, segmenter) -> list[str]:
    """The sentences of one article in order: each paragraph (line) split by pysbd, short ones dropped."""
    sentences = []
    for paragraph in text.split("\n"):
        for sentence in segmenter.segment(paragraph):
            sentence = sentence.strip()
            if len(sentence.split()) >= MIN_WORDS:
                sentences.append(sentence)
    return sentences


def windows_of(sentences: list[str]) -> list[tuple[str, ...]]:
    """Every run of ``WINDOW`` consecutive sentences, none with ``<unk>``."""
    return [
        tuple(sentences[i : i + WINDOW])
        for i in range(len(sentences) - WINDOW + 1)
        if not any("<unk>" in s for s in sentences[i : i + WINDOW])
    ]


def _split_articles() -> list[tuple[str, ...]]:
    import pysbd

    segmenter = pysbd.Segmenter(language="en", clean=False)
    return [
        w
        for document in load_documents(MIRROR_DOCUMENTS)
        for w in windows_of(article_sentences(document.text, segmenter))
    ]


@lru_cache(maxsize=None)
def load_sentence_windows(name: str) -> tuple[tuple[str, ...], ...]:
    """The windows of a corpus (``synthetic``: windows of the generated sentences, smoke profile)."""
    if name == "synthetic":
        return tuple(windows_of(synthetic_sentences()))
    if name not in CORPORA:
        raise ConfigError(f"unknown corpus of sentence windows {name!r}; choose from {', '.join(CORPORA)} or synthetic")
    import pysbd

    sha = files_of(MIRROR_DOCUMENTS)[0].sha256
    path = settings.cache_root() / "sentence_windows" / f"{name}-{sha[:16]}-pysbd{pysbd.__version__}.json.gz"
    if path.is_file():
        return tuple(tuple(w) for w in json.loads(gzip.decompress(path.read_bytes())))
    windows = _split_articles()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_bytes(gzip.compress(json.dumps(windows).encode()))
    partial.replace(path)  # a complete file or none
    return tuple(windows)
