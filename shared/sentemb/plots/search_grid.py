"""A hyperparameter search as heatmaps: one panel per group, a score per (row value, column value) cell."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from sentemb.plots import style


def score_heatmaps(table: pd.DataFrame, panel: str, rows: str, columns: str, score: str, title: str, score_label: str):
    """One annotated heatmap of ``score`` per value of ``panel`` (rows x columns, shared colour scale); the best cell
    of each panel is outlined. Empty cells (points without a record) stay blank."""
    style.apply()
    panels = list(dict.fromkeys(table[panel]))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), squeeze=False)
    low, high = table[score].min(), table[score].max()
    for ax, name in zip(axes[0], panels):
        grid = table[table[panel] == name].pivot(index=rows, columns=columns, values=score)
        sns.heatmap(
            grid,
            annot=True,
            fmt=".2f",
            cmap="viridis",
            vmin=low,
            vmax=high,
            ax=ax,
            cbar=ax is axes[0][-1],
            cbar_kws={"label": score_label},
        )
        best = grid.stack().idxmax()
        r, c = list(grid.index).index(best[0]), list(grid.columns).index(best[1])
        ax.add_patch(plt.Rectangle((c, r), 1, 1, fill=False, edgecolor="red", linewidth=2))
        ax.set_title(str(name))
    fig.suptitle(title)
    fig.tight_layout()
    return fig
