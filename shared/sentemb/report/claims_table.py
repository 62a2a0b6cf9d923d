"""The claims' verdicts as the archive shows them: the ``claims.csv`` columns and the README's Markdown rows. The
verdicts themselves: :mod:`sentemb.report.claims`."""

from __future__ import annotations

import pandas as pd

from sentemb.report.claim_tests import _fmt_p
from sentemb.report.markdown import markdown_table


def for_csv(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The verdicts as written to ``claims.csv``: p-values in 3 significant digits (``%.4f`` showed p = 2.31e-05 as
    0.0000)."""
    out = verdicts.copy()
    for column in ("p_value", "p_adjusted", "size_p_value", "size_p_adjusted"):
        if column in out:
            out[column] = [_fmt_p(p) if pd.notna(p) else "" for p in out[column]]
    return out


def markdown_rows(verdicts: pd.DataFrame, skip_not_run: bool = False) -> list[str]:
    """The verdicts as a Markdown table for a README: the direction verdict (effect, raw and adjusted two-sided p, n,
    test), the size verdict where the paper states a margin (the margin, the status, adjusted p), and the
    reproduced/paper ratio with its 95 % interval, descriptive; then the claims this profile cannot separate."""
    header = [
        "claim",
        "direction",
        "effect",
        "p two-sided (Holm)",
        "n",
        "test",
        "size vs the paper's stated margin",
        "reproduced / paper's effect [95 %] (descriptive)",
    ]
    rows = []

    def number(x, fmt):
        return format(float(x), fmt) if pd.notna(x) and x != "" else "–"

    def p_pair(raw, adjusted):
        return "–" if not (pd.notna(raw) and raw != "") else f"{number(raw, '.3g')} ({number(adjusted, '.3g')})"

    same = []
    for _, c in verdicts.iterrows():
        if skip_not_run and c["status"] == "not run":
            continue
        if c["status"] == "same runs":
            same.append(f"{c['claim']} (same runs as {c['same_runs_as']})")
            continue
        size = c.get("size_status", "no size")
        size = "no margin stated" if size == "no size" else size
        if pd.notna(c.get("size_target")) and c.get("size_target") != "":
            size = f"{size} ({number(c['size_target'], '+.2f')})"
        ratio = "–"
        if pd.notna(c.get("size_ratio")) and c.get("size_ratio") != "":
            ratio = f"{number(c['size_ratio'], '.2f')} [{number(c['size_ratio_low'], '.2f')}, "
            ratio += f"{number(c['size_ratio_high'], '.2f')}]"
        direction = [c["claim"], c["status"], number(c["effect"], "+.2f"), p_pair(c["p_value"], c["p_adjusted"])]
        rows.append(
            [*direction, c["n"], c["test"], size, ratio, p_pair(c.get("size_p_value"), c.get("size_p_adjusted"))]
        )
    lines = markdown_table([*header, "size p (Holm)"], rows)
    if same:
        lines += ["", f"Not separable on this profile's backbone (no verdict of their own): {'; '.join(same)}."]
    return lines
