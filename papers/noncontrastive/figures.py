"""The non-contrastive paper's figures, drawn with seaborn and saved by :func:`sentemb.plots.style.save` in the
folder handed in (each function returns the paths it wrote).

- Figure 1: Barlow Twins' STS-B dev against lambda, one line per learning rate, from the scan (the trials of
  :func:`papers.noncontrastive.tables.table1_trials`).
- Figure 4: cosine similarity of STS-B test pairs by gold-rating bucket (seaborn), from the derived records.

Nothing here trains or builds a table: :class:`papers.noncontrastive.paper.NonContrastive` hands in what to draw.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from papers.noncontrastive import experiments as ex
from papers.noncontrastive.tables import BACKBONE_ROW, label
from sentemb.plots import style

RATING_BUCKETS = (0, 1, 2, 3, 4, 5)
FIGURE4_ROWS = (BACKBONE_ROW, "simcse", "bt_dropout", "vicreg_dropout")


# -- Figure 1 ------------------------------------------------------------------------------------------------------


def figure1(trials: pd.DataFrame, profile: str, folder: Path) -> list[Path]:
    """Figure 1, saved in ``folder``: Barlow Twins' STS-B dev (best over the run) against lambda, one line per learning
    rate, per cell."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    style.apply()
    bt = trials[trials["method"] == ex.METHOD_LABEL["barlow_twins"]].copy()
    bt["learning rate"] = [f"{lr:g}" for lr in bt["lr"]]
    cells = list(dict.fromkeys(bt["cell"]))
    lambdas = sorted(set(bt["lambda"]))
    ncols = min(5, len(cells))  # the ten cells of --extended in two rows of five
    nrows = -(-len(cells) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 3.2 * nrows), squeeze=False, sharey=True)
    for ax in axes.flat[len(cells) :]:
        ax.set_visible(False)
    for ax, cell in zip(axes.flat, cells):
        sns.lineplot(
            data=bt[bt["cell"] == cell],
            x="lambda",
            y="best_stsb_dev",
            hue="learning rate",
            marker="o",
            ax=ax,
            legend=cell == cells[0],
        )
        ax.set_xscale("log")
        ax.set_xticks(lambdas, [f"{value:g}" for value in lambdas])
        ax.minorticks_off()
        ax.set_title(f"Barlow Twins, {cell}")
        ax.set_xlabel("lambda (off-diagonal weight)")
        ax.set_ylabel("STS-B dev Spearman x 100 (best)")
    fig.suptitle("Figure 1: Barlow Twins' sensitivity to lambda and the learning rate")
    fig.tight_layout()
    width = int(bt["projector_width"].iloc[0])
    return style.save(
        fig,
        folder,
        "figure1_bt_lambda",
        f"profile {profile}; backbone {bt['backbone_used'].iloc[0]}, projector width {width}; "
        f"{len(bt)} runs, their ids in results/noncontrastive/{profile}/table1_trials.csv",
    )


# -- Figure 4 ------------------------------------------------------------------------------------------------------


def figure4(derived_records: dict[str, list[dict]], profile: str, folder: Path) -> list[Path]:
    """Figure 4, saved in ``folder``: cosine similarity of the STS-B test pairs by gold rating bucket ([0,1), ...,
    [4,5]), seed 42."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    style.apply()
    rows, ids = [], []
    for name in FIGURE4_ROWS:
        if not derived_records.get(name):
            continue
        d = derived_records[name][0]
        ids.append(f"{name}={d['run_id']}")
        stsb = d["result"]["stsb_test"]
        buckets = np.clip(np.floor(np.asarray(stsb["gold"])), 0, 4).astype(int)
        rows += [
            {"model": label(name), "rating": f"{b}-{b + 1}", "cosine": c} for b, c in zip(buckets, stsb["cosines"])
        ]
    if not rows:
        return []
    frame = pd.DataFrame(rows)
    models = list(dict.fromkeys(frame["model"]))
    fig, axes = plt.subplots(len(models), 1, figsize=(7, 1.9 * len(models)), squeeze=False)
    order = [f"{b}-{b + 1}" for b in RATING_BUCKETS[:-1]]
    for ax, model in zip(axes[:, 0], models):
        sns.violinplot(
            data=frame[frame["model"] == model],
            x="cosine",
            y="rating",
            order=order,
            orient="h",
            cut=0,
            density_norm="width",
            inner="quartile",
            hue="rating",
            legend=False,
            palette="viridis",
            ax=ax,
        )
        ax.set_title(model, loc="left")
        ax.set_ylabel("gold rating")
    axes[-1, 0].set_xlabel("cosine similarity of the pair (each panel has its own horizontal scale)")
    fig.suptitle("Figure 4: STS-B test cosine similarities by human rating")
    fig.tight_layout()
    return style.save(fig, folder, "figure4_cosine_by_rating", f"profile {profile}; seed 42 runs: {', '.join(ids)}")
