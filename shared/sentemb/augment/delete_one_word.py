"""'Delete one word' (SimCSE Table 1 and Figure 2): remove one whitespace token chosen at random.

A one-word sentence is returned unchanged so that no view is ever empty.
"""

from __future__ import annotations

import random


def delete_one_word(sentence: str, rng: random.Random) -> str:
    words = sentence.split()
    if len(words) <= 1:
        return sentence
    del words[rng.randrange(len(words))]
    return " ".join(words)
