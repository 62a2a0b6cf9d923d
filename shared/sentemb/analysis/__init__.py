"""Analyses stored in every run record.

``alignment_uniformity``  Wang & Isola (2020) metrics, as SimCSE computes them (§3, footnote 3; Fig. 2, 3)
``spectrum``              normalised singular values of the sentence-embedding matrix (SimCSE App. F)
``cosine_groups``         cosine similarity per gold-rating group (SimCSE App. G)
``stsb``                  all three on STS-B, from embeddings computed once
"""
