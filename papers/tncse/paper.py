"""TNCSE (Zong et al., 2025): the paper's metadata, coverage and hooks; its tables, figures and README summary are in
``tables.py``, ``figures.py`` and ``summary.py``.

The grid is ``experiments.py``'s; Table 2's MTEB records are shared with the non-contrastive paper's analysis of the
same runs, and Figure 5's LayerNorm removal is a derived record of the seed-42 stage-1 encoder.
"""

from __future__ import annotations

import numpy as np

from papers.tncse import NAME, experiments, figures, summary
from papers.tncse import tables as paper_tables
from papers.tncse.tables import STAGE1
from sentemb.data.corpora import load_rows
from sentemb.paper import Paper
from sentemb.report.full_profile import full_profile_markdown

N_FIGURE5_SENTENCES = 100  # "We first randomly select 100 sentences from Wiki1M"
FIGURE5_REMOVED = tuple(range(7))  # the last 0..6 LayerNorms


def figure5_sample(corpus: str) -> list[str]:
    """Figure 5's sentences: ``N_FIGURE5_SENTENCES`` of ``corpus`` drawn with seed 0, in corpus order (read only when
    the record is computed)."""
    sentences = load_rows("sentences", corpus)
    rng = np.random.default_rng(0)
    return [sentences[i] for i in sorted(rng.choice(len(sentences), N_FIGURE5_SENTENCES, replace=False))]


class TNCSE(Paper):
    name = NAME
    title = "TNCSE (Zong et al., 2025)"
    citation = (
        "Tianyu Zong, Bingkang Shi, Hongzhu Yi, Jungang Xu. TNCSE: Tensor's Norm Constraints for Unsupervised "
        "Contrastive Learning of Sentence Embeddings. AAAI 2025"
    )
    official_code = "https://github.com/tianyuzong/TNCSE"
    not_run_reason = "not run: outside the small profile's budget (./run_all.sh --paper tncse --extended)"
    coverage_items = {
        "Figure 1": ("not applicable", "an illustration without data"),
        "Figure 2": ("reproduced", "the analytic surface of Eq. 3 (figures/tncse/<profile>/figure2_tn_surface.*)"),
        "Figure 3": ("not applicable", "an architecture diagram without data"),
        "Figure 4": (
            "reproduced (substitute stage 1)",
            "TNCSE vs SimCSE and the untrained pair over 3 seeds with Welch's t-test; " + STAGE1,
        ),
        "Figure 5": (
            "partly",
            "mean [CLS] norm of 100 training sentences and STS-B dev after removing the last 0-6 "
            "LayerNorms of the stage-1 encoder, without re-training (the paper re-trains TNCSE after each "
            "removal)",
        ),
        "Figure 6": ("reproduced (substitute stage 1)", "alignment/uniformity (STS-B) of the trained rows, seed 42"),
        "Table 1": (
            "partly",
            "SimCSE, the untrained stage-1 pair and TNCSE on the small profile's backbone, 3 seeds; "
            "the other baselines, D, UC and UC D are not run (distillation unpublished, InfoCSE not offline); "
            + STAGE1,
        ),
        "Table 2": (
            "partly",
            "MTEB on the mirror's 17 tasks (1 of STS17's 11 subsets, none of STS22's 18, 6 of the 30 "
            "classification tasks, 2 retrieval tasks scored by mteb's nDCG@10 where the paper reports MAP@10, "
            "no reranking) for SimCSE and TNCSE, seed 42 (extended rows)",
        ),
        "Table 3": (
            "partly",
            "the dual SimCSE encoder (= TNCSE untrained, in this substitution) and TNCSE; ESimCSE, "
            "DiffCSE, InfoCSE and RankCSE are not implemented or not offline",
        ),
        "Table 4": ("reproduced (extended rows)", "the six combinations of loss terms; " + STAGE1),
        "Table 5": (
            "reproduced (extended rows)",
            "SimCSE (the paper's: MLP on [CLS], B x B InfoNCE), SimCSE matched "
            "to TNCSE-Single (its objective without L_TN: no MLP, symmetric 2B-row InfoNCE; the claim's "
            "SimCSE) and TNCSE-Single, all from the backbone on wiki + SICK-R",
        ),
        "Table 6": (
            "partly (extended rows)",
            "SimCSE and TNCSE with and without SICK-R sentences (SICK-R is also a "
            "test set: flagged); ESimCSE, DiffCSE, InfoCSE and RankCSE are not run",
        ),
        "Text": (
            "not applicable",
            "hyperparameters from the text, supplement and code: used by papers/tncse/experiments.py",
        ),
    }
    #: The extended rows an item's reproduced part rests on: without their records it is not (or only partly) done.
    extended_items = {
        "Table 2": ("simcse", "tncse"),  # their MTEB derived records (``mteb_<run>``)
        "Table 4": tuple(experiments.table4_run(terms) for terms in experiments.TABLE4.values()),
        "Table 5": ("simcse_sickr", "simcse_matched", "tncse_single"),
        "Table 6": ("tncse_wiki", "simcse_sickr"),
    }
    not_testable = {
        "tncse-bert-beats-edfse": "EDFSE's RTT-trained ensemble is not offline",
        "tncse-bert-best-among-baselines": "the other baselines (DiffCSE, ESimCSE, ArcCSE, ...) are not implemented",
        "tncse-roberta-best-among-baselines": "RoBERTa is not offline",
        "tncse-d-bert-beats-edfse-d": "the distillation method (TNCSE D) is unpublished",
        "tncse-d-roberta-best-single-encoder": "the distillation method and RoBERTa are not available",
        "tncse-uc-beats-rankcse-uc-bert": "the InfoCSE checkpoint and RankCSE are not offline",
        "tncse-uc-beats-rankcse-uc-roberta": "the InfoCSE checkpoint, RankCSE and RoBERTa are not offline",
        "tncse-mteb-sts22-best": "needs the baselines' MTEB scores, and STS22 is not in the mirror (none of its 18 "
        "subsets)",
        "tncse-mteb-retrieval-best": "needs the baselines' MTEB scores; the mirror holds 2 of the 30 retrieval tasks",
        "tncse-best-dual-encoder": "the other baselines' dual encoders (ESimCSE, DiffCSE, InfoCSE, RankCSE) are not "
        "run",
    }

    def grid(self, profile, extended=False):
        return experiments.grid(profile, extended=extended)

    def paper_grid(self):
        return experiments.paper_grid()

    def derived(self, build):
        """Figure 5's LayerNorm removal on the seed-42 stage-1 encoder, and (with ``extended``, or when they exist)
        Table 2's MTEB records of SimCSE and TNCSE seed 42."""
        from sentemb.analysis.layernorm_removal import layernorm_removal
        from sentemb.runs.derived import ensure_derived
        from sentemb.runs.execute import NotRun
        from sentemb.runs.mteb_geometry_records import mteb_and_geometry

        records, run_missing = build.records, build.run_missing
        stage1 = records["simcse"][0]
        corpus = "synthetic" if stage1["spec"]["synthetic_data"] else stage1["spec"]["train_data"]
        out = {
            "figure5": ensure_derived(
                stage1,
                "layernorm_removal",
                {
                    "corpus": corpus,
                    "n_sentences": N_FIGURE5_SENTENCES,
                    "sample_seed": 0,
                    "removed": list(FIGURE5_REMOVED),
                },
                lambda model, spec: layernorm_removal(
                    model, figure5_sample(corpus), FIGURE5_REMOVED, synthetic=spec.synthetic_data
                ),
                run_missing=run_missing,
            )
        }
        for name in ("simcse", "tncse"):
            try:
                out[f"mteb_{name}"] = mteb_and_geometry(records[name][0], run_missing=run_missing and build.extended)
            except NotRun:
                pass
        return out

    def tables(self, build):
        records, derived_records = build.records, build.derived
        return {
            "table1": paper_tables.table1(records),
            "table2": paper_tables.table2(derived_records),
            "table3": paper_tables.table3(records),
            "table4": paper_tables.table4(records),
            "table5": paper_tables.table5(records),
            "table6": paper_tables.table6(records),
            "figure5": paper_tables.figure5_table(derived_records),
        }

    def claim_cells(self, build):
        """Table 1's TNCSE row stands for the paper's BERT-base TNCSE row."""
        return build.cells("table1", "table3", "table4", "table5", "table6")

    def summary(self, build):
        return summary.markdown_summary(build.tables) + full_profile_markdown(self)

    def figures(self, build):
        """Figures 4, 2, 5 and 6 (the notebook's order), from Table 1, Figure 5's table and the records' geometry."""
        profile, folder, tables = build.profile.name, build.figures_dir, build.tables
        return [
            *figures.figure4(tables["table1"], profile, folder),
            *figures.figure2(profile, folder),
            *figures.figure5(tables["figure5"], profile, folder),
            *figures.figure6(build.records, profile, folder),
        ]

    def coverage(self, build=None):
        """Given a build, an item whose extended rows have no records yet says so instead of its intended status."""
        table = super().coverage()
        if build is None:
            return table
        records, derived_records = build.records, build.derived
        for item, runs in self.extended_items.items():
            if item == "Table 2":
                missing = [r for r in runs if f"mteb_{r}" not in (derived_records or {})]
            else:
                missing = [r for r in runs if not records.get(r)]
            if not missing:
                continue
            row = table["item"] == item
            status = "not run" if len(missing) == len(runs) else "partly"
            if item == "Table 4":  # the untrained pair and the full loss are core rows
                status = "partly"
            table.loc[row, "status"] = status
            table.loc[row, "where / why"] = (
                f"no records yet for {', '.join(missing)} (extended rows: ./run_all.sh "
                f"--paper tncse --extended); intended: " + table.loc[row, "where / why"]
            )
        return table
