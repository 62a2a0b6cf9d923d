"""All of a run's geometry analyses on STS-B, from embeddings that were already computed.

Positives (alignment) are the STS-B pairs with gold score > 4; uniformity, the spectrum and the
cosine groups use the sentences and pairs of the chosen splits (full profile: train+dev+test, i.e.
"all STS-B sentences" of SimCSE's footnote 3; small profile: dev+test, to save encoding time).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from sentemb.analysis.alignment_uniformity import alignment, uniformity
from sentemb.analysis.cosine_groups import BINS, cosine_by_rating
from sentemb.analysis.spectrum import normalised_singular_values
from sentemb.data.sts import STSPairs
from sentemb.evaluate.sts import cosine_scores

POSITIVE_THRESHOLD = 4.0


def align_uniform(pairs: Sequence[STSPairs], lookup: Mapping[str, np.ndarray]) -> dict:
    s1 = [s for p in pairs for s, g in zip(p.sent1, p.scores) if g > POSITIVE_THRESHOLD]
    s2 = [s for p in pairs for s, g in zip(p.sent2, p.scores) if g > POSITIVE_THRESHOLD]
    sentences = list(dict.fromkeys(s for p in pairs for s in p.sentences()))
    return {
        "alignment": alignment(np.stack([lookup[s] for s in s1]), np.stack([lookup[s] for s in s2])),
        "uniformity": uniformity(np.stack([lookup[s] for s in sentences])),
        "n_positive_pairs": len(s1),
        "n_sentences": len(sentences),
    }


def analyse(pairs: Sequence[STSPairs], lookup: Mapping[str, np.ndarray], splits: Sequence[str]) -> dict:
    sentences = list(dict.fromkeys(s for p in pairs for s in p.sentences()))
    matrix = np.stack([lookup[s] for s in sentences])
    cos = np.concatenate(
        [cosine_scores(np.stack([lookup[s] for s in p.sent1]), np.stack([lookup[s] for s in p.sent2])) for p in pairs]
    )
    gold = np.concatenate([p.scores for p in pairs])
    norms = np.linalg.norm(matrix, axis=1)
    return {
        "data": f"STS-B {'+'.join(splits)}",
        **align_uniform(pairs, lookup),
        "singular_values": [float(v) for v in normalised_singular_values(matrix)],
        "cosine_by_rating": cosine_by_rating(cos, gold),
        "cosine_bins": [float(b) for b in BINS],
        "embedding_norm": {"mean": float(norms.mean()), "std": float(norms.std())},
    }
