"""DeCLUTR's Figures 2, 3 and S1, drawn from the figures' table (``tables.figure_points``): each grid point one run
(one seed) scored by its STS-B dev Spearman (see ``experiments.py``), saved in the folder handed in with a caption
naming the profile and its substitutes.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from papers.declutr.experiments import FIGURE2, FIGURE3_RUNS, FIGURES1_MEMORY, FIGURES1_PROJECTIONS, figure2_run
from papers.declutr.tables import DEV_SCORE
from sentemb.models.backbone import MINILM, RAW_BERT
from sentemb.plots import style
from sentemb.profiles import Profile, get_profile

SUBSTITUTE_BACKBONES = {  # by the profile's backbone: how a figure's caption names it (none for smoke's tiny random
    MINILM: "all-MiniLM-L6-v2 (already a trained sentence encoder)",  # BERT, whose figures only test the code, or for
    RAW_BERT: "the archive's MLM-only BERT (4 x 256)",  # the paper's own on full)
}


def substitutes(profile: Profile) -> str:
    """What a figure's caption says the profile substituted ("" where it names no substitute backbone)."""
    backbone = SUBSTITUTE_BACKBONES.get(profile.backbone)
    if backbone is None:
        return ""
    return (
        f"{profile.name} profile: {backbone} for DistilRoBERTa, WikiText-2 articles for OpenWebText, spans of 16-64 "
        "tokens for 32-512, 60 steps of 16 documents; "
    )


# -- figures --------------------------------------------------------------------------------------------------------


def _save(fig, name: str, profile, folder: Path, points: pd.DataFrame) -> list[Path]:
    """Saved in ``folder`` with a caption naming the profile, its substitutes, the score, and where the points' run
    ids are."""
    profile = get_profile(profile)
    fig.tight_layout()
    return style.save(
        fig,
        folder,
        name,
        f"profile {profile.name}; {substitutes(profile)}y = {DEV_SCORE}; "
        f"{points['run'].nunique()} runs, one seed each: their run ids are in "
        f"results/declutr/{profile.name}/figures.csv",
    )


def _styled_figure(ncols: int, figsize: tuple[float, float], **kwargs):
    """(seaborn, figure, axes) of the archive's style; the plotting libraries are imported only to draw."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    style.apply()
    return (sns, *plt.subplots(1, ncols, figsize=figsize, **kwargs))


def _untrained_line(axes, points: pd.DataFrame) -> None:
    """The untrained backbone's STS-B dev score as a dotted line on every panel (does training help at all?)."""
    base = points[points["run"] == "transformer"]
    if base.empty:
        return
    for ax in axes:
        ax.axhline(base["dev_score"].iloc[0], color="0.4", linestyle=":", label="not trained")


def figure2(points: pd.DataFrame, profile: str, folder: Path) -> list[Path]:
    """Figure 2: the dev score over the A x P x tau grid by A (a) and by P (b), and by positive view (c)."""
    grid_points = points[
        points["run"].isin(
            [
                figure2_run(a, p, t)
                for a in FIGURE2["num_anchors"]
                for p in FIGURE2["num_positives"]
                for t in FIGURE2["temperature"]
            ]
        )
    ]
    views = points[points["run"].isin(["declutr", "views_adjacent", "views_subsumed"])]
    sns, fig, axes = _styled_figure(3, (10, 3.4), sharey=True)
    sns.boxplot(data=grid_points, x="num_anchors", y="dev_score", ax=axes[0], color=style.PALETTE[0])
    # jitter=False, dodge=True: seaborn jitters with numpy's global RNG, so a jittered figure changes at every run
    sns.stripplot(
        data=grid_points,
        x="num_anchors",
        y="dev_score",
        hue="temperature",
        ax=axes[0],
        palette="deep",
        jitter=False,
        dodge=True,
    )
    sns.boxplot(data=grid_points, x="num_positives", y="dev_score", ax=axes[1], color=style.PALETTE[1])
    sns.stripplot(
        data=grid_points,
        x="num_positives",
        y="dev_score",
        hue="temperature",
        ax=axes[1],
        palette="deep",
        legend=False,
        jitter=False,
        dodge=True,
    )
    sns.stripplot(
        data=views, x="positive_views", y="dev_score", ax=axes[2], color=style.PALETTE[2], size=8, jitter=False
    )
    _untrained_line(axes, points)
    axes[2].legend(fontsize=8)
    axes[0].set_ylabel("STS-B dev Spearman x 100")
    for ax, title, label in zip(
        axes,
        ("(a) anchors A", "(b) positives P", "(c) positive views (A = P = 2)"),
        ("anchors per document A", "positives per anchor P", "positive view"),
    ):
        ax.set(title=title, xlabel=label)
    fig.suptitle("Figure 2: span sampling (one seed per point; NT-Xent in its exact form, Eq. 2)")
    return _save(fig, "figure2_sampling", profile, folder, pd.concat([grid_points, views]))


def figure3(points: pd.DataFrame, profile: str, folder: Path) -> list[Path]:
    """Figure 3: the dev score of contrastive only, MLM only and both against the share of the training steps."""
    shares = points[points["run"].isin(list(FIGURE3_RUNS))]
    sns, fig, ax = _styled_figure(1, (5.2, 3.6))
    sns.lineplot(data=shares, x="share", y="dev_score", hue="objective", marker="o", ax=ax)
    _untrained_line([ax], points)
    ax.legend(fontsize=8)
    ax.set(
        xlabel="share of the training steps (%)",
        ylabel="STS-B dev Spearman x 100",
        title="Figure 3: objective and training-set size (one model size)",
    )
    return _save(fig, "figure3_objective_size", profile, folder, shares)


def figureS1(points: pd.DataFrame, profile: str, folder: Path) -> list[Path]:
    """Figure S1: (a) projection heads by output width, against none; (b) memory banks by queue size per tau."""
    heads = points[points["run"].str.startswith("proj_")]
    banks = points[points["run"].str.startswith("xbm_")]
    base = points[points["run"] == "declutr"]
    sns, fig, axes = _styled_figure(2, (10, 3.6), sharey=True)
    sns.lineplot(data=heads, x="projection_dim", y="dev_score", hue="projection", marker="o", ax=axes[0])
    sns.lineplot(data=banks, x="memory_size", y="dev_score", hue="temperature", marker="o", ax=axes[1], palette="deep")
    _untrained_line(axes, points)
    for ax in axes:
        if not base.empty:
            ax.axhline(base["dev_score"].iloc[0], color="k", linestyle="--", label="none (DeCLUTR)")
        ax.legend(fontsize=8)
    axes[0].set(
        xlabel="projection output width",
        ylabel="STS-B dev Spearman x 100",
        title=f"(a) projection heads ({', '.join(FIGURES1_PROJECTIONS['kind'])})",
    )
    axes[1].set(xlabel="queue size", title=f"(b) memory bank, tau in {FIGURES1_MEMORY['temperature']}")
    fig.suptitle("Figure S1 (one seed per point)")
    return _save(fig, "figureS1_projection_memory", profile, folder, pd.concat([heads, banks, base]))
