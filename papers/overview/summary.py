"""The overview's README blocks (:meth:`papers.overview.paper.Overview.summary`): the archive, then the comparison.

The first table (every paper's tables and figures, and its claims, per status) is the top-level README's block; the
rest (each method's averages and the pairs that differ significantly) is the overview's own README's
(:meth:`papers.overview.paper.Overview.readme_blocks`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from papers.overview.tables import DERIVED_TASKS, PROTOCOLS
from sentemb import archive_coverage
from sentemb.profiles import get_profile
from sentemb.report.markdown import markdown_table
from sentemb.report.reproduced import mean_std


def archive_table(profile: str) -> list[str]:
    """Markdown rows, one per paper: its tables and figures per status, its claims per status, links to its README
    and notebook (relative to the top-level README)."""
    items, claims = archive_coverage.coverage_counts(), archive_coverage.claim_counts(profile)
    header = [
        "paper",
        "tables + figures: reproduced / partly / not run / no numbers (n.a., not identifiable)",
        "claims, direction: holds / fails / inconclusive / same runs / not run",
        "size (only against a margin the paper states): holds / fails / inconclusive / no margin stated, same runs "
        "or not run",
    ]
    rows = []
    for (paper, title), (_, i), (_, c) in zip(archive_coverage.titles().items(), items.iterrows(), claims.iterrows()):
        links = f"[{title}](papers/{paper}/README.md) ([notebook](notebooks/{paper}.ipynb))"
        rows.append(
            [
                links,
                f"{i['reproduced']} / {i['partly']} / {i['not run']} / "
                f"{i['not applicable'] + i['not identifiable']} (of {i['items']})",
                f"{c['holds']} / {c['fails']} / {c['inconclusive']} / {c['same runs']} / {c['not run']} "
                f"(of {c['claims']})",
                f"{c['size holds']} / {c['size fails']} / {c['size inconclusive']} / "
                f"{c['size no size'] + c['size same runs'] + c['size not run']}",
            ]
        )
    return markdown_table(header, rows)


def average_cells(table: pd.DataFrame, aggregation: str = "all") -> dict[str, str]:
    """Method -> 'mean ± std (n)' of its seeds' averages: the table's "Avg." rows, or (``mean``: DeCLUTR's protocol)
    the mean of each seed's 7 task values."""
    if table.empty:
        return {}
    if aggregation == "all":
        avg = table[table["column"] == "Avg."]
        return {r["row"]: mean_std(r) for _, r in avg.iterrows()}
    out = {}
    part = table[table["aggregation"].isin((aggregation, "")) & (table["column"] != "Avg.")]
    for method, group in part.groupby("row", sort=False):
        per_seed = np.mean([[float(v) for v in str(values).split(";")] for values in group["values"]], axis=0)
        std = float(np.std(per_seed, ddof=1)) if len(per_seed) > 1 else float("nan")
        out[method] = mean_std({"reproduced": float(np.mean(per_seed)), "std": std, "n": len(per_seed)})
    return out


def pairwise_lines(pairs: pd.DataFrame) -> list[str]:
    """Per evaluation, how many pairs differ significantly and which (none where no method has two seeds: the
    rehearsal's one seed each gives an empty table without columns)."""
    lines = []
    if pairs.empty:
        return lines
    for evaluation, aggregation, label in (
        ("sts", "all", "STS, SimCSE protocol"),
        ("transfer", "", "transfer"),
        ("mteb", "", "MTEB"),
    ):
        part = pairs[(pairs["evaluation"] == evaluation) & (pairs["aggregation"] == aggregation)]
        if part.empty:
            continue
        significant = part[part["significant"].astype(bool)]
        paired = int(part["test"].str.startswith("paired").sum())
        tested = int(part["p_value"].notna().sum())
        untested = (
            f"; {len(part) - tested} pairs not tested (their seeds share init runs: not independent replicates)"
            if tested < len(part)
            else ""
        )
        lines += [
            "",
            f"Pairwise ({label}; two-sided, {paired} of {tested} pairs paired (the same seeds and data "
            f"order, or init runs), the others Welch; Holm over {tested} pairs{untested}): "
            f"{len(significant)} significant at 0.05"
            + (": " if len(significant) else "")
            + "; ".join(
                f"{r['method_a']} {'>' if r['difference'] > 0 else '<'} {r['method_b']} "
                f"({r['difference']:+.2f}, p = {r['p_corrected']:.2g})"
                for _, r in significant.iterrows()
            )
            + ".",
        ]
    return lines


def markdown_summary(tables: dict[str, pd.DataFrame]) -> str:
    """Every paper's coverage and claims per status, then the comparison (mean ± std (n)) with the significant pairs,
    on the profile of the comparison's records."""
    sts = tables["comparison_sts"]
    profile = sts["profile"].iloc[0]
    substitutes = get_profile(profile).substitutes()
    lines = archive_table(profile) + [
        "",
        (
            "**The methods compared** ([notebook](../../notebooks/overview.ipynb)): "
            f"profile {profile}; {substitutes}. 7 STS test tasks (Spearman x 100), SentEval's 7 transfer tasks "
            "(test accuracy %, fasttest) and the offline MTEB tasks (main score x 100): mean ± std (n seeds); "
            "not run: the method's seeds lack that evaluation."
        ),
        "",
    ]
    rows = []
    budget = tables["budget"].set_index("method")
    averages = [average_cells(sts, aggregation) for aggregation in PROTOCOLS]
    averages += [average_cells(tables.get(f"comparison_{kind}", pd.DataFrame())) for kind in DERIVED_TASKS]
    for method in dict.fromkeys(sts["row"]):
        cells = [found.get(method, "") for found in averages[:2]]
        cells += [found.get(method, "not run") for found in averages[2:]]
        b = budget.loc[method]
        steps = f"{b['steps']} x {b['batch']}" if b["steps"] else "untrained"
        rows.append([method, *cells, b["train_data"] or "-", steps])
    header = ["method", "STS avg. (SimCSE protocol, `all`)", "STS avg. (DeCLUTR protocol, `mean`)", "transfer avg."]
    lines += markdown_table([*header, "MTEB avg.", "data", "steps x batch"], rows)
    if "comparison_pairwise" in tables:
        lines += pairwise_lines(tables["comparison_pairwise"])
    return "\n".join(lines)
