"""'Synonym replacement' (SimCSE, Gao et al. 2021, Table 1, §3; STS-B dev 77.4).

SimCSE: "use nlpaug (Ma, 2019) to randomly replace one word with its synonym" (nlpaug's WordNet
synonym augmenter). Ours, for whitespace words w_1 .. w_n:

    candidates = { i : core(w_i) is not a stop word and WordNet has a synonym of core(w_i) }
    i ~ uniform(candidates);  s ~ uniform(synonyms(core(w_i)));  w_i <- prefix + s + suffix

core(w) is w without leading/trailing punctuation ("film." -> "film"); the punctuation is put
back around the synonym. Synonyms come from WordNet 3.0 (wordnet.THESAURUS, parsed in
wordnet.py), single words only. A sentence with no candidate comes back unchanged.

Where nlpaug differs: it POS-tags the sentence and takes synonyms of the tagged part of speech
only; we have no tagger, so synonyms span all parts of speech and stop_words.py stands in for the
tag filter (see stop_words.py). nlpaug also keeps multi-word synonyms; we do not.
"""

from __future__ import annotations

import random

from sentemb.augment.stop_words import STOP_WORDS
from sentemb.augment.wordnet import WordNet, load_wordnet


def split_punctuation(word: str) -> tuple[str, str, str]:
    """(leading punctuation, core, trailing punctuation) of one whitespace token."""
    start, end = 0, len(word)
    while start < end and not word[start].isalnum():
        start += 1
    while end > start and not word[end - 1].isalnum():
        end -= 1
    return word[:start], word[start:end], word[end:]


def replaceable_synonyms(word: str, thesaurus: WordNet) -> tuple[str, ...]:
    """WordNet synonyms of the token's core, or () for stop words and unknown words."""
    _, core, _ = split_punctuation(word)
    if not core or core.lower() in STOP_WORDS:
        return ()
    return thesaurus.synonyms(core)


def with_synonym(word: str, synonym: str) -> str:
    prefix, _, suffix = split_punctuation(word)
    return prefix + synonym + suffix


def synonym_replacement(sentence: str, rng: random.Random, thesaurus: WordNet | None = None) -> str:
    thesaurus = thesaurus if thesaurus is not None else load_wordnet()
    words = sentence.split()
    candidates = [i for i, word in enumerate(words) if replaceable_synonyms(word, thesaurus)]
    if not candidates:
        return sentence
    position = rng.choice(candidates)
    synonym = rng.choice(replaceable_synonyms(words[position], thesaurus))
    words[position] = with_synonym(words[position], synonym)
    return " ".join(words)
