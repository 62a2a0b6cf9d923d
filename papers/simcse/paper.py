"""SimCSE (Gao et al., 2021): the paper's metadata and hooks (transitional: delegates to ``report.py``)."""

from __future__ import annotations

from papers.simcse import experiments, report
from sentemb.paper import Paper


class SimCSE(Paper):
    name = "simcse"
    title = "SimCSE (Gao et al., 2021)"
    citation = "Tianyu Gao, Xingcheng Yao, Danqi Chen. SimCSE: Simple Contrastive Learning of Sentence Embeddings. EMNLP 2021"
    official_code = "https://github.com/princeton-nlp/SimCSE"

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
