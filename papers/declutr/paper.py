"""DeCLUTR (Giorgi et al., 2021): the paper's metadata and hooks (transitional: delegates to ``report.py``)."""

from __future__ import annotations

from papers.declutr import experiments, report
from sentemb.paper import Paper


class DeCLUTR(Paper):
    name = "declutr"
    title = "DeCLUTR (Giorgi et al., 2021)"
    citation = "John Giorgi, Osvald Nitski, Bo Wang, Gary Bader. DeCLUTR: Deep Contrastive Learning for Unsupervised Textual Representations. ACL-IJCNLP 2021"
    official_code = "https://github.com/JohnGiorgi/DeCLUTR"

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
