"""Every committed result table (``results/<paper>/<profile>/*.csv``) has its columns documented in
``results/schema.yaml``, and its cells are of the documented types.

A column is looked up first under the schema's ``files`` (the first glob, matched with :func:`fnmatch.fnmatchcase`
against the path relative to ``results/``, that lists it), else under ``columns``. The schema itself must be well
formed and have no stale entry. ``problems`` and the other checkers return lists of messages, so the tests at the end
run them on synthetic tables and schemas in ``tmp_path`` to show that each check can fail.
"""

from __future__ import annotations

import csv
import fnmatch
import shutil
from pathlib import Path

import pytest
import yaml

from sentemb import settings

RESULTS = settings.REPO_ROOT / "results"
SCHEMA_PATH = RESULTS / "schema.yaml"
TYPES = ("str", "int", "float", "bool", "list")
ENTRY_KEYS = {"type", "description", "required"}
BOOLS = {"True", "False", "true", "false", "1", "0"}
MAX_CELLS_SHOWN = 5  # bad cells listed per column; the rest are counted


def result_csvs(root: Path = RESULTS) -> list[Path]:
    """Every CSV under ``root`` except ``root/runs`` (run records, JSON)."""
    return sorted(p for p in root.rglob("*.csv") if p.relative_to(root).parts[0] != "runs")


def load_schema(path: Path = SCHEMA_PATH) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def parses(value: str, type_: str) -> bool:
    """Whether a non-empty cell is a value of ``type_``."""
    if type_ == "int":
        try:
            return int(float(value)) == float(value)
        except (ValueError, OverflowError):  # "nan", "inf", text
            return False
    if type_ == "float":
        try:
            float(value)
        except ValueError:
            return False
        return True
    if type_ == "bool":
        return value in BOOLS
    return type_ in ("str", "list")


def read_table(path: Path) -> tuple[list[str], list[list[str]]]:
    """(header, rows) as strings: an empty cell stays empty, nothing is read as NaN."""
    with path.open(newline="", encoding="utf-8") as handle:
        lines = list(csv.reader(handle))
    return (lines[0], lines[1:]) if lines else ([], [])


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def matching_globs(relative: str, column: str, schema: dict) -> list[str]:
    """The globs of ``files`` that match ``relative`` and describe ``column``, in the schema's order."""
    return [
        glob
        for glob, columns in (schema.get("files") or {}).items()
        if fnmatch.fnmatchcase(relative, glob) and column in (columns or {})
    ]


def entry_for(column: str, globs: list[str], schema: dict) -> tuple[str, dict] | None:
    """(where, entry) of ``column`` in a file whose ``files`` globs describing it are ``globs``
    (:func:`matching_globs`):
    the first glob, else ``columns``; None if undocumented."""
    if globs:
        return f"files[{globs[0]!r}]", schema["files"][globs[0]][column]
    if column in (schema.get("columns") or {}):
        return "columns", schema["columns"][column]
    return None


def problems(csv_path: Path, schema: dict, root: Path = RESULTS) -> list[str]:
    """Everything in ``csv_path`` that disagrees with ``schema``: undocumented columns, cells that do not parse as
    their column's type, empty cells of required columns, and malformed rows."""
    relative = _relative(csv_path, root)
    header, rows = read_table(csv_path)
    if not header:
        return [f"{relative}: no header"]
    found = []
    duplicates = sorted({c for c in header if header.count(c) > 1})
    if duplicates:
        found.append(f"{relative}: duplicate columns {duplicates}")
    for number, row in enumerate(rows, start=2):
        if len(row) != len(header):
            found.append(f"{relative}, line {number}: {len(row)} cells for {len(header)} columns")
    for index, column in enumerate(header):
        globs = matching_globs(relative, column, schema)
        located = entry_for(column, globs, schema)
        if located is None:
            found.append(
                f"{relative}: column {column!r} is not documented: document it in results/schema.yaml "
                f"(under `columns`, or under a glob of `files` that matches {relative!r})"
            )
            continue
        where, entry = located
        if len(globs) > 1:
            found.append(f"{relative}: column {column!r} is described by several globs of `files` {globs}; keep one")
        cells = [(number, row[index]) for number, row in enumerate(rows, start=2) if index < len(row)]
        type_ = entry.get("type") if isinstance(entry, dict) else None
        if type_ not in TYPES:
            found.append(f"{relative}: column {column!r} has no known type in results/schema.yaml {where}")
            continue
        bad = [(number, value) for number, value in cells if value != "" and not parses(value, type_)]
        if bad:
            shown = ", ".join(f"line {n}: {v!r}" for n, v in bad[:MAX_CELLS_SHOWN])
            more = f" and {len(bad) - MAX_CELLS_SHOWN} more" if len(bad) > MAX_CELLS_SHOWN else ""
            found.append(
                f"{relative}: column {column!r} should be {type_} (results/schema.yaml {where}), "
                f"but {len(bad)} cells are not: {shown}{more}"
            )
        if entry.get("required"):
            empty = [number for number, value in cells if value == ""]
            if empty:
                found.append(
                    f"{relative}: column {column!r} is required (results/schema.yaml {where}) but is empty "
                    f"on lines {empty[:MAX_CELLS_SHOWN]}" + (" ..." if len(empty) > MAX_CELLS_SHOWN else "")
                )
    return found


def _entry_problems(where: str, entry) -> list[str]:
    if not isinstance(entry, dict):
        return [f"{where}: an entry must be a mapping with type and description, got {entry!r}"]
    found = []
    unknown = set(entry) - ENTRY_KEYS
    if unknown:
        found.append(f"{where}: unknown keys {sorted(unknown)} (allowed: {sorted(ENTRY_KEYS)})")
    if entry.get("type") not in TYPES:
        found.append(f"{where}: type {entry.get('type')!r} is not one of {TYPES}")
    description = entry.get("description")
    if not isinstance(description, str) or not description.strip():
        found.append(f"{where}: needs a non-empty description")
    if "required" in entry and not isinstance(entry["required"], bool):
        found.append(f"{where}: required must be true or false, got {entry['required']!r}")
    return found


def schema_problems(schema) -> list[str]:
    """Whether the schema is well formed: ``columns`` and ``files`` mappings whose entries all have a known type and
    a non-empty description."""
    if not isinstance(schema, dict):
        return ["the schema must be a mapping with `columns` and `files`"]
    found = []
    if set(schema) != {"columns", "files"}:
        found.append(f"top-level keys must be `columns` and `files`, got {sorted(schema)}")
    columns, files = schema.get("columns"), schema.get("files")
    if not isinstance(columns, dict):
        found.append("`columns` must be a mapping of column name -> entry")
        columns = {}
    if not isinstance(files, dict):
        found.append("`files` must be a mapping of glob -> (column name -> entry)")
        files = {}
    for column, entry in columns.items():
        found += _entry_problems(f"columns.{column}", entry)
    for glob, entries in files.items():
        if not isinstance(entries, dict) or not entries:
            found.append(f"files[{glob!r}] must be a non-empty mapping of column name -> entry")
            continue
        for column, entry in entries.items():
            found += _entry_problems(f"files[{glob!r}].{column}", entry)
    return found


def stale_problems(schema: dict, csv_paths: list[Path], root: Path = RESULTS) -> list[str]:
    """Entries no CSV needs: a glob that matches no CSV, a column under a glob that none of its CSVs has, a column
    under ``columns`` that no CSV resolves to it (absent everywhere, or overridden by ``files`` wherever present)."""
    headers = {_relative(p, root): read_table(p)[0] for p in csv_paths}
    found = []
    for glob, entries in (schema.get("files") or {}).items():
        matched = [rel for rel in headers if fnmatch.fnmatchcase(rel, glob)]
        if not matched:
            found.append(f"files[{glob!r}] matches no CSV under results/")
            continue
        for column in entries or {}:
            if not any(column in headers[rel] for rel in matched):
                found.append(f"files[{glob!r}].{column}: none of the CSVs it matches ({len(matched)}) has that column")
    resolved = {
        column for rel, header in headers.items() for column in header if not matching_globs(rel, column, schema)
    }
    for column in schema.get("columns") or {}:
        if column not in resolved:
            found.append(
                f"columns.{column}: no CSV under results/ uses this entry (the column is absent, or every "
                f"file that has it is described under `files`)"
            )
    return found


SCHEMA = load_schema()
CSVS = result_csvs()


def test_there_are_committed_tables():
    assert len(CSVS) > 0, f"no CSV under {RESULTS}"


def test_schema_is_well_formed():
    assert schema_problems(SCHEMA) == []


@pytest.mark.parametrize("path", CSVS, ids=lambda p: _relative(p, RESULTS))
def test_committed_csv_follows_the_schema(path):
    found = problems(path, SCHEMA)
    assert not found, "\n".join(found)


def test_schema_has_no_stale_entries():
    found = stale_problems(SCHEMA, CSVS)
    assert not found, "\n".join(found)


# -- each check can fail --------------------------------------------------------------------------------------------

TOY_SCHEMA = {
    "columns": {
        "paper": {"type": "str", "required": True, "description": "The paper."},
        "n": {"type": "int", "description": "Seeds."},
        "value": {"type": "float", "description": "A number."},
        "flag": {"type": "bool", "description": "A flag."},
        "ids": {"type": "list", "description": "Ids joined by ';'."},
    },
    "files": {"toy/*/claims.csv": {"n": {"type": "str", "description": "'3 vs 3'."}}},
}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "value, type_, ok",
    [
        ("3", "int", True),
        ("64.0000", "int", True),
        ("3.5", "int", False),
        ("nan", "int", False),
        ("three", "int", False),
        ("1.5", "float", True),
        ("nan", "float", True),
        ("inf", "float", True),
        ("-1e-06", "float", True),
        ("x", "float", False),
        ("True", "bool", True),
        ("false", "bool", True),
        ("0", "bool", True),
        ("yes", "bool", False),
        ("a;b", "list", True),
        ("anything", "str", True),
    ],
)
def test_parses(value, type_, ok):
    assert parses(value, type_) is ok


def test_problems_names_an_undocumented_column_a_bad_int_and_an_empty_required_cell(tmp_path):
    path = _write(
        tmp_path / "toy" / "small" / "table1.csv",
        "paper,n,mystery,value,flag,ids\ntoy,3,x,1.5,True,a;b\n,3.5,y,nan,maybe,\n",
    )
    found = problems(path, TOY_SCHEMA, root=tmp_path)
    text = "\n".join(found)
    assert "column 'mystery' is not documented: document it in results/schema.yaml" in text
    assert "toy/small/table1.csv" in text
    assert "column 'n' should be int" in text and "'3.5'" in text
    assert "column 'flag' should be bool" in text and "'maybe'" in text
    assert "column 'paper' is required" in text and "[3]" in text
    assert not any("column 'value'" in f or "column 'ids'" in f for f in found)  # nan is a float; ids may be empty
    assert len(found) == 4


def test_a_file_entry_overrides_the_global_one(tmp_path):
    claims = _write(tmp_path / "toy" / "small" / "claims.csv", "paper,n\ntoy,3 vs 3\n")
    other = _write(tmp_path / "toy" / "small" / "table2.csv", "paper,n\ntoy,3 vs 3\n")
    assert problems(claims, TOY_SCHEMA, root=tmp_path) == []
    assert any("column 'n' should be int" in p for p in problems(other, TOY_SCHEMA, root=tmp_path))


def test_problems_finds_malformed_rows_and_duplicate_columns(tmp_path):
    path = _write(tmp_path / "toy" / "small" / "table3.csv", "paper,paper,n\ntoy,toy\n")
    text = "\n".join(problems(path, TOY_SCHEMA, root=tmp_path))
    assert "duplicate columns ['paper']" in text
    assert "line 2: 2 cells for 3 columns" in text


def test_a_modified_copy_of_a_committed_table_fails(tmp_path):
    source = RESULTS / "simcse" / "small" / "tablea1.csv"
    if not source.is_file():
        pytest.skip("results/simcse/small/tablea1.csv is not committed")
    copy = tmp_path / "simcse" / "small" / "tablea1.csv"
    copy.parent.mkdir(parents=True)
    shutil.copy(source, copy)
    assert problems(copy, SCHEMA, root=tmp_path) == []
    header, rows = read_table(copy)
    header[header.index("lr")] = "learning_rate"
    rows[0][header.index("batch_size")] = "sixteen"
    rows[1][header.index("paper")] = ""
    with copy.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([header, *rows])
    text = "\n".join(problems(copy, SCHEMA, root=tmp_path))
    assert "column 'learning_rate' is not documented" in text
    assert "column 'batch_size' should be int" in text and "'sixteen'" in text
    assert "column 'paper' is required" in text


def test_schema_problems_finds_malformed_entries():
    bad = {
        "columns": {
            "a": {"type": "number", "description": "A."},
            "b": {"type": "str", "description": "  "},
            "c": {"type": "int", "description": "C.", "required": "yes"},
            "d": "str",
            "e": {"type": "str", "description": "E.", "unit": "s"},
        },
        "files": {"x/*/t.csv": {}},
    }
    text = "\n".join(schema_problems(bad))
    assert "columns.a: type 'number'" in text
    assert "columns.b: needs a non-empty description" in text
    assert "columns.c: required must be true or false" in text
    assert "columns.d: an entry must be a mapping" in text
    assert "columns.e: unknown keys ['unit']" in text
    assert "files['x/*/t.csv'] must be a non-empty mapping" in text
    assert schema_problems({"columns": {}}) == [
        "top-level keys must be `columns` and `files`, got ['columns']",
        "`files` must be a mapping of glob -> (column name -> entry)",
    ]
    assert schema_problems(TOY_SCHEMA) == []


def test_stale_problems_finds_unused_globs_and_columns(tmp_path):
    claims = _write(tmp_path / "toy" / "small" / "claims.csv", "paper,n\ntoy,3 vs 3\n")
    table = _write(tmp_path / "toy" / "small" / "table1.csv", "paper,value,flag,ids\ntoy,1.0,True,a\n")
    schema = {
        "columns": {**TOY_SCHEMA["columns"], "unused": {"type": "str", "description": "U."}},
        "files": {
            **TOY_SCHEMA["files"],
            "gone/*/t.csv": {"x": {"type": "str", "description": "X."}},
            "toy/*/table1.csv": {"absent": {"type": "str", "description": "A."}},
        },
    }
    text = "\n".join(stale_problems(schema, [claims, table], root=tmp_path))
    assert "files['gone/*/t.csv'] matches no CSV" in text
    assert "files['toy/*/table1.csv'].absent: none of the CSVs it matches (1) has that column" in text
    assert "columns.unused: no CSV under results/ uses this entry" in text
    assert "columns.n: no CSV" in text  # only claims.csv has n, and its glob overrides the global entry
    only_n = stale_problems(TOY_SCHEMA, [claims, table], root=tmp_path)
    assert len(only_n) == 1 and only_n[0].startswith("columns.n: no CSV under results/ uses this entry")


def test_result_csvs_keep_small_floats(tmp_path):
    """4 decimals printed a learning rate of 3e-05 as 0.0000 (Table A.1, the non-contrastive scan's trials)."""
    import pandas as pd

    from sentemb.report.views import write_csv_tables

    folder = tmp_path
    write_csv_tables(folder, {"t": pd.DataFrame({"lr": [1e-5, 3e-5, 5e-5], "score": [83.123456, 0.0, -0.25]})})
    frame = pd.read_csv(folder / "t.csv", keep_default_na=False, dtype=str)
    assert list(frame["lr"]) == ["1e-05", "3e-05", "5e-05"]
    assert list(frame["score"]) == ["83.1235", "0.0000", "-0.2500"]
