"""A table cell keeps its names from the run record to the CSV, the claims and the README (``sentemb.report.cell``)."""

from __future__ import annotations

import ast
import csv

import pandas as pd
import pytest

from sentemb import settings
from sentemb.report.cell import CELL_KEYS, Cell
from sentemb.report.claim_cells import lookup, lookup_seeds
from sentemb.report.markdown import compared
from sentemb.report.reproduced import aggregate_seeds, join


def _trace(seed: int) -> dict:
    return {
        "profile": "small",
        "backbone_used": "b",
        "run_id": f"run{seed}",
        "seed": seed,
        "commit": "c",
        "data_fingerprint": "d",
        "wall_seconds": 1.0,
        "deterministic": False,
    }


def test_one_cell_from_its_seeds_to_the_claims_and_the_readme_under_the_same_names():
    cell = Cell("p", "Table 3", "p=0.1 (ours)", "unsup", reported_row="p=0.1", column="STS-B", split="dev")
    per_seed = pd.DataFrame([cell.seed(v, _trace(s), best_step=10 * s) for s, v in ((1, 80.0), (2, 82.0))])
    reported = pd.DataFrame(
        [{"table": "Table 3", "group": "", "row": "p=0.1", "column": "STS-B", "split": "dev", "aggregation": ""}]
    ).assign(value=82.5, backbone="BERT-base")
    table = join(aggregate_seeds(per_seed, extra=("best_step",)), reported)
    assert list(table.columns[: len(CELL_KEYS)]) == CELL_KEYS
    row = table.iloc[0]
    assert (row["row"], row["reported_row"], row["reproduced"], row["reported"]) == (
        "p=0.1 (ours)",
        "p=0.1",
        81.0,
        82.5,
    )
    assert row["delta"] == pytest.approx(-1.5) and row["values"] == "80.0000;82.0000" and row["best_step"] == "10;20"
    ref = {"table": "Table 3", "row": "p=0.1", "column": "STS-B"}  # claims.yaml names the paper's row
    assert lookup(table, ref) == 81.0 and lookup_seeds(table, ref) == [80.0, 82.0]
    assert list(compared(row)) == ["82.50", "81.00 ± 1.41 (2)", "-1.50"]


def test_every_reproduced_csv_opens_with_the_cells_keys():
    """The result CSVs that hold cells (a ``reproduced`` column) name their keys as :class:`Cell` does, in its order
    (a table may add columns of its own between them, e.g. the non-contrastive Table 4's ``model``)."""
    found = 0
    for path in sorted((settings.REPO_ROOT / "results").glob("*/*/*.csv")):
        with path.open(encoding="utf-8") as handle:
            header = next(csv.reader(handle), [])
        if "reproduced" in header and "std" in header:  # a cell aggregated over seeds
            found += 1
            assert [c for c in header if c in (*CELL_KEYS, "reproduced")] == [*CELL_KEYS, "reproduced"], path
    assert found > 20


def test_no_module_renames_a_cells_columns():
    """Between a record and the README a cell's column is never renamed: no ``rename(columns=...)`` in the papers or
    the core's report package maps ``value``/``reproduced``/``row``/``group`` (the paper's table is read into the
    cells' names once, in ``reproduced.join``)."""
    offenders = []
    files = [
        *(settings.REPO_ROOT / "papers").rglob("*.py"),
        *(settings.REPO_ROOT / "shared/sentemb/report").glob("*.py"),
    ]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "rename":
                for keyword in node.keywords:
                    if keyword.arg == "columns" and isinstance(keyword.value, ast.Dict):
                        keys = {k.value for k in keyword.value.keys if isinstance(k, ast.Constant)}
                        if keys & {"value", "reproduced", "row", "group"}:
                            offenders.append(f"{path.relative_to(settings.REPO_ROOT)}:{node.lineno}")
    assert [o.split(":")[0] for o in offenders] == ["shared/sentemb/report/reproduced.py"], offenders  # join only


def test_a_builds_cells_are_its_named_tables_that_have_rows_and_no_rows_under_the_keys_when_none_has():
    from sentemb.paper import Build

    build = Build("simcse", "smoke")
    one = pd.DataFrame([Cell("p", "T", "a", "x").seed(1.0, _trace(1))])
    two = pd.DataFrame([Cell("p", "T", "b", "y").seed(2.0, _trace(2))])
    build.tables = {"one": one, "empty": pd.DataFrame(), "two": two}
    assert build.cells("two", "missing", "empty", "one")["row"].tolist() == ["b", "a"]
    none = build.cells("empty", "missing")
    assert none.empty and list(none.columns) == [*CELL_KEYS, "reproduced", "values"]
