"""The pretraining text: the mirror's training text, no evaluation text, packed into sequences of ``max_len`` tokens.

Training: the WikiText-2 articles of split ``train`` (a paragraph a unit; ``<unk>`` becomes [UNK]), the leads of the
Wikipedia vital articles and the head of SimCSE's wiki1m (a sentence a unit). Not ``wiki_sentences_combined``, which
holds WikiText-2 valid/test sentences. Held out: WikiText-2 raw valid. A training unit that shares a run of
``NGRAM`` words with WikiText-2 raw valid or test is dropped (the leads of Du Fu or Tikal are both vital articles and
WikiText-2 valid/test articles); the counts are in :attr:`Corpus.counts`.
Packing: the units' subword ids (MiniLM's uncased BERT vocabulary) are concatenated in file order and cut into
pieces of ``max_len - 2``, each wrapped as [CLS] ... [SEP]; the last, shorter piece is dropped. The run shuffles
the sequences (seeded, per epoch). The packed tensors are cached under ``$SENTEMB_CACHE/pretrain/`` by the files'
sha256, the vocabulary and ``max_len``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass

import numpy as np
import torch

from sentemb import settings
from sentemb.atomic import atomic_write
from sentemb.data.files import read_text, track_reads, verified_path

ARTICLES = "training/longdocs/wikitext2_articles.jsonl.gz"
SENTENCE_FILES = (
    "training/unsup/wikipedia_vital4_lead_sentences.txt.gz",
    "training/unsup/wiki1m_for_simcse.first11914.txt.gz",
)
HELDOUT = "training/raw/wikitext2/wikitext-2-raw.wiki.valid.raw.gz"
WIKITEXT2_TEST = "training/raw/wikitext2/wikitext-2-raw.wiki.test.raw.gz"
TRAINING_FILES = (ARTICLES, *SENTENCE_FILES)
NGRAM = 13  # the decontamination's word n-gram (GPT-3's)
CACHE_FORMAT = 1  # bump when the text or the packing changes


def raw_wikitext_paragraphs(relpath: str) -> list[str]:
    """The paragraphs of a WikiText-2 raw file: headings (`` = Title = ``) and blank lines dropped, WikiText's
    ``@-@``, ``@,@``, ``@.@`` joined back (the BERT tokenizer splits the remaining spaced punctuation alike)."""
    paragraphs = []
    for line in read_text(relpath).splitlines():
        line = line.strip()
        if line and not (line.startswith("=") and line.endswith("=")):
            paragraphs.append(line.replace(" @-@ ", "-").replace(" @,@ ", ",").replace(" @.@ ", "."))
    return paragraphs


def _ngrams(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {tuple(words[i : i + NGRAM]) for i in range(len(words) - NGRAM + 1)}


def training_units(unk_token: str = "[UNK]") -> tuple[list[str], dict[str, dict[str, int]]]:
    """The training units in file order, less those sharing an n-gram with WikiText-2 valid or test; and per file the
    units kept and dropped."""
    held = set().union(*(_ngrams(p) for f in (HELDOUT, WIKITEXT2_TEST) for p in raw_wikitext_paragraphs(f)))
    sources = {ARTICLES: []}
    for line in read_text(ARTICLES).splitlines():
        article = json.loads(line)
        if article["split"] == "train":
            sources[ARTICLES] += [p.replace("<unk>", unk_token) for p in article["text"].split("\n") if p.strip()]
    for relpath in SENTENCE_FILES:
        sources[relpath] = [s.strip() for s in read_text(relpath).splitlines() if s.strip()]
    units, counts = [], {}
    for relpath, texts in sources.items():
        kept = [t for t in texts if not (_ngrams(t) & held)]
        counts[relpath] = {"units": len(kept), "dropped_overlapping_heldout": len(texts) - len(kept)}
        units += kept
    return units, counts


def pack(token_ids: list[list[int]], cls_id: int, sep_id: int, max_len: int) -> torch.Tensor:
    """[n, max_len] int32: the concatenated ids cut into pieces of ``max_len - 2``, each as [CLS] piece [SEP]."""
    total = sum(len(ids) for ids in token_ids)
    stream = torch.from_numpy(np.fromiter(itertools.chain.from_iterable(token_ids), dtype=np.int32, count=total))
    n = len(stream) // (max_len - 2)
    body = stream[: n * (max_len - 2)].view(n, max_len - 2)
    return torch.cat(
        [torch.full((n, 1), cls_id, dtype=torch.int32), body, torch.full((n, 1), sep_id, dtype=torch.int32)], dim=1
    )


@dataclass(frozen=True)
class Corpus:
    train: torch.Tensor  # [n, max_len] int32, file order (the run shuffles)
    heldout: torch.Tensor  # [m, max_len] int32, WikiText-2 raw valid in file order
    files: dict[str, str]  # relpath -> sha256 of every file read (training, held-out, decontamination)
    counts: dict  # units kept and dropped per training file, tokens


def load_corpus(tokenizer, max_len: int) -> Corpus:
    with track_reads() as files:
        for relpath in (*TRAINING_FILES, HELDOUT, WIKITEXT2_TEST):
            verified_path(relpath)
    vocabulary = json.dumps(sorted(tokenizer.get_vocab().items()))
    key = hashlib.sha256(json.dumps([files, vocabulary, max_len, CACHE_FORMAT], sort_keys=True).encode()).hexdigest()
    cache = settings.cache_root() / "pretrain" / f"corpus-{key[:16]}.pt"
    if cache.is_file():
        saved = torch.load(cache, weights_only=True)
        return Corpus(saved["train"], saved["heldout"], dict(files), json.loads(saved["counts"]))
    units, counts = training_units(tokenizer.unk_token)

    def ids(texts: list[str]) -> list[list[int]]:
        return tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"]

    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    train = pack(ids(units), cls_id, sep_id, max_len)
    heldout = pack(ids(raw_wikitext_paragraphs(HELDOUT)), cls_id, sep_id, max_len)
    counts = {
        "files": counts,
        "train_sequences": len(train),
        "train_tokens": train.numel(),
        "heldout_sequences": len(heldout),
    }
    payload = {"train": train, "heldout": heldout, "counts": json.dumps(counts)}
    atomic_write(cache, lambda tmp: torch.save(payload, tmp))
    return Corpus(train, heldout, dict(files), counts)
