"""The overview: every paper's coverage and claims, and the papers' methods compared on one evaluator.

It reproduces no publication (no claims.yaml, no reported numbers): its grid is the papers' own headline rows
(:mod:`papers.overview.experiments`), its derived records the evaluations the comparison needs
(:mod:`papers.overview.analyses`), its tables those of :mod:`papers.overview.tables`, its figures those of
:mod:`papers.overview.figures`, its summary (the top-level README's table and the overview README's comparison) that
of :mod:`papers.overview.summary`.
"""

from __future__ import annotations

import pandas as pd

from papers.overview import NAME, experiments, figures, pretraining_curve
from papers.overview import tables as paper_tables
from papers.overview.summary import markdown_summary
from sentemb import settings
from sentemb.paper import Paper


class Overview(Paper):
    name = NAME
    title = "Overview: the papers' methods side by side"
    citation = "this archive"
    official_code = "none"
    not_run_reason = "no records: outside its paper's budget (./run_all.sh --paper overview --extended trains it)"
    reproduces = False

    def grid(self, profile, extended=False):
        return experiments.grid(profile, extended=extended)

    def derived(self, build):
        """The comparison's derived records, each computed when missing and the build may run (``run_missing``): the
        7 STS tasks of the runs that scored STS-B dev only (Barlow Twins, VICReg) always, transfer and MTEB only with
        ``extended`` (on every profile; without it they are read from the committed ones)."""
        from papers.overview import analyses

        return analyses.comparison_records(build.records, build.run_missing, extended=build.extended)

    def tables(self, build):
        """The comparison, compute, coverage and claims tables (some empty, e.g. transfer and MTEB before their
        derived records exist, or the claims before the papers' tables)."""
        records, derived_records = build.records, build.derived
        profile, sts, kinds = build.profile.name, derived_records["sts"], tuple(paper_tables.DERIVED_TASKS)
        stored = paper_tables.StoredRuns()  # each profile's run store, read once for the backbone tables
        pairs = [paper_tables.pairwise(paper_tables.sts_seeds(sts, a), "sts", a) for a in paper_tables.PROTOCOLS]
        pairs += [
            paper_tables.pairwise(paper_tables.derived_seeds(kind, derived_records[kind]), kind) for kind in kinds
        ]
        tables = {
            "comparison_sts": paper_tables.sts_comparison(sts),
            "comparison_pairwise": pd.concat(pairs, ignore_index=True),
            **{f"comparison_{k}": paper_tables.derived_comparison(k, derived_records[k], records) for k in kinds},
            "budget": pd.DataFrame(experiments.budget(experiments.grid(profile))),
            "compute_per_method": paper_tables.compute_per_method(records),
            "compute_per_paper": paper_tables.compute_per_paper(profile),
            "coverage": paper_tables.coverage_all(),
            "claims_all": paper_tables.claims_table(profile),
            "claims_by_backbone": paper_tables.claims_by_backbone(profile),
            "methods_by_backbone": paper_tables.methods_by_backbone(profile, stored),
            "pretraining_curve": pretraining_curve.pretraining_curve(profile, stored=stored),
            "pretraining_curve_reference": pretraining_curve.reference(profile, stored),
        }
        return tables

    def write_tables(self, build):
        """:meth:`tables`, each written to ``build.results_dir/<table>.csv`` unless it has no rows."""
        from sentemb.report.views import write_csv_tables

        build.tables = self.tables(build)
        write_csv_tables(build.results_dir, {k: v for k, v in build.tables.items() if not v.empty})
        return build.tables

    def claim_cells(self, build):
        """No cells: the overview evaluates no claims of its own (it gathers the papers')."""
        return pd.DataFrame()

    def summary(self, build):
        return markdown_summary(build.tables)

    def figures(self, build):
        """The STS comparison (each seed, from the derived STS records); where some pairs were tested under SimCSE's
        protocol, the pairwise heatmap of ``comparison_pairwise``; on a profile compared with another backbone's, the
        methods against the backbone's pretraining (``pretraining_curve``)."""
        profile, folder, pairs = build.profile.name, build.figures_dir, build.tables["comparison_pairwise"]
        paths = figures.figure_comparison(build.derived["sts"], profile, folder)
        tested = pairs[(pairs["evaluation"] == "sts") & (pairs["aggregation"] == "all")] if not pairs.empty else pairs
        paths += figures.figure_pairwise(tested, profile, folder) if not tested.empty else []
        curve = build.tables["pretraining_curve"]
        if not curve.empty:
            reference = build.tables["pretraining_curve_reference"]
            paths += figures.figure_pretraining_curve(curve, reference, profile, folder)
        return paths

    @staticmethod
    def wide(table, aggregation=("all", ""), index=("row",), column="column"):
        """:meth:`Paper.wide` of a comparison table, which has no reported number."""
        return Paper.wide(table.assign(reported=float("nan")), aggregation, index, column)

    def readme_blocks(self, summary):
        """The archive's table goes to the top-level README, the methods compared to the overview's own."""
        archive, comparison = summary.split("\n\n", 1)
        return {
            settings.REPO_ROOT / "README.md": archive,
            settings.REPO_ROOT / "papers" / "overview" / "README.md": comparison,
        }
