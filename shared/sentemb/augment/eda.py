"""EDA, easy data augmentation (Wei & Zou 2019, §2), as used by Farina & Pappadopulo 2024.

The non-contrastive paper (§3 "Augmentations", Table 1 with alpha = 0.1 and 0.2) says only: "we
apply EDA to each branch with the same parameter alpha for synonym replacement, random
insertions, random swaps, and random deletions". It does not say whether one augmented view
applies one operation or all four, and it released no code. We follow EDA's reference code
(jasonwei20/eda_nlp, ``eda()``), which makes each augmented sentence with ONE operation: for one
augmented sentence it builds one candidate per operation and keeps a random one, i.e. the
operation is drawn uniformly from the four. With one parameter, alpha_sr = alpha_ri = alpha_rs =
p_rd = alpha.

The four operations on whitespace words w_1 .. w_l (EDA §2), with

    n = max(1, floor(alpha * l))

The EDA paper writes n = alpha * l; its reference code truncates, max(1, int(alpha * l)), and we
follow the code (this is the one count in the package that is not rounded half up):

  SR  synonym replacement: choose n distinct words that are not stop words and have a WordNet
      synonym; replace each by one of its synonyms chosen at random.
  RI  random insertion, n times: take a random non-stop word of the ORIGINAL sentence that has a
      synonym, and insert a random synonym of it at a random position (any of the len + 1 gaps).
  RS  random swap, n times: choose two distinct positions at random and swap their words.
  RD  random deletion: delete each word independently with probability alpha; if every word
      went, keep one random word; a one-word sentence is unchanged.

Where we differ from the reference code (its behaviour is not in the paper's text): it first
lowercases and strips everything but letters (we keep the text and strip punctuation only for
the synonym look-up, synonym.py); SR there replaces every occurrence of a chosen word type (we
replace n positions); RI there draws from the growing sentence, skips no stop words, always takes
the first synonym and never inserts at the end (we follow the paper's text); synonyms there may
be multi-word (ours are single words, wordnet.py). Synonyms: WordNet 3.0 (wordnet.THESAURUS).
"""

from __future__ import annotations

import math
import random

from sentemb.augment.rounding import check_fraction
from sentemb.augment.synonym import replaceable_synonyms, with_synonym
from sentemb.augment.wordnet import WordNet, load_wordnet

EDA_OPERATIONS = ("synonym_replacement", "random_insertion", "random_swap", "random_deletion")


def eda_change_count(n_words: int, alpha: float) -> int:
    """EDA's n = max(1, int(alpha * l)) (reference code; a tiny tolerance absorbs round-off)."""
    return max(1, math.floor(alpha * n_words + 1e-9))


def eda_synonym_replacement(words: list[str], rng: random.Random, n: int, thesaurus: WordNet) -> list[str]:
    candidates = [i for i, word in enumerate(words) if replaceable_synonyms(word, thesaurus)]
    replaced = list(words)
    for position in rng.sample(candidates, min(n, len(candidates))):
        replaced[position] = with_synonym(words[position], rng.choice(replaceable_synonyms(words[position], thesaurus)))
    return replaced


def eda_random_insertion(words: list[str], rng: random.Random, n: int, thesaurus: WordNet) -> list[str]:
    sources = [word for word in words if replaceable_synonyms(word, thesaurus)]
    inserted = list(words)
    if not sources:
        return inserted
    for _ in range(n):
        synonym = rng.choice(replaceable_synonyms(rng.choice(sources), thesaurus))
        inserted.insert(rng.randrange(len(inserted) + 1), synonym)
    return inserted


def eda_random_swap(words: list[str], rng: random.Random, n: int) -> list[str]:
    swapped = list(words)
    if len(swapped) < 2:
        return swapped
    for _ in range(n):
        i, j = rng.sample(range(len(swapped)), 2)
        swapped[i], swapped[j] = swapped[j], swapped[i]
    return swapped


def eda_random_deletion(words: list[str], rng: random.Random, p: float) -> list[str]:
    if len(words) <= 1:
        return list(words)
    kept = [word for word in words if rng.random() >= p]
    return kept if kept else [words[rng.randrange(len(words))]]


def eda(sentence: str, rng: random.Random, alpha: float, thesaurus: WordNet | None = None) -> str:
    """One EDA view of ``sentence``: one of the four operations, drawn uniformly, at strength alpha."""
    check_fraction("alpha", alpha)
    words = sentence.split()
    if not words:
        return sentence
    operation = rng.choice(EDA_OPERATIONS)
    n = eda_change_count(len(words), alpha)
    if operation == "random_swap":
        augmented = eda_random_swap(words, rng, n)
    elif operation == "random_deletion":
        augmented = eda_random_deletion(words, rng, alpha)
    else:
        thesaurus = thesaurus if thesaurus is not None else load_wordnet()
        if operation == "synonym_replacement":
            augmented = eda_synonym_replacement(words, rng, n, thesaurus)
        else:
            augmented = eda_random_insertion(words, rng, n, thesaurus)
    return " ".join(augmented)
