"""Reported numbers and reproduced tables.

``reported``    load ``papers/<paper>/reported/*.csv`` (schema: docs/derivations.md)
``reproduced``  turn run records into long rows with the same keys, join them with the reported ones
``claims``      a paper's claims as comparisons over cells, tested on the seeds
``provenance_table``  one row per record behind a paper's tables
"""
