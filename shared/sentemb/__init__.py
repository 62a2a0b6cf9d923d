"""sentemb: the shared core of the sentence-embedding reproducibility archive.

One idea per module:

- ``settings``   where data, caches, results and figures live (env: SENTEMB_DATA, SENTEMB_CACHE, ...)
- ``data``       dataset registry with sha256, loaders for STS / SICK-R / training corpora
- ``models``     backbones, SimCSE's poolers, the SentenceEncoder used by every evaluator
- ``objectives`` one loss family per file, each citing its paper's equation
- ``augment``    discrete text augmentations
- ``distributed`` torchrun helpers (global batch, gradient scale), below the objectives
- ``train``      one readable training loop
- ``evaluate``   STS evaluation with SentEval's protocol
- ``analysis``   alignment / uniformity, singular spectrum, cosine per rating group
- ``runs``       experiment specs, run ids, the record store, provenance
- ``report``     reported numbers, reported-vs-reproduced tables
- ``plots``      the one figure style
- ``paper``      the Paper contract and the registry's reader; above it, what works on every paper:
  ``archive_coverage``, ``readme_summary``, ``grid_run`` (``sentemb run``), ``notebooks``, ``site``, ``cli``
- ``rehearsal``  the full profile's hub downloads, rehearsed offline against a stand-in hub on 127.0.0.1
"""

__version__ = "0.1.0"
