"""SimCSE's figures, for :class:`papers.simcse.paper.SimCSE` and its notebook.

:func:`figures` draws the paper's figures from the run and derived records and the tables of
:mod:`papers.simcse.tables`, saves them under the folder it is handed and returns their paths. Nothing here trains or
evaluates.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from papers.simcse.tables import TABLE5_ROWS
from sentemb.plots import geometry, search_grid, style

FIGURE_LABELS = {
    "backbone_avg": "backbone (avg.)",
    "backbone_cls": "backbone ([CLS])",
    "unsup": "unsup. SimCSE",
    "sup": "sup. SimCSE",
}


def _caption(profile: str, records: dict[str, list[dict]], names) -> str:
    runs = ", ".join(f"{n}={records[n][0]['run_id']}" for n in names)
    first = records[next(iter(names))][0]
    return f"profile {profile}; backbone {first['spec']['backbone']}; seed {first['spec']['seed']} runs: {runs}"


def figures(
    records: dict[str, list[dict]], derived_records: dict, tables: dict[str, pd.DataFrame], profile: str, folder: Path
) -> list[Path]:
    """The paper's figures from each model's first seed (42, the official seed), saved under ``folder``; the tables
    hold every seed (Table A.1's heatmaps draw its table). Figures 3, F.1 and G.1 gain the backbone whitened on NLI
    sentences and its BERT-flow latents (the paper's BERT-whitening and BERT-flow points; the flow of fit seed 42)
    when their derived records exist."""
    first = {name: runs[0] for name, runs in records.items() if runs}
    post = _post_processed_points(derived_records)
    return (
        _figure2(first, records, profile, folder)
        + _geometry_figures(first, post, records, profile, folder)
        + _table_a1_figure(tables.get("tablea1"), profile, folder)
    )


def _post_processed_points(derived_records: dict) -> dict[str, tuple[dict, dict | None]]:
    """Label -> (geometry record, STS record) of the backbone whitened and flowed on NLI, where recorded."""
    geometry_white, sts_white = derived_records.get("whitened geometry"), derived_records.get("whitening NLI")
    geometry_flow = derived_records.get("flowed geometry")
    flows = derived_records.get("flow NLI") or []
    sts_flow = next(
        (d for d in flows if geometry_flow and d["params"]["seed"] == geometry_flow["params"]["seed"]), None
    )
    pairs = (
        ("backbone (avg.) + whitening (NLI)", geometry_white, sts_white),
        ("backbone (avg.) + BERT-flow (NLI)", geometry_flow, sts_flow),
    )
    return {label: (geometry, sts) for label, geometry, sts in pairs if geometry}


def _figure2(first: dict, records: dict, profile: str, folder: Path) -> list[Path]:
    """Figure 2's trajectories; its curves other than unsup. are core rows the small profile runs only with
    --extended: from scratch without it, the figure draws the curves whose runs have records and names the others."""
    fig2 = {
        "unsup. SimCSE": "unsup",
        "no dropout": "dropout_0",
        "fixed 0.1": "fixed_0.1",
        "delete one word": "delete_one_word",
    }
    drawn = {label: name for label, name in fig2.items() if name in first}
    fig = geometry.align_uniform_trajectories(
        {k: first[v]["training"]["trajectory"] for k, v in drawn.items()},
        "Figure 2: alignment/uniformity during training (STS-B dev)",
    )
    missing = [name for name in fig2.values() if name not in first]
    caption = _caption(profile, records, drawn.values()) + (
        f"; not run: {', '.join(missing)} (--extended)" if missing else ""
    )
    return style.save(fig, folder, "figure2_align_uniform_training", caption)


def _geometry_figures(first: dict, post: dict, records: dict, profile: str, folder: Path) -> list[Path]:
    """Figures 3, F.1 and G.1: the models' alignment/uniformity, singular values and cosines by gold rating."""
    points = {
        FIGURE_LABELS[n]: {
            "alignment": first[n]["analysis"]["alignment"],
            "uniformity": first[n]["analysis"]["uniformity"],
            "avg_sts": first[n]["metrics"]["summary"]["Avg."],
        }
        for n in TABLE5_ROWS
    }
    for label, (geometry_post, sts_post) in post.items():
        if sts_post:
            points[label] = {
                "alignment": geometry_post["result"]["alignment"],
                "uniformity": geometry_post["result"]["uniformity"],
                "avg_sts": sts_post["result"]["summary"]["Avg."],
            }
    derived_ids = "".join(
        f"; {label}: derived records " + ", ".join(d["derived_id"] for d in pair if d) for label, pair in post.items()
    )
    caption = _caption(profile, records, TABLE5_ROWS) + derived_ids
    fig = geometry.align_uniform_points(points, "Figure 3: alignment/uniformity of models")
    paths = style.save(fig, folder, "figure3_align_uniform_models", caption)
    spectra = {FIGURE_LABELS[n]: first[n]["analysis"]["singular_values"] for n in TABLE5_ROWS}
    spectra.update({label: geometry_post["result"]["singular_values"] for label, (geometry_post, _) in post.items()})
    fig = geometry.singular_spectra(spectra, "Figure F.1: singular values of STS-B embeddings")
    paths += style.save(fig, folder, "figureF1_singular_values", caption)
    dens = {FIGURE_LABELS[n]: first[n]["analysis"] for n in ("backbone_avg", "unsup", "sup")}
    dens.update({label: geometry_post["result"] for label, (geometry_post, _) in post.items()})
    fig = geometry.cosine_densities(dens, "Figure G.1: cosine similarity by gold rating (STS-B)")
    caption = _caption(profile, records, ("backbone_avg", "unsup", "sup")) + derived_ids
    return paths + style.save(fig, folder, "figureG1_cosine_by_rating", caption)


def _table_a1_figure(a1: pd.DataFrame | None, profile: str, folder: Path) -> list[Path]:
    """Table A.1's search as heatmaps (batch size x learning rate per mode), once some of its runs have records."""
    if a1 is None or a1.empty:
        return []
    a1 = a1.assign(mode=a1["mode"].map({"unsup": "unsup. SimCSE", "sup": "sup. SimCSE"}))
    fig = search_grid.score_heatmaps(
        a1,
        "mode",
        "batch_size",
        "lr",
        "stsb_dev",
        "Table A.1: batch size x learning rate (STS-B dev)",
        "STS-B dev Spearman x 100",
    )
    caption = (
        f"profile {profile}; one seed per point (42), the main runs' points their seeds' mean; red: the best point "
        "per mode; runs in tablea1.csv"
    )
    return style.save(fig, folder, "tableA1_batch_lr", caption)
