"""Datasets: a registry with sha256 for every file, verified access, and parsers.

``registry``  which files make up each dataset, their sha256 and where they come from
``files``     resolve a registered file in the mirror or the download cache, verify its hash
``download``  fetch the real sources (full profile) into the cache
``sts``       STS12-16, STS-B and SICK-R in SentEval's format
``corpora``   unsupervised sentences and NLI triples for training
``synthetic`` a few hundred generated rows so the smoke profile runs with no data at all
"""
