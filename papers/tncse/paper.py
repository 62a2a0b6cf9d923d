"""TNCSE (Zong et al., 2025): the paper's metadata and hooks (transitional: delegates to ``report.py``)."""

from __future__ import annotations

from papers.tncse import experiments, report
from sentemb.paper import Paper


class TNCSE(Paper):
    name = "tncse"
    title = "TNCSE (Zong et al., 2025)"
    citation = "Tianyu Zong, Bingkang Shi, Hongzhu Yi, Jungang Xu. TNCSE: Tensor's Norm Constraints for Unsupervised Contrastive Learning of Sentence Embeddings. AAAI 2025"
    official_code = "https://github.com/tianyuzong/TNCSE"

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
