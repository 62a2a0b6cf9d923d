"""The cells a claim compares (``papers/<paper>/claims.yaml``): reading the claims, finding each referenced cell in a
table (by ``table``, ``row``, ``column`` and the keys that make it unique; a reference matching several rows raises),
its number or its per-seed values, and the identities that say when two claims read the same runs. The verdicts are
:mod:`sentemb.report.claims`'.

A reference names the paper's cell (its ``group`` and ``row``). It is read in two kinds of table, each under its own
column names, never renamed: a reproduced table (the result CSVs' cells, :mod:`sentemb.report.cell`), where the
paper's group and row are ``reported_group`` and ``reported_row`` and the number is ``reproduced``; and the paper's
own table (``reported/``), where they are ``group``, ``row`` and ``value`` (:data:`COLUMNS`)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from sentemb import settings
from sentemb.errors import ConfigError
from sentemb.report.comparison import Constant, Seeds

KINDS = ("greater", "within", "argmax", "argmin")


def claims_path(paper: str) -> Path:
    return settings.REPO_ROOT / "papers" / paper / "claims.yaml"


def load_claims(paper: str) -> list[dict]:
    path = claims_path(paper)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("paper") != paper or not isinstance(data.get("claims"), list):
        raise ConfigError(f"{path}: expected 'paper: {paper}' and a 'claims:' list")
    for claim in data["claims"]:
        if claim.get("kind") not in KINDS or not claim.get("id") or not claim.get("text"):
            raise ConfigError(f"{path}: claim {claim.get('id')!r} needs id, text and kind in {KINDS}")
        if not isinstance(claim.get("figure_only", False), bool):
            raise ConfigError(f"{path}: claim {claim['id']!r}: figure_only must be true or false")
        if claim["kind"] == "within" and ("tolerance" in claim) == ("tolerance_relative" in claim):
            raise ConfigError(f"{path}: claim {claim['id']!r} (within) needs one of tolerance, tolerance_relative")
        if "size_tolerance" in claim:
            raise ConfigError(
                f"{path}: claim {claim['id']!r}: size_tolerance is gone (a size is judged only against "
                "a margin the paper states: margin and margin_quote)"
            )
        if "margin" in claim:
            if not isinstance(claim["margin"], (int, float)) or claim["margin"] <= 0 or claim["kind"] == "within":
                raise ConfigError(
                    f"{path}: claim {claim['id']!r}: margin must be a number > 0 (not on a within "
                    f"claim), got {claim['margin']!r}"
                )
            if not str(claim.get("margin_quote", "")).strip():
                raise ConfigError(
                    f"{path}: claim {claim['id']!r}: a margin needs margin_quote, the paper's sentence that states it"
                )
    return data["claims"]


def _cells_of(claim: dict) -> list[dict]:
    if claim["kind"] in ("argmax", "argmin"):  # the expected cell is compared with the others, not with itself
        return [c for c in claim["cells"] if c != claim["expect"]] + [claim["expect"]]
    return [claim["left"], claim["right"]]


def _label(ref: dict) -> str:
    """A short readable name of a cell: its group, row and column."""
    return "'" + " / ".join(str(ref[k]) for k in ("group", "row", "column") if ref.get(k)) + "'"


COLUMNS = {  # the kind of table -> where a reference's group and row, and the cell's number, are
    "reproduced": {"group": "reported_group", "row": "reported_row", "value": "reproduced"},
    "reported": {"group": "group", "row": "row", "value": "value"},
}


def columns_of(table: pd.DataFrame) -> dict[str, str]:
    """The column names of ``table``'s kind (:data:`COLUMNS`): a reproduced table has a ``reproduced`` column."""
    return COLUMNS["reproduced" if "reproduced" in table.columns else "reported"]


def _match(table: pd.DataFrame, ref: dict) -> pd.Series | None:
    """The one row matching ``ref``; None when none matches; raises when several do."""
    unknown = set(ref) - set(REF_KEYS)
    if unknown:
        raise ConfigError(f"cell reference {ref} has unknown keys {sorted(unknown)}")
    names = columns_of(table)
    mask = pd.Series(True, index=table.index)
    for key, wanted in ref.items():
        mask &= table[names.get(key, key)].fillna("").astype(str) == str(wanted)
    hits = table[mask]
    if len(hits) > 1:
        raise ConfigError(f"cell reference {ref} matches {len(hits)} rows; add group/split/aggregation/metric")
    return None if hits.empty else hits.iloc[0]


def lookup(table: pd.DataFrame, ref: dict) -> float | None:
    """The value of the one row matching ``ref``; None when no row matches or its value is empty."""
    row = _match(table, ref)
    number = columns_of(table)["value"]
    if row is None or pd.isna(row[number]):
        return None
    return float(row[number])


def parse_values(values, value) -> list[float]:
    """Per-seed values from a ``values`` cell ("83.1;83.4;83.2"); empty/NaN means one seed, ``value``."""
    if values is None or (isinstance(values, float) and math.isnan(values)) or str(values).strip() == "":
        return [] if pd.isna(value) else [float(value)]
    return [float(v) for v in str(values).split(";") if v.strip() != ""]


def _is_constant(row: pd.Series) -> bool:
    flag = row.get("deterministic")  # a bool, or "True"/"False" read back from a CSV; missing or NaN: seeded
    return bool(flag) if isinstance(flag, (bool, np.bool_)) else str(flag).lower() == "true"


def _text(row: pd.Series, key: str) -> str:
    value = row.get(key)
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def lookup_seeds(table: pd.DataFrame, ref: dict) -> list[float] | None:
    """The per-seed values of the one row matching ``ref`` (a :class:`Constant` for a deterministic cell, else
    :class:`Seeds`), with the run ids behind them; None when no row matches or it has no value."""
    row = _match(table, ref)
    if row is None:
        return None
    values = parse_values(row.get("values"), row[columns_of(table)["value"]])
    if not values:
        return None
    run_ids = [r for r in _text(row, "run_ids").split(";") if r]
    if _is_constant(row):
        return Constant(values[:1], run_ids, _text(row, "profile"))
    return Seeds(values, run_ids, _text(row, "profile"))


def cell_identity(ref: dict) -> str:
    """Which of the paper's cells ``ref`` is, as written (see :func:`paper_cell_identity` for the paper's aliases)."""
    return " | ".join(str(ref.get(k, "")) for k in ("table", "group", "row", "column"))


def paper_cell_identity(paper: str):
    """A function ref -> the paper's cell identity, where ``reported/same_cells.csv`` names cells of different tables
    that are one run of the paper (SimCSE's Table 4 "entailment + hard neg." is Table 7's "Contradiction, alpha=1")."""
    from sentemb.report.reported_consistency import load_same_cells

    aliases = load_same_cells(paper)

    def identify(ref: dict) -> str:
        for _, alias in aliases.iterrows():
            same = all(str(ref.get(k, "")) == alias[k] for k in ("table", "group", "row"))
            if same and alias["column"] in ("*", str(ref.get("column", ""))):
                return f"model {alias['model']} | {alias['as_column']}"
        return cell_identity(ref)

    return identify


REF_KEYS = ("table", "group", "row", "column", "split", "aggregation", "metric")
