"""Experiment specs, run ids, provenance and the record store.

(the spec itself is ``sentemb.spec``, below both this package and ``train``)
``store``       run records as JSON, written atomically, one file per run id and profile
``provenance``  commit, versions, device, threads, data sha256
``recorded``    a spec's record from the store, checked against the spec (no training code imported)
``paper_grid``  a paper's grid on a profile, with or without the rows behind ``--extended``
``execute``     ensure(spec): return the record, running train -> evaluate -> analyse if it is missing
``grid_run``    what ``sentemb run`` does: a paper's grid (resuming, side by side or as cluster jobs), then its notebook
"""
