"""TNCSE's figures (the hook :meth:`papers.tncse.paper.TNCSE.figures` calls them): Figure 2 (the analytic surface of
Eq. 3), Figure 4 (Table 1's seeds), Figure 5 (its table of the LayerNorm-removal derived record) and Figure 6 (the
records' alignment/uniformity). Each draws into the folder handed in, saves with :func:`sentemb.plots.style.save` and
returns the paths; a figure that depends on stage 1 says so in its caption (``tables.STAGE1``). Nothing here trains.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from papers.tncse.tables import STAGE1, TABLE1_ROWS
from sentemb.objectives.tensor_norm import tn_surface
from sentemb.plots import geometry, style


def figure2(profile: str, folder: Path) -> list[Path]:
    """Figure 2: l_TN(k, t) of Eq. 3 over k in (0, 3] and t in [-1, 1] (analytic; no run involved)."""
    import matplotlib.pyplot as plt

    style.apply()
    k, t = np.meshgrid(np.linspace(0.02, 3.0, 150), np.linspace(-1.0, 1.0, 150))
    fig = plt.figure(figsize=(5.6, 4.4))
    ax = fig.add_subplot(projection="3d")
    ax.plot_surface(k, t, tn_surface(k, t), cmap="viridis", linewidth=0, antialiased=True)
    ax.set_xlabel("k = ||h+|| / ||h||")
    ax.set_ylabel("t = cos(h, h+)")
    ax.set_zlabel("l_TN")
    ax.set_title("Figure 2: l_TN(k, t) = sqrt(1 + k^2 - 2kt) / (1 + k)")
    return style.save(
        fig,
        folder,
        "figure2_tn_surface",
        "Eq. 3 evaluated on a 150 x 150 grid (sentemb.objectives.tensor_norm.tn_surface); minimum 0 at k = t = 1",
    )


def figure4(table1_frame: pd.DataFrame, profile: str, folder: Path) -> list[Path]:
    """Figure 4: the 7-STS average of every seed of SimCSE, the untrained pair and TNCSE (seaborn), with the
    one-sided Welch test of TNCSE against SimCSE."""
    import matplotlib.pyplot as plt
    import seaborn as sns
    from scipy import stats

    style.apply()
    avg = table1_frame[table1_frame["column"] == "Avg."]
    points = [
        {"model": r["row"], "seed": int(s), "7 STS avg.": float(v)}
        for _, r in avg.iterrows()
        for s, v in zip(str(r["seeds"]).split(";"), str(r["values"]).split(";"))
    ]
    frame = pd.DataFrame(points)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    # one row per seed (dodge) instead of jitter: seaborn jitters with numpy's global RNG, which changed the figure's
    # bytes at every execution of the notebook
    sns.stripplot(
        data=frame, x="7 STS avg.", y="model", hue="seed", size=7, jitter=False, dodge=True, ax=ax, palette="deep"
    )
    sns.pointplot(
        data=frame, x="7 STS avg.", y="model", errorbar="sd", color="k", markers="|", linestyles="none", ax=ax
    )
    title = "Figure 4: 7 STS average per seed (mean ± sd in black)"
    by_model = {m: g["7 STS avg."].to_numpy() for m, g in frame.groupby("model")}
    tncse, simcse = by_model.get(TABLE1_ROWS["tncse"][0]), by_model.get(TABLE1_ROWS["simcse"][0])
    if tncse is not None and simcse is not None and len(tncse) > 1 and len(simcse) > 1:
        p = stats.ttest_ind(tncse, simcse, equal_var=False, alternative="greater").pvalue
        title += f"\nTNCSE > SimCSE: one-sided Welch p = {p:.3g} (n = {len(tncse)}, {len(simcse)})"
    ax.set_title(title)
    ax.legend(title="seed", loc="lower right", fontsize=8)
    fig.tight_layout()
    run_ids = ";".join(avg["run_ids"])
    return style.save(fig, folder, "figure4_seeds", f"profile {profile}; runs {run_ids}; {STAGE1}")


def figure5(table: pd.DataFrame, profile: str, folder: Path) -> list[Path]:
    """Figure 5: bars = mean [CLS] norm of the last hidden state, line = STS-B dev, per number of removed LayerNorms."""
    import matplotlib.pyplot as plt

    style.apply()
    fig, ax = plt.subplots(figsize=(5.6, 3.6))
    ax.bar(table["removed_layernorms"], table["mean_cls_norm"], color=style.PALETTE[0], alpha=0.7)
    ax.set_xlabel("last LayerNorms removed")
    ax.set_ylabel("mean norm of [CLS] (last hidden state)")
    twin = ax.twinx()
    twin.plot(table["removed_layernorms"], 100 * table["stsb_dev_spearman"], "o-", color=style.PALETTE[1])
    twin.set_ylabel("STS-B dev Spearman x 100")
    ax.set_title("Figure 5: LayerNorm removal on the stage-1 encoder (no re-training)")
    fig.tight_layout()
    return style.save(
        fig,
        folder,
        "figure5_layernorm",
        f"profile {profile}; run {table['run_id'].iloc[0]}; derived record {table['derived_id'].iloc[0]}",
    )


def figure6(records: dict[str, list[dict]], profile: str, folder: Path) -> list[Path]:
    """Figure 6: alignment/uniformity (STS-B) of the trained and ensembled rows, seed 42, coloured by 7-STS avg."""
    labels = {
        "simcse": "SimCSE",
        "ensemble": "untrained pair",
        "tncse": "TNCSE",
        "tncse_wiki": "TNCSE (wiki)",
        "simcse_sickr": "SimCSE (wiki+SICK-R)",
        "tncse_single": "TNCSE-Single",
    }
    points = {
        label: {
            "alignment": records[n][0]["analysis"]["alignment"],
            "uniformity": records[n][0]["analysis"]["uniformity"],
            "avg_sts": records[n][0]["metrics"]["summary"]["Avg."],
        }
        for n, label in labels.items()
        if records.get(n)
    }
    fig = geometry.align_uniform_points(points, "Figure 6: alignment/uniformity (STS-B dev+test)")
    runs = ", ".join(f"{n}={records[n][0]['run_id']}" for n in labels if records.get(n))
    return style.save(fig, folder, "figure6_align_uniform", f"profile {profile}; seed 42 runs: {runs}; {STAGE1}")
