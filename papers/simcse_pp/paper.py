"""SimCSE++ (Xu et al., 2023): the paper's metadata and hooks; its tables, figures and README summary are in
``tables.py``, ``figures.py`` and ``summary.py``.

Besides the grid's runs, the tables read the SimCSE grid's backbone run (Table 4's first row) and derived records
of the trained models: whitening and BERT-flow (Table 4), top-5 retrieval (Table 7) and the rank of the
cross-correlation matrix (Table 2), each computed once and kept. Nothing here trains, except :meth:`derived`, which
re-trains a run whose checkpoint is gone from this machine.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from papers.simcse_pp import NAME, experiments, figures, summary
from papers.simcse_pp import tables as paper_tables
from sentemb.analysis.retrieval import committed_queries, corpus_premises, seeded_queries
from sentemb.data.corpora import load_rows
from sentemb.paper import Paper, get_paper
from sentemb.report.full_profile import full_profile_markdown
from sentemb.report.reported import load_reported

N_RANK_BATCH = 64  # §4.2: "a batch of 64 sentences"
TABLE7_RANDOM_QUERIES = 3
QUERIES_FILE = Path(__file__).with_name("retrieval_queries.json")  # Table 7's queries per corpus, committed


def table7_queries(nli_corpus: str) -> list[str]:
    """Table 7's queries on ``nli_corpus``: the paper's, then ``TABLE7_RANDOM_QUERIES`` of its premises drawn with seed
    0; read from ``retrieval_queries.json`` when committed there, so that finding a stored record reads no data."""
    return committed_queries(QUERIES_FILE, nli_corpus) or queries_from_data(nli_corpus)


def queries_from_data(nli_corpus: str) -> list[str]:
    """:func:`table7_queries` drawn from the corpus itself (what ``retrieval_queries.json`` commits)."""
    paper = list(load_reported(SimCSEpp.name, "table7.text").query("row == 'query'")["text"])
    return seeded_queries(paper, corpus_premises(nli_corpus), TABLE7_RANDOM_QUERIES)


def _corpus(spec: dict) -> str:
    return "synthetic" if spec["synthetic_data"] else spec["train_data"]


class SimCSEpp(Paper):
    name = NAME
    title = "SimCSE++ (Xu et al., 2023)"
    citation = (
        "Jiahao Xu, Wei Shao, Lihui Chen, Lemao Liu. SimCSE++: Improving Contrastive Learning for Sentence "
        "Embeddings from Two Perspectives. EMNLP 2023"
    )
    not_testable = paper_tables.NOT_TESTABLE
    official_code = "https://github.com/Jiahao004/SimCSE-plus-plus"
    not_run_reason = "not run: outside the small profile's 25-min budget (./run_all.sh --paper simcse_pp --extended)"
    coverage_items = {
        "Table 1": (
            "reproduced (extended rows)",
            "results/simcse_pp/<profile>/table1.csv; -Noise with K = 3 dropout "
            "samples in the small profile (10 in the paper): a -Noise step costs 2K + 2 encoder passes",
        ),
        "Table 2": (
            "reproduced (extended rows)",
            "results/simcse_pp/<profile>/table2.csv; M rescaled to D = 384, "
            "with the rank of the cross-correlation matrix (§4.2) per run",
        ),
        "Table 3": (
            "partly",
            "the SimCSE, +Off-Info, +DCL and SimCSE++ rows on the small profile's backbone (3 "
            "seeds); the other models and backbones of the table are not offline",
        ),
        "Table 4": (
            "partly",
            "backbone + whitening (wiki, NLI) and + BERT-flow (NLI; 3 fit seeds), DCL alone (wiki, "
            "NLI; extended rows), SimCSE + whitening and + BERT-flow (wiki); DiffCSE (no pretrained "
            "generator offline) is not run",
        ),
        "Table 5": ("reproduced (extended rows)", "results/simcse_pp/<profile>/table5.csv (STS-B dev)"),
        "Table 6": (
            "reproduced",
            "seconds per step of the Table 3 runs on this machine, extrapolated to one epoch of wiki1m",
        ),
        "Table 7": (
            "reproduced (substitute corpus)",
            "top-5 retrieval over the mirror's SNLI dev+test premises "
            "(Flickr30k captions) instead of Flickr30k's 150k captions, which are not offline",
        ),
        "Figure 1": ("reproduced", "figures/simcse_pp/<profile>/figure1_align_uniform.*"),
        "Text": ("not applicable", "hyperparameters from the running text: used by papers/simcse_pp/experiments.py"),
    }

    def grid(self, profile, extended=False):
        return experiments.grid(profile, extended=extended)

    def paper_grid(self):
        return experiments.paper_grid()

    def collect(self, build):
        """The grid's records and the SimCSE grid's backbone run (``backbone_avg``), which Table 4 starts from."""
        from sentemb.runs.execute import ensure

        records = super().collect(build)
        backbone = get_paper("simcse").grid(build.profile.name, extended=True)["backbone_avg"][0]
        records["backbone_avg"] = [ensure(backbone, run_missing=build.run_missing, progress=build.progress)]
        return records

    def derived(self, build):
        """Whitening and BERT-flow (Table 4), retrieval (Table 7) and ranks (Table 2), computed when missing."""
        from sentemb.analysis.rank_bottleneck import cross_correlation_rank
        from sentemb.analysis.retrieval import top_k
        from sentemb.runs.derived import ensure_derived
        from sentemb.runs.flow_records import flowed_sts_seeds
        from sentemb.runs.whitening_records import whitened_sts

        records, run_missing = build.records, build.run_missing
        wiki = _corpus(records["simcse"][0]["spec"])
        nli = _corpus(self.grid(build.profile, extended=True)["dcl_only_nli"][0].as_dict())
        backbone, simcse = records["backbone_avg"][0], records["simcse"][0]
        out = {}
        for key, record, corpus in (
            ("backbone_whitening_wiki", backbone, wiki),
            ("backbone_whitening_nli", backbone, nli),
            ("simcse_whitening_wiki", simcse, wiki),
        ):
            out[key] = whitened_sts(
                record, corpus, lambda spec, corpus=corpus: load_rows("sentences", corpus), run_missing
            )
        for key, record, corpus in (("backbone_flow_nli", backbone, nli), ("simcse_flow_wiki", simcse, wiki)):
            out[key] = flowed_sts_seeds(
                record, corpus, lambda spec, corpus=corpus: load_rows("sentences", corpus), run_missing
            )

        queries = table7_queries(nli)

        def retrieval(encoder, spec):
            premises = corpus_premises(nli)
            vectors = encoder.encode(premises, batch_size=64)
            return {
                "corpus": nli,
                "n_corpus": len(premises),
                "queries": top_k(premises, vectors, queries, encoder.encode(queries, batch_size=64), k=5),
            }

        for name in ("simcse", "simcse_pp"):
            out[f"retrieval_{name}"] = ensure_derived(
                records[name][0],
                "retrieval_top5",
                {"corpus": nli, "queries": queries},
                retrieval,
                run_missing=run_missing,
            )
        for name in ["simcse", "bt"] + [f"bt_pad_{m}" for m in experiments.TABLE2_PADDING]:
            if records[name]:
                padding = records[name][0]["spec"]["objective_params"].get("bt_padding", 0)
                out[f"rank_{name}"] = ensure_derived(
                    records[name][0],
                    "cross_correlation_rank",
                    {"corpus": wiki, "batch": N_RANK_BATCH, "padding": padding},
                    lambda encoder, spec, padding=padding: cross_correlation_rank(
                        encoder, load_rows("sentences", wiki)[:N_RANK_BATCH], padding
                    ),
                    run_missing=run_missing,
                )
        return out

    def tables(self, build):
        records, derived_records = build.records, build.derived
        return {
            "table1": paper_tables.table1(records),
            "table2": paper_tables.table2(records, derived_records),
            "table3": paper_tables.table3(records),
            "table4": paper_tables.table4(records, derived_records),
            "table5": paper_tables.table5(records),
            "table6": paper_tables.table6(records),
            "table7": paper_tables.table7(derived_records),
        }

    def claim_cells(self, build):
        """Tables 1-6, with Table 3's SBERT-base rows also under the BERT-base names the claims use
        (:data:`tables.CLAIM_ALIASES`)."""
        cells = build.cells(*(f"table{n}" for n in range(1, 7)))
        table3 = (cells["table"] == "Table 3") & cells["reported_row"].isin(list(paper_tables.CLAIM_ALIASES))
        aliases = cells[table3].copy()
        aliases["reported_row"] = aliases["reported_row"].map(paper_tables.CLAIM_ALIASES)
        return pd.concat([cells, aliases], ignore_index=True)

    def summary(self, build):
        return summary.markdown_summary(build.tables) + full_profile_markdown(self)

    def figures(self, build):
        """Figure 1, and Table 5's sweeps once their runs have records (the notebook shows them beside the table)."""
        profile, folder = build.profile.name, build.figures_dir
        return figures.figure1(build.records, profile, folder) + figures.table5_figure(
            build.tables["table5"], profile, folder
        )

    @staticmethod
    def wide(table, aggregation=("all", ""), index=("row",), column="column"):
        """:meth:`Paper.wide`, indexed by the paper's row group too where the table has one (Tables 1, 3, 4)."""
        rows = table if table.empty else table[table["aggregation"].isin(aggregation)]
        grouped = not rows.empty and rows["reported_group"].fillna("").ne("").any()
        return Paper.wide(table, aggregation, ("reported_group", *index) if grouped else index, column)
