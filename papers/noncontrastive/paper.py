"""Non-contrastive (Farina & Pappadopulo, 2024): the paper's metadata and hooks (transitional: delegates to ``report.py``)."""

from __future__ import annotations

from papers.noncontrastive import experiments, report
from sentemb.paper import Paper


class NonContrastive(Paper):
    name = "noncontrastive"
    title = "Non-contrastive (Farina & Pappadopulo, 2024)"
    citation = "Marco Farina, Duccio Pappadopulo. Non-contrastive sentence representations via self-supervision. Findings of NAACL 2024"
    official_code = "none (no public code found)"

    def grid(self, profile, extended=False):
        return experiments.grid(profile, extended=extended)

    def tables(self, records, derived_records, profile):
        raise NotImplementedError("transitional")

    def claim_cells(self, tables, records):
        raise NotImplementedError("transitional")

    def summary(self, tables):
        return report.markdown_summary(tables)

    def coverage(self):
        return report.coverage()
