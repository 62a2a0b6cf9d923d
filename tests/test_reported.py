"""Self-checks of every paper's reported numbers (papers/<paper>/reported/) and of its claims.

The papers are kept as printed. Where a paper contradicts itself the cell carries an ``inconsistent:``
note, and this test knows every flagged cell: a new inconsistency (or a flag that disappears) fails it.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from sentemb.paper import reproduced_papers
from sentemb.report.claim_cells import load_claims, lookup
from sentemb.report.claims import evaluate_all
from sentemb.report.reported import (
    COLUMNS,
    INDEX_COLUMNS,
    KEY,
    TEXT_COLUMNS,
    load_all_reported,
    load_index,
    load_reported,
    reported_dir,
)

PAPERS = tuple(reproduced_papers())
RANGES = {
    "spearman": (-100, 100),
    "pearson": (-100, 100),
    "accuracy": (0, 100),
    "f1": (0, 100),
    "main_score": (0, 100),
    "map": (0, 100),
    "ndcg": (0, 100),
    "mrr": (0, 100),
    "v_measure": (0, 100),
    "learning_rate": (0, 1),
    "batch_size": (1, math.inf),
    "count": (0, math.inf),
    "seconds": (0, math.inf),
    "hours": (0, math.inf),
    "minutes": (0, math.inf),
    "dropout": (0, 1),
    "ratio": (-math.inf, math.inf),
    "coefficient": (-math.inf, math.inf),
    "temperature": (0, math.inf),
    "other": (-math.inf, math.inf),
}
INTEGER_METRICS = {"batch_size", "count"}

# Every cell the papers print inconsistently, as (paper, table, group, row, column); each carries an
# "inconsistent: ..." note in its CSV that says what is wrong.
KNOWN_INCONSISTENT: set[tuple[str, str, str, str, str]] = {
    # SBERT's average copied from Reimers & Gurevych (2019): the 7 tasks average 74.86, printed 74.89.
    ("simcse", "Table 5", "Supervised models", "SBERT-base", "Avg."),
    ("simcse", "Table B.2", "", "SBERT", "Avg."),
    ("simcse", "Table E.1", "Unsupervised models", "Avg. BERT embeddings", "Avg."),  # mean 84.95, printed 84.94
    # SimCSE's own BERT-whitening runs (Appendix C: one script gave Tables 5 and C.1 and reproduces B.2): B.2's rows
    # print 0.01 lower (60.89/71.30/68.23 vs 60.90/71.31/68.24; target STS14 66.27 vs 66.28), found by the
    # cross-table check (same_cells.csv joins the differently named copies)
    ("simcse", "Table 5", "Unsupervised models", "BERT-base-whitening", "STS14"),
    ("simcse", "Table 5", "Unsupervised models", "BERT-base-whitening", "STS16"),
    ("simcse", "Table 5", "Unsupervised models", "BERT-base-whitening", "STS-B"),
    ("simcse", "Table C.1", "", "BERT-whitening (NLI)", "STS14"),
    ("simcse", "Table C.1", "", "BERT-whitening (NLI)", "STS16"),
    ("simcse", "Table C.1", "", "BERT-whitening (NLI)", "STS-B"),
    ("simcse", "Table B.2", "", "BERT-whitening (NLI, all)", "STS14"),
    ("simcse", "Table B.2", "", "BERT-whitening (NLI, all)", "STS16"),
    ("simcse", "Table B.2", "", "BERT-whitening (NLI, all)", "STS-B"),
    ("simcse", "Table B.2", "", "BERT-whitening (NLI, wmean)", "STS-B"),  # STS-B does not depend on the aggregation
    ("simcse", "Table C.1", "", "BERT-whitening (target)", "STS14"),
    ("simcse", "Table B.2", "", "BERT-whitening (target, all)", "STS14"),
    ("simcse_pp", "Table 3", "", "SBERT-base", "Avg."),  # same SBERT row as SimCSE's
    ("simcse_pp", "Table 3", "", "SimCSE++-BERT-base", "Avg."),  # abstract says +1.8, introduction +1.9
    # BERT-base first-last avg. printed differently in Table 3 and Table 4 (39.70/59.38/53.87 vs 39.69/59.37/53.88)
    ("simcse_pp", "Table 3", "", "BERT-base (first-last avg.)", "STS12"),
    ("simcse_pp", "Table 3", "", "BERT-base (first-last avg.)", "STS13"),
    ("simcse_pp", "Table 3", "", "BERT-base (first-last avg.)", "STS-B"),
    ("simcse_pp", "Table 4", "Block 1: DCL vs post-processing", "BERT-base (first-last avg.)", "STS12"),
    ("simcse_pp", "Table 4", "Block 1: DCL vs post-processing", "BERT-base (first-last avg.)", "STS13"),
    ("simcse_pp", "Table 4", "Block 1: DCL vs post-processing", "BERT-base (first-last avg.)", "STS-B"),
    # BERT-large's parameter count printed 350M before and 340M after fine-tuning
    ("declutr", "Table S5", "Before fine-tuning with Sentence Transformer objective", "BERT-large", "Parameters"),
    ("declutr", "Table S5", "After fine-tuning with Sentence Transformer objective", "BERT-large", "Parameters"),
    ("tncse", "Table 1", "BERT-base", "TNCSE D", "STS15"),  # 74.92: ~10 points below every other model
    ("tncse", "Table 1", "BERT-base", "TNCSE D", "Avg."),  # mean of the printed tasks 78.34, printed 79.77
    ("tncse", "Table 1", "BERT-base", "PromptBERT", "Avg."),  # mean 78.52, printed 78.54
    # SummEval is the only summarisation task: Table 4 prints 27.6 for SimCSE, Table 6's Summ. column 27.7
    ("noncontrastive", "Table 4", "Summ.", "SummEval", "SimCSE"),
    ("noncontrastive", "Table 6", "RoBERTa", "SimCSE", "Summ."),
}


def _raw(path):
    return pd.read_csv(path, dtype=str, keep_default_na=False)


@pytest.mark.parametrize("paper", PAPERS)
def test_index_lists_every_table_with_its_file(paper):
    index = load_index(paper)
    assert not index.duplicated("item").any(), "an item is listed twice"
    assert set(index["kind"]) <= {"table", "figure", "text"} and set(index["stored"]) <= {"numbers", "text", "no"}
    assert (index["caption"].str.len() > 0).all()
    listed = set()
    for _, item in index.iterrows():
        if item["stored"] == "no":
            assert item["file"] == "" and item["note"], f"{item['item']}: say why it is not stored"
            continue
        assert (reported_dir(paper) / item["file"]).is_file(), f"{item['item']}: {item['file']} is missing"
        assert item["file"].endswith(".text.csv") == (item["stored"] == "text")
        listed.add(item["file"])
    not_tables = {"index.csv", "same_cells.csv"}  # same_cells.csv: which cells of different tables are copies
    on_disk = {p.name for p in reported_dir(paper).glob("*.csv")} - not_tables
    assert on_disk == listed, f"files not in the index: {on_disk - listed}; indexed but absent: {listed - on_disk}"
    assert (index["kind"] == "table").any()


@pytest.mark.parametrize("paper", PAPERS)
def test_numeric_tables_schema_types_ranges_and_unique_keys(paper):
    index = load_index(paper)
    for _, item in index[index["stored"] == "numbers"].iterrows():
        raw = _raw(reported_dir(paper) / item["file"])
        assert list(raw.columns) == COLUMNS, item["file"]
        assert (raw["paper"] == paper).all() and (raw["table"] == item["item"]).all(), item["file"]
        assert (raw["row"] != "").all() and (raw["column"] != "").all(), item["file"]
        dupes = raw[raw.duplicated(KEY, keep=False)]
        assert dupes.empty, f"{item['file']}: duplicate keys\n{dupes[KEY]}"
        for _, cell in raw.iterrows():
            where = f"{item['file']}: {cell['row']} / {cell['column']}"
            assert cell["metric"] in RANGES, f"{where}: metric {cell['metric']!r} not in the vocabulary"
            if cell["value"] == "":
                assert cell["note"].startswith(("unknown:", "not reported:")), f"{where}: empty value needs a note"
                continue
            value = float(cell["value"])
            low, high = RANGES[cell["metric"]]
            assert low <= value <= high, f"{where}: {value} outside {cell['metric']} range"
            if cell["metric"] in INTEGER_METRICS:
                assert value == int(value), f"{where}: {value} is not an integer"


@pytest.mark.parametrize("paper", PAPERS)
def test_text_tables_schema(paper):
    index = load_index(paper)
    for _, item in index[index["stored"] == "text"].iterrows():
        table = load_reported(paper, item["item"])
        assert list(table.columns) == TEXT_COLUMNS
        assert (table["text"] != "").sum() > 0


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def _average_mismatches(paper: str) -> set[tuple]:
    """Cells of an average column that differ from the mean of the columns it averages (beyond rounding)."""
    index = load_index(paper)
    found = set()
    for _, item in index[(index["stored"] == "numbers") & (index["avg_columns"] != "")].iterrows():
        raw = _raw(reported_dir(paper) / item["file"])
        avg_labels = [c for c in raw["column"].unique() if c.lower().startswith(("avg", "average"))]
        assert avg_labels, f"{item['file']}: index says it has an average column, none found"
        for (group, row), cells in raw.groupby(["group", "row"], sort=False):
            for avg_label in avg_labels:
                avg = cells[cells["column"] == avg_label]
                if avg.empty or avg["value"].iloc[0] == "":
                    continue
                if item["avg_columns"] == "all":  # every other column of the same metric
                    parts = cells[~cells["column"].isin(avg_labels) & (cells["metric"] == avg["metric"].iloc[0])]
                else:
                    parts = cells[cells["column"].isin(item["avg_columns"].split(";"))]
                if parts.empty or (parts["value"] == "").any():
                    continue
                values = parts["value"].astype(float)
                printed = float(avg["value"].iloc[0])
                tolerance = (
                    0.5 * 10 ** -_decimals(avg["value"].iloc[0])
                    + 0.5 * 10 ** -min(_decimals(v) for v in parts["value"])
                    + 1e-9
                )
                if abs(values.mean() - printed) > tolerance:
                    found.add((paper, item["item"], group, row, avg_label))
    return found


def _flagged(paper: str) -> set[tuple]:
    table = load_all_reported(paper)
    flagged = table[table["note"].str.startswith("inconsistent:")]
    return {(paper, r["table"], r["group"], r["row"], r["column"]) for _, r in flagged.iterrows()}


@pytest.mark.parametrize("paper", PAPERS)
def test_averages_match_their_rows_or_are_flagged(paper):
    mismatches = _average_mismatches(paper)
    flagged = _flagged(paper)
    assert mismatches <= flagged, (
        f"averages that do not match and carry no 'inconsistent:' note: {mismatches - flagged}"
    )


@pytest.mark.parametrize("paper", PAPERS)
def test_every_flag_is_known(paper):
    flagged = _flagged(paper)
    known = {k for k in KNOWN_INCONSISTENT if k[0] == paper}
    assert flagged == known, f"new flags: {flagged - known}; flags that disappeared: {known - flagged}"


@pytest.mark.parametrize("paper", PAPERS)
def test_every_claim_holds_on_the_reported_numbers(paper):
    claims = load_claims(paper)
    assert 5 <= len(claims) <= 20  # a sanity bound: neither an empty file nor a dump of every sentence
    assert len({c["id"] for c in claims}) == len(claims)
    verdicts = evaluate_all(paper, load_all_reported(paper))
    figure_only = verdicts["claim"].isin([c["id"] for c in claims if c.get("figure_only")])
    failing = verdicts[
        ~figure_only & ((verdicts["status"] != "holds") | ~verdicts["size_status"].isin(["holds", "no size"]))
    ]
    assert failing.empty, failing.to_string()
    # a figure's values are not printed: its claims have no reported cells (a reported value would be a typo'd table)
    assert (verdicts.loc[figure_only, "status"] == "not run").all(), verdicts[figure_only].to_string()


def test_claim_verdicts_on_a_reproduced_style_table():
    table = pd.DataFrame(
        [
            {
                "table": "Table 3",
                "group": "",
                "row": "p=0.1",
                "column": "STS-B",
                "split": "dev",
                "aggregation": "",
                "metric": "spearman",
                "value": 80.0,
            },
            {
                "table": "Table 3",
                "group": "",
                "row": "fixed 0.1",
                "column": "STS-B",
                "split": "dev",
                "aggregation": "",
                "metric": "spearman",
                "value": 79.0,
            },
        ]
    )
    from sentemb.report.claims import evaluate

    claim = {
        "id": "x",
        "text": "t",
        "kind": "greater",
        "margin": 10,
        "margin_quote": "by 10 points",
        "left": {"table": "Table 3", "row": "p=0.1", "column": "STS-B"},
        "right": {"table": "Table 3", "row": "fixed 0.1", "column": "STS-B"},
    }
    verdict = evaluate(claim, table)
    assert (verdict.status, verdict.size_status) == ("holds", "fails")  # the direction holds; not by 10 points
    assert verdict.size_target == 10 and verdict.size_effect == pytest.approx(1.0 - 10)
    assert evaluate({**claim, "margin": 0.5}, table).size_status == "holds"  # +1 reaches a stated 0.5
    assert evaluate({**claim, "margin": 1.5}, table).size_status == "fails"  # not half of it: the margin itself
    no_margin = {k: v for k, v in claim.items() if k not in ("margin", "margin_quote")}
    plain = evaluate(no_margin, table)
    assert (plain.status, plain.size_status, plain.size_target) == ("holds", "no size", None)  # no stated size
    assert plain.size_detail.startswith("the paper states no margin")
    assert evaluate({**claim, "right": {"table": "Table 9", "row": "r", "column": "c"}}, table).status == "not run"
    assert evaluate({**claim, "kind": "within", "tolerance": 1.0}, table).status == "holds"
    assert lookup(table, {"table": "Table 3", "row": "p=0.1", "column": "STS-B"}) == 80.0


def test_coverage_must_list_every_item_of_the_index():
    from sentemb.report.reported import coverage_table

    with pytest.raises(ValueError, match="disagree on .*Table 1"):
        coverage_table("simcse_pp", {"Table 9": ("reproduced", "nowhere")})


@pytest.mark.parametrize("paper", PAPERS)
def test_numbers_printed_in_several_tables_agree_or_are_flagged(paper):
    from sentemb.report.reported_consistency import disagreements

    copies = disagreements(paper)  # also fails on a same_cells.csv line that names no printed cell
    unflagged = copies[~copies["note"].str.startswith("inconsistent:")]
    assert unflagged.empty, (
        "copies of one number that disagree and carry no 'inconsistent:' note "
        f"(or name them as different models in same_cells.csv):\n{unflagged.to_string()}"
    )


def test_printed_copies_agree_at_the_coarser_precision():
    from sentemb.report.reported_consistency import agree

    assert agree(["86.2", "86.20"]) and agree(["86.2", "86.17"]) and agree(["86.2", "86.15"])
    assert not agree(["39.70", "39.69"]) and not agree(["86.2", "86.14"]) and not agree(["82.5", "82.6"])
    assert agree(["3e-05", "0.00003"]) and agree(["64", "64.0"]) and not agree(["64", "65"])


def test_same_cells_joins_differently_named_copies_and_separates_different_runs(tmp_path, monkeypatch):
    from sentemb.errors import DataError
    from sentemb.report import reported, reported_consistency

    def write(name, lines, columns=COLUMNS):
        pd.DataFrame(lines, columns=columns).to_csv(tmp_path / name, index=False)

    cell = dict(paper="p", group="", split="dev", aggregation="", metric="spearman", backbone="bert", note="")
    write(
        "index.csv",
        [
            ["p", "Table 1", "table", "c", "numbers", "t1.csv", "", ""],
            ["p", "Table 2", "table", "c", "numbers", "t2.csv", "", ""],
        ],
        INDEX_COLUMNS,
    )
    write(
        "t1.csv",
        [
            {**cell, "table": "Table 1", "row": "None (SimCSE)", "column": "STS-B", "value": "82.5"},
            {**cell, "table": "Table 1", "row": "avg.", "column": "STS-B", "value": "70.0"},
        ],
    )
    write(
        "t2.csv",
        [
            {**cell, "table": "Table 2", "row": "SimCSE", "column": "one encoder", "value": "82.6"},
            {**cell, "table": "Table 2", "row": "avg.", "column": "STS-B", "value": "71.0"},
        ],
    )
    monkeypatch.setattr(reported, "reported_dir", lambda paper: tmp_path)
    monkeypatch.setattr(reported_consistency, "reported_dir", lambda paper: tmp_path)
    found = reported_consistency.disagreements("p")  # without same_cells.csv: only the same-named rows meet
    assert set(found["row"]) == {"avg."} and len(found) == 2
    write(
        "same_cells.csv",
        [
            ["Table 1", "", "None (SimCSE)", "STS-B", "unsup. SimCSE", "", "the same run"],
            ["Table 2", "", "SimCSE", "one encoder", "unsup. SimCSE", "STS-B", "the same run"],
            ["Table 2", "", "avg.", "*", "avg. (other layers)", "", "a different run"],
        ],
        reported_consistency.ALIAS_COLUMNS,
    )
    found = reported_consistency.disagreements("p")
    assert list(found["printed"]) == ["82.5", "82.6"] and set(found["model"]) == {"unsup. SimCSE"}
    write(
        "same_cells.csv",
        [["Table 2", "", "SimCSE", "two encoders", "unsup. SimCSE", "", "stale"]],
        reported_consistency.ALIAS_COLUMNS,
    )
    with pytest.raises(DataError, match="line 2 names no printed cell"):
        reported_consistency.disagreements("p")
