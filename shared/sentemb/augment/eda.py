"""EDA, easy data augmentation (Wei & Zou 2019, §2), as used by Farina & Pappadopulo 2024.

Operations on the whitespace words w_1 .. w_l, with n = max(1, floor(alpha * l)) (the reference code's truncation,
the one count in the package not rounded half up; the paper writes alpha * l): SR replaces n distinct non-stop words
that have a synonym; RI inserts, n times, a synonym of a random non-stop word of the original sentence at a random
gap; RS swaps two random positions, n times; RD deletes each word with probability alpha, keeping one at least.
Inputs: a sentence and alpha (alpha_sr = alpha_ri = alpha_rs = p_rd = alpha, the paper's single parameter).
Official code: the paper released none and does not say whether a view gets one operation or all four; we follow
    EDA's reference code (jasonwei20/eda_nlp, ``eda()``): ONE operation per augmented sentence, drawn uniformly.
    Where its behaviour is not in the paper's text we differ: no lowercasing, SR per position (not per word type),
    RI per the paper's text, single-word synonyms.
References: Wei & Zou 2019, §2; Farina & Pappadopulo 2024, §3 "Augmentations", Table 1 (alpha = 0.1, 0.2).
Relations: synonyms from WordNet 3.0 (:mod:`sentemb.augment.wordnet`, ``THESAURUS``) through ``synonym.py``.
The operations and the reference code's differences in full: docs/derivations.md#sentembaugmentedapy
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
