"""SimCSE++'s figures (:class:`papers.simcse_pp.paper.SimCSEpp`): Figure 1 (alignment/uniformity of the Table 3
models) from the run records and Table 5's sweeps from its table, each drawn with :mod:`sentemb.plots`, saved under
the folder handed in (:func:`sentemb.plots.style.save`) and returned as paths.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from papers.simcse_pp.experiments import HEADLINE
from papers.simcse_pp.tables import TABLE3_ROWS, TABLE5_LABEL
from sentemb.plots import geometry, style


def figure1(records: dict[str, list[dict]], profile: str, folder: Path) -> list[Path]:
    """Figure 1: alignment/uniformity (STS-B) of the Table 3 models, seed 42 (the tables hold every seed)."""
    points = {}
    for name in HEADLINE:
        record = records[name][0]
        points[TABLE3_ROWS[name][0].split(" (")[0]] = {
            "alignment": record["analysis"]["alignment"],
            "uniformity": record["analysis"]["uniformity"],
            "avg_sts": record["metrics"]["summary"]["Avg."],
        }
    fig = geometry.align_uniform_points(points, "Figure 1: alignment/uniformity (STS-B dev+test)")
    runs = ", ".join(f"{n}={records[n][0]['run_id']}" for n in HEADLINE)
    return style.save(
        fig,
        folder,
        "figure1_align_uniform",
        f"profile {profile}; backbone {records['simcse'][0]['spec']['backbone']}; seed 42 runs: {runs}",
    )


def table5_figure(t5: pd.DataFrame, profile: str, folder: Path) -> list[Path]:
    """Table 5 as three panels (one per swept hyperparameter): reproduced STS-B dev (every seed) and reported; none
    before its runs have records."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    if t5.empty:
        return []
    style.apply()
    points = []
    for _, r in t5.iterrows():
        value = float(r["row"].split("=")[1])
        for v in str(r["values"]).split(";"):
            points.append({"group": r["reported_group"], "value": value, "STS-B dev": float(v), "source": "reproduced"})
        points.append(
            {"group": r["reported_group"], "value": value, "STS-B dev": r["reported"], "source": "reported (BERT-base)"}
        )
    frame = pd.DataFrame(points)
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
    for ax, group in zip(axes, TABLE5_LABEL.values()):
        sub = frame[frame["group"] == group]
        sns.lineplot(
            data=sub,
            x="value",
            y="STS-B dev",
            hue="source",
            style="source",
            markers=True,
            dashes=False,
            errorbar=None,
            ax=ax,
            legend=group == "m",
        )
        ax.set_xscale("log" if group != "m" else "linear")
        ax.set_xlabel(group)
    fig.suptitle("Table 5: STS-B dev Spearman x 100 against each hyperparameter of SimCSE++")
    fig.tight_layout()
    n_runs = len(dict.fromkeys(";".join(t5["run_ids"]).split(";")))
    return style.save(
        fig,
        folder,
        "table5_sweeps",
        f"profile {profile}; {n_runs} runs, their ids in results/simcse_pp/{profile}/table5.csv (run_ids)",
    )
