"""Figures of embedding geometry, drawn from run records (no model needed).

- :func:`align_uniform_trajectories` SimCSE Figure 2: (l_uniform, l_align) along training, arrows in
  the training direction.
- :func:`align_uniform_points`       SimCSE Figure 3: one point per model, coloured by average STS.
- :func:`singular_spectra`           SimCSE Figure F.1: normalised singular values.
- :func:`cosine_densities`           SimCSE Figure G.1: cosine density per gold-rating group.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from adjustText import adjust_text

from sentemb.plots import style

LABEL_ITERATIONS = 1000  # adjustText steps at most; a layout that settles stops earlier (SimCSE small Figure 3: 20)


def align_uniform_trajectories(curves: dict[str, list[dict]], title: str):
    style.apply()
    fig, ax = plt.subplots(figsize=(5.2, 4.0))
    for (label, curve), colour in zip(curves.items(), style.PALETTE):
        u = [p["uniformity"] for p in curve]
        a = [p["alignment"] for p in curve]
        ax.plot(u, a, "-o", color=colour, ms=3, lw=1, label=label)
        for k in range(len(u) - 1):
            ax.annotate(
                "",
                xy=(u[k + 1], a[k + 1]),
                xytext=(u[k], a[k]),
                arrowprops={"arrowstyle": "->", "color": colour, "lw": 1},
            )
    ax.set_xlabel(r"$\ell_{uniform}$ (lower is better)")
    ax.set_ylabel(r"$\ell_{align}$ (lower is better)")
    ax.set_title(title)
    ax.legend(loc="best")
    return fig


def align_uniform_points(points: dict[str, dict], title: str):
    """``points[label] = {"alignment", "uniformity", "avg_sts"}``."""
    style.apply()
    fig, ax = plt.subplots(figsize=(5.6, 4.8))
    u = np.array([p["uniformity"] for p in points.values()])
    a = np.array([p["alignment"] for p in points.values()])
    c = np.array([p["avg_sts"] for p in points.values()])
    sc = ax.scatter(u, a, c=c, cmap="viridis", s=50, edgecolor="k", lw=0.5)
    ax.margins(x=0.15, y=0.15)
    texts = [ax.text(x, y, f"{label} ({v:.2f})", fontsize=8) for label, x, y, v in zip(points, u, a, c)]
    # adjustText moves labels off each other and off the points (close models overlapped). By default it stops after
    # 1 s of wall clock, so a layout that does not settle depended on the machine's speed and load; a fixed number of
    # iterations makes the figure the same on every machine (a settled layout stops earlier, unchanged)
    arrows = {"arrowstyle": "-", "color": "0.5", "lw": 0.5}
    adjust_text(texts, x=u, y=a, ax=ax, expand=(1.3, 1.8), arrowprops=arrows, iter_lim=LABEL_ITERATIONS)
    fig.colorbar(sc, ax=ax, label="avg. STS (Spearman x 100)", orientation="horizontal", pad=0.18, shrink=0.8)
    ax.set_xlabel(r"$\ell_{uniform}$")
    ax.set_ylabel(r"$\ell_{align}$")
    ax.set_title(title)
    return fig


def singular_spectra(spectra: dict[str, list[float]], title: str):
    style.apply()
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    for label, values in spectra.items():
        ax.plot(np.arange(1, len(values) + 1), values, lw=1.5, label=label)
    ax.set_xlabel("index of singular value")
    ax.set_ylabel("normalised singular value")
    ax.set_title(title)
    ax.legend(loc="upper right")
    return fig


def cosine_densities(models: dict[str, dict], title: str):
    """``models[label] = record["analysis"]`` (uses ``cosine_by_rating`` and ``cosine_bins``)."""
    style.apply()
    fig, axes = plt.subplots(1, len(models), figsize=(3.2 * len(models), 3.4), sharey=True, squeeze=False)
    for ax, (label, analysis) in zip(axes[0], models.items()):
        bins = np.array(analysis["cosine_bins"])
        centres = (bins[:-1] + bins[1:]) / 2
        groups = analysis["cosine_by_rating"]
        for k, group in enumerate(groups):
            density = np.array(group["density"])
            if density.max() > 0:
                density = 0.8 * density / density.max()
            ax.fill_between(centres, k, k + density, alpha=0.6, color=style.PALETTE[k % len(style.PALETTE)])
            ax.plot(centres, k + density, lw=0.8, color="k")
        ax.set_yticks(range(len(groups)), [f"{g['group']} (n={g['n']})" for g in groups])
        ax.set_xlabel("cosine similarity")
        ax.set_title(label, fontsize=9)
    axes[0][0].set_ylabel("gold rating group")
    fig.suptitle(title)
    return fig
