"""DeCLUTR (Giorgi et al., 2021): the paper's metadata and hooks.

The grid is ``experiments.py``; the tables are ``tables.py``, the figures ``figures.py`` and the README's summary
``summary.py``. The claims on probing, RoBERTa-base or the baselines cannot be tested offline and are *not run*,
each with its reason.
"""

from __future__ import annotations

import pandas as pd

from papers.declutr import NAME, experiments, figures, summary
from papers.declutr import tables as paper_tables
from papers.declutr.tables import DEV_SCORE, N_DOWNSTREAM
from sentemb.paper import Paper
from sentemb.report.full_profile import full_profile_markdown


class DeCLUTR(Paper):
    name = NAME
    title = "DeCLUTR (Giorgi et al., 2021)"
    citation = (
        "John Giorgi, Osvald Nitski, Bo Wang, Gary Bader. DeCLUTR: Deep Contrastive Learning for Unsupervised "
        "Textual Representations. ACL-IJCNLP 2021"
    )
    official_code = "https://github.com/JohnGiorgi/DeCLUTR"
    not_run_reason = "not run: outside the small profile's budget (./run_all.sh --paper declutr --extended)"
    coverage_items = {
        "Table 1": (
            "partly",
            f"Downstream over {N_DOWNSTREAM} of the 18 tasks (SNLI and COCO are not offline) for "
            "the backbone and DeCLUTR, 3 seeds; Probing not run (no probing data offline); the baselines are "
            "not run",
        ),
        "Table S1": ("not run", "BERT, ALBERT and RoBERTa checkpoints are not offline"),
        "Table S2": (
            "reproduced",
            "spans drawn by the archive's sampler from the mirror's WikiText-2 articles "
            "(results/declutr/<profile>/tableS2.csv)",
        ),
        "Table S3": (
            "partly",
            f"{N_DOWNSTREAM} of the 18 downstream tasks on DeCLUTR's protocol (SNLI and COCO are "
            "not offline); the backbone and DeCLUTR rows only",
        ),
        "Table S4": ("not run", "the 10 probing tasks' data are not offline"),
        "Table S5": ("not run", "Sentence Transformers' *-nli-mean-tokens models and the probing data are not offline"),
        "Table S6": (
            "partly",
            "dev average over the 11 tasks with a SentEval dev score (9 classification devacc, "
            "STS-B and SICK-R regressor dev Pearson; STS12-16 have no dev split), SNLI not offline",
        ),
        "Figure 1": ("not applicable", "a schematic without data"),
        "Figure 2": (
            "reproduced (extended rows)",
            f"A x P x tau grid and positive views; each point scored by {DEV_SCORE}",
        ),
        "Figure 3": (
            "partly (extended rows)",
            f"contrastive / MLM / both at 25, 50 and 100 % of the steps, one model size; {DEV_SCORE}",
        ),
        "Figure S1": (
            "reproduced (extended rows)",
            f"linear and ReLU projection heads of 128-512, memory banks of 128-512 x 4 temperatures; {DEV_SCORE}",
        ),
        "Text": ("not applicable", "hyperparameters from the text: used by papers/declutr/experiments.py"),
    }
    not_testable = {  # claim -> why it is not run
        "declutr-base-highest-average": "needs the probing tasks (not offline) and the baselines (not run)",
        "declutr-base-beats-best-supervised-average": "needs the probing tasks and InferSent (not offline)",
        "declutr-base-boosts-downstream": "RoBERTa-base is not offline (the small profile's row stands for "
        "DeCLUTR-small)",
        "declutr-base-maintains-probing": "the probing tasks are not offline",
        "declutr-small-maintains-probing": "the probing tasks are not offline",
        "use-better-downstream": "USE is not offline",
        "infersent-only-strong-existing-prober": "the probing tasks and the baselines are not offline",
        "sentence-transformers-probing-drop-roberta-base": "the probing tasks and Sentence Transformers' models are "
        "not offline",
        "sentence-transformers-probing-drop-at-least-6": "the probing tasks and Sentence Transformers' models are "
        "not offline",
        "nsp-sop-not-better-than-neither": "BERT, ALBERT and RoBERTa checkpoints are not offline",
        "mean-pooling-beats-cls": "BERT-base is not offline",
        "cls-fails-to-beat-bow": "ALBERT and fastText are not offline",
        "snli-control-gap-to-use-shrinks": "SNLI and USE are not offline",
        "snli-control-gap-to-infersent-grows": "SNLI and InferSent are not offline",
    }

    def grid(self, profile, extended=False):
        return experiments.grid(profile, extended=extended)

    def paper_grid(self):
        return experiments.paper_grid()

    def derived(self, build):
        """Table S2's spans, drawn with the headline run's settings (its grid spec's when it has no record yet)."""
        from papers.declutr.span_examples import span_examples  # the run store's machinery: not for the CLI's import
        from sentemb.runs.execute import NotRun

        if build.records.get("declutr"):
            headline = build.records["declutr"][0]
        else:
            spec = experiments.grid(build.profile.name)["declutr"][0]
            headline = {"run_id": spec.run_id, "profile": spec.profile, "spec": spec.as_dict()}
        try:
            return {"tableS2": span_examples(headline, run_missing=build.run_missing)}
        except NotRun:
            return {}

    def tables(self, build):
        records = build.records
        return {
            "table1": paper_tables.table1(records),
            "tableS3": paper_tables.tableS3(records),
            "tableS6": paper_tables.tableS6(records),
            "tableS2": paper_tables.tableS2(build.derived),
            "figures": paper_tables.figure_points(records),
        }

    def claim_cells(self, build):
        """DeCLUTR-small vs Transformer-small stand for our DeCLUTR run vs the backbone (Table 1); the figures'
        claims rest on their grid points (:func:`papers.declutr.tables.figure_cells`)."""
        table1 = [] if build.tables["table1"].empty else [build.tables["table1"]]
        return pd.concat([*table1, paper_tables.figure_cells(build.records)], ignore_index=True)

    full_profile_unrehearsed = (
        "the real OpenWebText: the commit its first read pins, whether that Parquet conversion is complete, and the "
        "token store of its ~8 M documents (the rehearsal's corpus is a few hundred generated documents)",
    )

    def summary(self, build):
        return summary.markdown_summary(build.tables) + full_profile_markdown(self)

    def figures(self, build):
        """Figures 2, 3 and S1 from the figures' table, each where its grid points have records (Figure 2 also with
        only the backbone's)."""
        points = build.tables["figures"]
        if points.empty:
            return []
        drawn = [
            (figures.figure2, (points["run"] != "declutr").any()),
            (figures.figure3, points["run"].isin(list(experiments.FIGURE3_RUNS)).any()),
            (figures.figureS1, points["run"].str.startswith(("proj_", "xbm_")).any()),
        ]
        profile, folder = build.profile.name, build.figures_dir
        return [path for figure, has_points in drawn if has_points for path in figure(points, profile, folder)]
