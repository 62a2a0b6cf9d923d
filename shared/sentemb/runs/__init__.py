"""Experiment specs, run ids, provenance and the record store.

``spec``        RunSpec: plain frozen data; its content hash is the run id
``store``       run records as JSON, written atomically, one file per run id and profile
``provenance``  commit, versions, device, threads, data sha256
``execute``     ensure(spec): return the record, running train -> evaluate -> analyse if it is missing
"""
