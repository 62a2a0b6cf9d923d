"""Experiment specs, run ids, provenance and the record store.

(the spec itself is ``sentemb.spec``, below both this package and ``train``)
``store``       run records as JSON, written atomically, one file per run id and profile
``provenance``  commit, versions, device, threads, data sha256
``recorded``    a spec's record from the store, checked against the spec (no training code imported)
``execute``     ensure(spec): return the record, running train -> evaluate -> analyse if it is missing
"""
