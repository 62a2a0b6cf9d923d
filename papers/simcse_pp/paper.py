"""SimCSE++ (Xu et al., 2023): the paper's metadata and hooks (transitional: delegates to ``report.py``)."""

from __future__ import annotations

from papers.simcse_pp import experiments, report
from sentemb.paper import Paper


class SimCSEpp(Paper):
    name = "simcse_pp"
    title = "SimCSE++ (Xu et al., 2023)"
    citation = "Jiahao Xu, Wei Shao, Lihui Chen, Lemao Liu. SimCSE++: Improving Contrastive Learning for Sentence Embeddings from Two Perspectives. EMNLP 2023"
    official_code = "https://github.com/Jiahao004/SimCSE-plus-plus"

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
