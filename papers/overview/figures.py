"""The overview's figures (``notebooks/overview.ipynb`` shows them): each draws with matplotlib and seaborn what it
is handed (the comparison's STS records, or the pairwise tests of :func:`papers.overview.tables.pairwise`) for a
profile, saves it with :func:`sentemb.plots.style.save` under the folder handed in and returns the paths: every
method's 7-task STS average per seed under both protocols, the heatmap of the pairwise tests' corrected p-values, and
the methods against the pretraining of the archive's backbones (:mod:`papers.overview.pretraining_curve`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from papers.overview.tables import PROTOCOLS, sts_seeds
from sentemb.plots import style
from sentemb.profiles import get_profile


def figure_comparison(sts: dict[str, list[dict]], profile: str, folder):
    """Per method, the 7-task STS average of each seed (points) and their mean (bar), under both protocols."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    style.apply()
    rows = []
    for aggregation in PROTOCOLS:
        for method, values in sts_seeds(sts, aggregation).items():
            rows += [{"method": method, "protocol": aggregation, "STS avg. (Spearman x 100)": v} for v in values]
    data = pd.DataFrame(rows)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    for ax, aggregation in zip(axes, PROTOCOLS):
        part = data[data["protocol"] == aggregation]
        sns.barplot(
            part, y="method", x="STS avg. (Spearman x 100)", ax=ax, color=style.PALETTE[0], alpha=0.35, errorbar=None
        )
        sns.stripplot(
            part, y="method", x="STS avg. (Spearman x 100)", ax=ax, color=style.PALETTE[0], size=5, jitter=False
        )  # no random jitter: the same records give the same bytes
        low = part["STS avg. (Spearman x 100)"].min()
        ax.set_xlim(low - 3, part["STS avg. (Spearman x 100)"].max() + 1)
        ax.set_title(PROTOCOLS[aggregation], fontsize=9)
        ax.set_ylabel("")
    return style.save(
        fig,
        folder,
        "comparison_sts",
        f"profile {profile}; {get_profile(profile).substitutes()}; 7 STS test tasks, Spearman x 100; points: seeds; "
        f"run ids in results/overview/{profile}/comparison_sts.csv",
    )


def figure_pairwise(table: pd.DataFrame, profile: str, folder):
    """Heatmap of the corrected p-values of the pairwise tests (SimCSE's protocol); annotated with the difference."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    style.apply()
    part = table[(table["evaluation"] == "sts") & (table["aggregation"] == "all")]
    methods = list(dict.fromkeys(list(part["method_a"]) + list(part["method_b"])))
    p = pd.DataFrame(np.nan, index=methods, columns=methods)
    diff = pd.DataFrame("", index=methods, columns=methods)
    for _, r in part.iterrows():
        p.loc[r["method_a"], r["method_b"]] = p.loc[r["method_b"], r["method_a"]] = r["p_corrected"]
        diff.loc[r["method_a"], r["method_b"]] = f"{r['difference']:+.1f}"
        diff.loc[r["method_b"], r["method_a"]] = f"{-r['difference']:+.1f}"
    fig, ax = plt.subplots(figsize=(8, 6.5))
    sns.heatmap(
        p,
        annot=diff,
        fmt="",
        cmap="viridis_r",
        vmin=0,
        vmax=0.2,
        ax=ax,
        cbar_kws={"label": "p (paired t or Welch, two-sided, Holm-corrected)"},
    )
    ax.set_title("row minus column, STS avg.; dark: significant", fontsize=9)
    substitutes = get_profile(profile).substitutes()
    return style.save(
        fig,
        folder,
        "comparison_pairwise",
        f"profile {profile}; {substitutes}; SimCSE's STS protocol; results/overview/{profile}/comparison_pairwise.csv",
    )


def figure_pretraining_curve(table: pd.DataFrame, reference: pd.DataFrame, profile: str, folder):
    """Each method's 7-STS average against the pretraining tokens of the archive's backbone it starts from (mean ±
    std of the seeds where several ran), with all-MiniLM-L6-v2's untrained mean pooling (``reference``, one row of
    :func:`papers.overview.pretraining_curve.reference`) as a labelled line."""
    import matplotlib.pyplot as plt

    style.apply()
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    for colour, (method, part) in zip(style.PALETTE, table.groupby("method", sort=False)):
        part = part.sort_values("tokens_seen")
        x = part["tokens_seen"] / 1e6
        seeds = "/".join(str(n) for n in sorted(set(part["n"])))
        label = f"{method} (n={seeds})"
        ax.errorbar(x, part["mean"], yerr=part["std"].fillna(0), marker="o", capsize=3, color=colour, label=label)
    reference = reference.iloc[0] if not reference.empty else {"n": 0}
    if reference["n"]:
        ax.axhline(reference["mean"], color="#444444", linestyle="--", linewidth=1)
        ax.annotate(
            f"{reference['backbone']}, untrained mean pooling ({reference['mean']:.1f}; contrastively trained)",
            (0.01, reference["mean"]),
            xycoords=("axes fraction", "data"),
            textcoords="offset points",
            xytext=(0, -11),
            fontsize=8,
            color="#444444",
        )
    ax.set_xlim(0, 1.1 * table["tokens_seen"].max() / 1e6)
    ax.set_xlabel("pretraining tokens of the archive's backbone (millions)")
    ax.set_ylabel("7 STS test tasks, Spearman x 100")
    ax.set_title("The methods against the backbone's pretraining (SimCSE's STS protocol)", fontsize=9)
    ax.legend(loc="center right", fontsize=8)
    return style.save(
        fig,
        folder,
        "pretraining_curve",
        f"profile {profile}; each point a checkpoint of the archive's MLM pretraining (shared/models, "
        f"results/pretraining), its tokens counted in its own vocabulary (vocabularies differ in tokens a word: "
        f"docs/raw-backbone.md); fine-tuning as in the profile; n: seeds (untrained: one run); bars: std; "
        f"run ids in results/overview/{profile}/pretraining_curve.csv and pretraining_curve_reference.csv",
    )
