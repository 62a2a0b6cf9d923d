"""How many of a test set's sentences also occur in the training data (a contamination check).

The small profile trains supervised models on SNLI dev+test (the mirror's stand-in for SimCSE's
``nli_for_simcse.csv``). SNLI and SICK share image-caption sources, and STS-B includes captions too, so some test
sentences are training sentences. Sentences are compared after lower-casing, dropping every character that is not
a letter, digit or space, and collapsing whitespace, since SentEval's copies are tokenised differently from SNLI's.
On the mirror: 31 of STS-B test's 2,549 distinct sentences and 60 of SICK test's 5,007 occur in the 5,883 SNLI
dev+test triples (``tests/test_train_test_overlap.py``).
"""

from __future__ import annotations

import re
from typing import Iterable


def normalise(sentence: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]", "", sentence.lower()).split())


def sentence_overlap(training: Iterable[str], test: Iterable[str]) -> dict[str, int]:
    """Distinct normalised test sentences, and how many of them occur among the training sentences."""
    seen = {normalise(s) for s in training}
    distinct = {normalise(s) for s in test}
    return {"test_sentences": len(distinct), "in_training": len(distinct & seen)}
