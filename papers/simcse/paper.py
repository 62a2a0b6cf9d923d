"""SimCSE (Gao, Yao & Chen, EMNLP 2021): the paper's metadata and hooks over :class:`sentemb.paper.Paper`.

The grid is in ``experiments.py``, the derived analyses in ``analyses.py``, the tables in ``tables.py``, the
figures in ``figures.py`` and the README's summary in ``summary.py``.
"""

from __future__ import annotations

import pandas as pd

from papers.simcse import NAME, experiments, figures, summary
from papers.simcse import tables as paper_tables
from sentemb.paper import Paper
from sentemb.report.full_profile import full_profile_markdown

NOT_RUN_TRANSFER = (
    "not run: the 7 transfer tasks of a recorded run (about 5 min per model on 2 cores; "
    "./run_all.sh --paper simcse --extended)"
)


class SimCSE(Paper):
    name = NAME
    title = "SimCSE (Gao et al., 2021)"
    citation = (
        "Tianyu Gao, Xingcheng Yao, Danqi Chen. SimCSE: Simple Contrastive Learning of Sentence Embeddings. EMNLP 2021"
    )
    official_code = "https://github.com/princeton-nlp/SimCSE"
    not_run_reason = "not run: an ablation outside the small profile's budget (./run_all.sh --paper simcse --extended)"
    coverage_items = {  # every table and figure of the paper (reported/index.csv): what this archive does with it
        "Figure 1": ("not applicable", "a diagram of the method, no numbers"),
        "Table 1": (
            "partly (extended rows)",
            "results/simcse/<profile>/table1.csv: 9 of 10 augmentations "
            "(--extended), 3 seeds for the rows the claims compare; MLM 15% needs a pretrained masked LM, not "
            "offline",
        ),
        "Table 2": (
            "reproduced (extended rows)",
            "results/simcse/<profile>/table2.csv: all 8 cells; next-sentence "
            "rows on consecutive WikiText-2 sentences for ordered Wikipedia text",
        ),
        "Table 3": (
            "reproduced",
            "results/simcse/<profile>/table3.csv; p = 0.1 in the core, the other columns with "
            "--extended on the small profile (the archive's 3-hour budget), 3 seeds each",
        ),
        "Figure 2": (
            "reproduced",
            "figures/simcse/<profile>/figure2_align_uniform_training.*; its runs other than "
            "unsup with --extended on the small profile (the archive's 3-hour budget)",
        ),
        "Table 4": (
            "partly (extended rows)",
            "results/simcse/<profile>/table4.csv, 'full' column: the NLI rows on "
            "SNLI dev+test pairs by label (~6.5k each, 19.7k for all); QQP, Flickr30k, ParaNMT, ANLI and the "
            "'sample' column's 134k-pair subsets are not offline",
        ),
        "Table 5": (
            "partly",
            "the SimCSE rows on the small profile's backbone; the other papers' models are not offline",
        ),
        "Table 6": ("reproduced (extended rows)", "results/simcse/<profile>/table6.csv: all 8 cells"),
        "Table 7": (
            "reproduced (extended rows)",
            "results/simcse/<profile>/table7.csv: all 5 rows; contradiction + neutral on SNLI dev+test quads",
        ),
        "Figure 3": (
            "partly",
            "backbone, its whitening and BERT-flow (NLI), unsup. and sup. SimCSE; the paper's "
            "other models (SBERT, Next3Sent...) are not offline",
        ),
        "Table 8": (
            "partly",
            "results/simcse/<profile>/table8.csv: top-3 of the paper's two queries and 3 more over "
            "the SNLI dev+test premises (Flickr30k captions; the paper searches 150k Flickr30k sentences, not "
            "offline), the backbone in SBERT's column",
        ),
        "Table A.1": (
            "partly (extended rows)",
            "results/simcse/<profile>/tablea1.csv, "
            "figures/simcse/<profile>/tableA1_batch_lr.*: the search at the batch sizes 2 cores allow (16, "
            "32, 64; the paper's 64-512) x lr 1e-5, 3e-5, 5e-5",
        ),
        "Table B.1": ("not applicable", "the protocols of other papers: implemented in sentemb/evaluate/sts.py"),
        "Table B.2": (
            "partly",
            "results/simcse/<profile>/protocols.csv: the archive's models under 'all', 'mean' and "
            "'wmean', the backbone next to the paper's SBERT; BERT-whitening of BERT-base is not offline",
        ),
        "Table B.3": (
            "partly",
            "results/simcse/<profile>/protocols.csv ('wmean'): the backbone, its whitenings and "
            "flows (3 fit seeds), unsup. and sup. SimCSE; the BERT-base rows are not offline",
        ),
        "Table C.1": (
            "partly",
            "results/simcse/<profile>/tablec1.csv: the backbone (a sentence-transformers model, so "
            "the SBERT rows) whitened and flowed (BERT-flow, 3 fit seeds) on NLI vs on the target STS "
            "sentences; the BERT-base rows are not offline",
        ),
        "Table D.1": ("reproduced (extended rows)", "results/simcse/<profile>/tabled1.csv: all 6 rows"),
        "Table D.2": (
            "reproduced (extended rows)",
            "results/simcse/<profile>/tabled2.csv: lambda 0 (the sup run), "
            "0.01, 0.1, 1 on STS-B dev and transfer dev (fasttest); a fresh MLM head tied to the input "
            "embeddings",
        ),
        "Table E.1": (
            "partly (extended rows)",
            "results/simcse/<profile>/tablee1.csv: backbone, unsup. and sup. "
            "SimCSE, each w/o and w/ MLM (fasttest on the small profile); the other papers' models are not "
            "offline",
        ),
        "Figure F.1": (
            "reproduced",
            "figures/simcse/<profile>/figureF1_singular_values.* (with the whitened backbone)",
        ),
        "Figure G.1": (
            "reproduced",
            "figures/simcse/<profile>/figureG1_cosine_by_rating.* (with the whitened backbone)",
        ),
        "Text": ("not applicable", "hyperparameters from the running text: used by the grid"),
    }

    def grid(self, profile, extended=False):
        return experiments.grid(profile, extended=extended)

    def paper_grid(self):
        return experiments.paper_grid()

    def derived(self, build):
        from papers.simcse import analyses

        return analyses.derived(
            build.records,
            build.profile.name,
            build.run_missing,
            build.extended,
            transfer_runs=paper_tables.E1_ROWS,
            retrieval_runs=paper_tables.TABLE8_MODELS,
        )

    def tables(self, build):
        records, derived_records = build.records, build.derived
        tables = {
            "table5": paper_tables.table5(records),
            "table3": paper_tables.table3(records),
            "dev_curves": paper_tables.dev_curves(records),
        }
        transfer = derived_records.get("transfer")  # the tables below are written once some of their runs have records
        optional = {
            **{paper_tables.csv_stem(t): paper_tables.ablation(records, t, transfer) for t in paper_tables.ABLATIONS},
            "tablee1": paper_tables.table_e1(records, derived_records),
            "tablec1": paper_tables.table_c1(records, derived_records),
            "protocols": paper_tables.protocols(records, derived_records),
            "table8": paper_tables.table8(derived_records),
            "tablea1": paper_tables.table_a1(records, build.profile.name),
        }
        tables.update({stem: frame for stem, frame in optional.items() if not frame.empty})
        tables["levelling"] = paper_tables.levelling(tables["dev_curves"])
        return tables

    def claim_cells(self, build):
        stems = ["table5", "table3", *[paper_tables.csv_stem(t) for t in paper_tables.ABLATIONS], "tablee1"]
        return build.cells(*stems)

    def summary(self, build):
        return summary.markdown_summary(build.tables) + full_profile_markdown(self)

    def figures(self, build):
        return figures.figures(build.records, build.derived, build.tables, build.profile.name, build.figures_dir)

    def not_run(self, build):
        """The rows that miss some of their seeds (``missing_seeds``), and Table E.1's recorded runs without transfer
        results."""
        records, rows = build.records, []
        for name, specs in self.grid(build.profile, extended=True).items():
            have = {record["spec"]["seed"] for record in records.get(name, [])}
            missing = [spec.seed for spec in specs if spec.seed not in have]
            if missing:
                rows.append({"run": name, "missing_seeds": ";".join(map(str, missing)), "status": self.not_run_reason})
        transfer = build.derived.get("transfer", {})
        for name in paper_tables.E1_ROWS:
            missing = [r["spec"]["seed"] for r in records.get(name, []) if not paper_tables.transfer_tasks(r, transfer)]
            if missing:
                rows.append(
                    {
                        "run": f"{name}: Table E.1 transfer",
                        "missing_seeds": ";".join(map(str, missing)),
                        "status": NOT_RUN_TRANSFER,
                    }
                )
        return pd.DataFrame(rows, columns=["run", "missing_seeds", "status"])
