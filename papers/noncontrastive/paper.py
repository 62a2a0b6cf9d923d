"""Non-contrastive (Farina & Pappadopulo, 2024): the paper's metadata and hooks.

Its tables are in ``tables.py``, its figures in ``figures.py``, its README block in ``summary.py``, its two-stage
grid in ``experiments.py``; its MTEB and geometry analyses are core derived records
(:mod:`sentemb.runs.mteb_geometry_records`), shared with TNCSE and the overview.
The grid depends on the records there are (the scans' trials, then the headline rows from their best trials), so
:meth:`NonContrastive.collect` runs it to its fixed point; the backbone row ("avg.") is the SimCSE grid's run
(through the registry). The derived records cost about 27 min per model on 2 cores: a budgeted profile (small)
computes the missing ones only with ``extended`` and reads the committed ones either way.
"""

from __future__ import annotations

import pandas as pd

from papers.noncontrastive import NAME, figures
from papers.noncontrastive import experiments as ex
from papers.noncontrastive import tables as paper_tables
from papers.noncontrastive.summary import markdown_summary
from sentemb.evaluate.mteb_adapter import TABLE4_TASKS
from sentemb.paper import Paper, get_paper
from sentemb.report.full_profile import full_profile_markdown
from sentemb.runs import store

OFFLINE = {category: len(tasks) for category, tasks in paper_tables.OFFLINE_TASKS.items() if tasks}
N_OFFLINE = sum(OFFLINE.values())
OFFLINE_COUNTS = ", ".join(f"{c} ({n} of {sum(v == c for v in TABLE4_TASKS.values())})" for c, n in OFFLINE.items())
NO_OFFLINE_TASK = ", ".join(c for c, tasks in paper_tables.OFFLINE_TASKS.items() if not tasks)
# Claims are stated for BERT and RoBERTa; the small profile has one substitute backbone for both (all-MiniLM-L6-v2),
# so every claim is tested on its rows, whichever block it names (directions, not magnitudes).
CLAIM_GROUPS = ("BERT", "RoBERTa")


class NonContrastive(Paper):
    name = NAME
    title = "Non-contrastive (Farina & Pappadopulo, 2024)"
    citation = (
        "Marco Farina, Duccio Pappadopulo. Non-contrastive sentence representations via self-supervision. "
        "Findings of NAACL 2024"
    )
    official_code = "none (no public code found)"
    not_run_reason = (
        "not run: outside the small profile's budget (./run_all.sh --paper noncontrastive --extended "
        "scans every Table 1 cell)"
    )
    coverage_items = {
        "Table 1": (
            "partly",
            "results/noncontrastive/<profile>/table1.csv (+ table1_trials.csv): all ten cells, 4 "
            "trials per cell for the paper's 50 (column n_trials); from scratch the small profile scans the "
            "dropout 0.1 cell, and --extended the other nine (shuffle 0.3 among them; all ten are recorded); "
            "MiniLM for BERT and RoBERTa",
        ),
        "Table 2": (
            "not identifiable",
            "caption and content are not in the extracted text (only the numbering implies it)",
        ),
        "Table 3": (
            "not applicable",
            "the scan domains are lost in extraction; ours are in papers/noncontrastive/"
            "experiments.py (BT_LAMBDAS, BT_LRS, VICREG_DOMAIN)",
        ),
        "Table 4": (
            "partly",
            f"results/noncontrastive/<profile>/table4.csv: the {N_OFFLINE} MTEB tasks that run "
            f"offline ({OFFLINE_COUNTS}); the other {len(TABLE4_TASKS) - N_OFFLINE} are listed as not run, "
            "with why",
        ),
        "Table 5": (
            "not identifiable",
            "caption and content are not in the extracted text (only the numbering implies it)",
        ),
        "Table 6": (
            "partly",
            f"results/noncontrastive/<profile>/table6.csv: {OFFLINE_COUNTS}, Avg. ({N_OFFLINE} of "
            f"{len(TABLE4_TASKS)}), alignment, uniformity (Δ only where both sides average the same tasks); "
            f"{NO_OFFLINE_TASK}: no task offline; BT (WikiAuto) is not run (WikiAuto is not offline)",
        ),
        "Figure 1": ("reproduced (small scan)", "figures/noncontrastive/<profile>/figure1_bt_lambda.*"),
        "Figure 2": ("not identifiable", "not referenced in the extracted text (only the numbering implies it)"),
        "Figure 3": ("not identifiable", "not referenced in the extracted text (only the numbering implies it)"),
        "Figure 4": ("reproduced", "figures/noncontrastive/<profile>/figure4_cosine_by_rating.*"),
        "Text": ("not applicable", "hyperparameters of the running text: used by papers/noncontrastive/experiments.py"),
    }

    def grid(self, profile, extended=False):
        return ex.grid(profile, extended=extended)

    def collect(self, build):
        """The grid's records (name -> one per seed) and the backbone row's. With ``run_missing`` the grid is run to
        its fixed point first (scan trials, SMAC's next proposals, then the headline rows); without, a grid row
        without a record is an empty list."""
        from sentemb.runs.execute import ensure
        from sentemb.runs.fixed_point import run_to_fixed_point

        profile, run_missing, extended, progress = build.profile.name, build.run_missing, build.extended, build.progress
        if run_missing:

            def ask():
                return ex.grid(profile, extended, records=store.all_records(profile, on_broken="recompute"))

            run_to_fixed_point(ask, lambda name, spec: ensure(spec, run_missing=True, progress=progress))
        stored = store.all_records(profile, on_broken="recompute" if run_missing else "raise")
        by_id = {r["run_id"]: r for r in stored}
        records = {
            name: [by_id[s.run_id] for s in group if s.run_id in by_id]
            for name, group in ex.grid(profile, extended=True, records=stored).items()
        }
        backbone = get_paper("simcse").grid(profile, extended=True)["backbone_avg"][0]
        records[paper_tables.BACKBONE_ROW] = [ensure(backbone, run_missing=run_missing, progress=progress)]
        return records

    def derived(self, build):
        """The MTEB + STS-B test geometry record of every seed of the headline rows and the backbone that has one;
        missing ones are computed with ``run_missing`` where the profile runs every row (small: ``extended``)."""
        from sentemb.runs import mteb_geometry_records
        from sentemb.runs.derived import derived_of_each

        records = build.records
        compute = build.run_missing and build.profile.runs_all_rows(build.extended)
        return {
            name: derived_of_each(records[name], mteb_geometry_records.mteb_and_geometry, compute)
            for name in paper_tables.headline_names(records)
        }

    def tables(self, build):
        records, derived_records = build.records, build.derived
        trials = paper_tables.table1_trials(records)
        return {
            "table1": paper_tables.table1(trials),
            "table1_trials": trials,
            "table4": paper_tables.table4(records, derived_records),
            "table4_not_run": paper_tables.not_run_tasks(derived_records),
            "table6": paper_tables.table6(records, derived_records),
            "figure4_buckets": paper_tables.bucket_separation(derived_records),
        }

    def claim_cells(self, build):
        """Tables 1 and 6's reproduced cells, the MiniLM rows standing for the BERT and the RoBERTa blocks alike."""
        reproduced = build.cells("table1", "table6")
        copies = []
        for group in CLAIM_GROUPS:
            t6 = reproduced[reproduced["table"] == "Table 6"].copy()
            t6 = t6[t6["reported_group"] != group]
            t6["reported_group"] = group
            copies.append(t6)
            t1 = reproduced[reproduced["table"] == "Table 1"].copy()
            t1["reported_group"] = t1["reported_group"].str.replace(" / BERT", f" / {group}")
            copies.append(t1[t1["reported_group"].str.endswith(group)])
        table = pd.concat([reproduced] + copies, ignore_index=True)
        return table.drop_duplicates(subset=["table", "reported_group", "reported_row", "column"], keep="first")

    def untestable(self):
        """The claims the offline data cannot test (:func:`tables.not_testable`: it depends on the mirror's tasks)."""
        return paper_tables.not_testable()

    full_profile_unrehearsed = (
        "MTEB's 56 tasks (the stand-in hub serves none of their datasets, and the rehearsal keeps the derived MTEB "
        "records outside its budget)",
    )

    def summary(self, build):
        return markdown_summary(build.tables) + full_profile_markdown(self)

    def figures(self, build):
        """Figure 1 (from the scan's trials, when there are some), then Figure 4."""
        folder, name, trials = build.figures_dir, build.profile.name, build.tables["table1_trials"]
        figure1 = [] if trials.empty else figures.figure1(trials, name, folder)
        return figure1 + figures.figure4(build.derived, name, folder)

    def not_run(self, build):
        """The Table 1 cells without trials, with why (the headline runs without derived records:
        :func:`tables.derived_not_run`)."""
        records, profile = build.records, build.profile
        scanned = {ex.cell_label(*c) for c in ex.cells(profile.name, extended=False)}
        reason = (
            self.not_run_reason if profile.budgeted else f"not run: the {profile.name} profile scans {sorted(scanned)}"
        )
        with_trials = {
            ex.cell_label(*parts[1:])
            for name, runs in records.items()
            if runs and (parts := paper_tables.trial_name_parts(name)) is not None
        }
        rows = [
            {"cell": ex.cell_label(*c), "status": reason}
            for c in ex.TABLE1_CELLS
            if ex.cell_label(*c) not in scanned | with_trials
        ]
        return pd.DataFrame(rows, columns=["cell", "status"])
