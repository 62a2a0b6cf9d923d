"""The overview: every paper's methods on one evaluator (transitional: delegates to ``report.py``)."""

from __future__ import annotations

from papers.overview import experiments, report
from sentemb.paper import Paper


class Overview(Paper):
    name = "overview"
    title = "Overview: the papers' methods side by side"
    citation = "this archive"
    official_code = "none"
    reproduces = False
    has_claims = False

    def grid(self, profile, extended=False):
        return experiments.grid(profile, extended=extended)

    def tables(self, records, derived_records, profile):
        raise NotImplementedError("transitional")

    def claim_cells(self, tables, records):
        raise NotImplementedError("transitional")

    def summary(self, tables):
        raise NotImplementedError("transitional")
