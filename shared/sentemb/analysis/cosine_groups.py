"""Cosine similarity of STS-B pairs grouped by gold rating (SimCSE Appendix G, Figure G.1).

Pairs fall into five groups by their 0-5 rating: [0,1), [1,2), [2,3), [3,4), [4,5]. For each group
the record keeps a density histogram over [-1, 1] (enough to redraw the figure), plus mean, std
and count.
"""

from __future__ import annotations

import numpy as np

EDGES = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)
BINS = np.linspace(-1.0, 1.0, 41)


def group_of(score: float) -> int:
    return min(int(np.searchsorted(EDGES, score, side="right")) - 1, len(EDGES) - 2)


def cosine_by_rating(cosines: np.ndarray, gold: np.ndarray) -> list[dict]:
    groups = np.array([group_of(g) for g in gold])
    out = []
    for k in range(len(EDGES) - 1):
        values = cosines[groups == k]
        density, _ = np.histogram(values, bins=BINS, density=len(values) > 0)
        out.append(
            {
                "group": f"{EDGES[k]:g}-{EDGES[k + 1]:g}",
                "n": int(len(values)),
                "mean": float(values.mean()) if len(values) else None,
                "std": float(values.std()) if len(values) else None,
                "density": [float(d) for d in np.nan_to_num(density)],
            }
        )
    return out
