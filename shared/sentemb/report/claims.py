"""A paper's main claims as comparisons over table cells (``papers/<paper>/claims.yaml``).

Each claim says which cells it rests on and one comparison:

- ``greater``: left > right + margin (margin defaults to 0)
- ``within``:  |left - right| <= tolerance
- ``argmax`` / ``argmin``: among ``cells``, ``expect`` is (one of) the largest / smallest

A cell reference is a mapping with ``table``, ``row``, ``column`` and, where needed to be unique, ``group``,
``split``, ``aggregation`` or ``metric``. A claim is evaluated on any long table with those columns and a
``value`` column: the reported numbers, or a reproduced table (see :func:`from_reproduced`). The verdict is
``holds``, ``fails``, or ``not run`` when a cell it needs is missing or has no value. A reference that
matches several rows is a malformed claim and raises.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from sentemb import settings
from sentemb.errors import ConfigError

REF_KEYS = ("table", "group", "row", "column", "split", "aggregation", "metric")
KINDS = ("greater", "within", "argmax", "argmin")


@dataclass(frozen=True)
class Verdict:
    id: str
    status: str  # holds | fails | not run
    detail: str


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
    return data["claims"]


def _cells_of(claim: dict) -> list[dict]:
    if claim["kind"] in ("argmax", "argmin"):
        return list(claim["cells"]) + [claim["expect"]]
    return [claim["left"], claim["right"]]


def lookup(table: pd.DataFrame, ref: dict) -> float | None:
    """The value of the one row matching ``ref``; None when no row matches or its value is empty."""
    unknown = set(ref) - set(REF_KEYS)
    if unknown:
        raise ConfigError(f"cell reference {ref} has unknown keys {sorted(unknown)}")
    mask = pd.Series(True, index=table.index)
    for key, wanted in ref.items():
        mask &= table[key].fillna("").astype(str) == str(wanted)
    hits = table[mask]
    if len(hits) > 1:
        raise ConfigError(f"cell reference {ref} matches {len(hits)} rows; add group/split/aggregation/metric")
    if hits.empty or pd.isna(hits["value"].iloc[0]):
        return None
    return float(hits["value"].iloc[0])


def evaluate(claim: dict, table: pd.DataFrame) -> Verdict:
    values = [lookup(table, ref) for ref in _cells_of(claim)]
    if any(v is None for v in values):
        missing = [ref for ref, v in zip(_cells_of(claim), values) if v is None]
        return Verdict(claim["id"], "not run", f"no value for {missing}")
    kind = claim["kind"]
    if kind == "greater":
        left, right = values
        margin = float(claim.get("margin", 0.0))
        ok = left > right + margin
        detail = f"{left:g} > {right:g} + {margin:g}"
    elif kind == "within":
        left, right = values
        tolerance = float(claim["tolerance"])
        ok = abs(left - right) <= tolerance
        detail = f"|{left:g} - {right:g}| = {abs(left - right):.3g} <= {tolerance:g}"
    else:
        *others, expected = values
        best = max(others) if kind == "argmax" else min(others)
        ok = expected >= best if kind == "argmax" else expected <= best
        detail = f"expected {expected:g}, {'max' if kind == 'argmax' else 'min'} of the others {best:g}"
    return Verdict(claim["id"], "holds" if ok else "fails", detail)


def evaluate_all(paper: str, table: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for claim in load_claims(paper):
        verdict = evaluate(claim, table)
        rows.append({"paper": paper, "claim": claim["id"], "text": claim["text"], "source": claim.get("source", ""),
                     "status": verdict.status, "detail": verdict.detail})
    return pd.DataFrame(rows)


def from_reproduced(reproduced: pd.DataFrame) -> pd.DataFrame:
    """A reproduced table (``report.reproduced.join``) in the reported keys, so claims can be evaluated on it."""
    out = reproduced.rename(columns={"reproduced": "value"}).copy()
    out["row"] = out["reported_row"]
    out["group"] = out["reported_group"]
    if "metric" not in out:
        out["metric"] = ""
    return out[out["row"].fillna("") != ""]
