"""The archive's one figure style, and saving every figure as PNG (viewing) and PDF (papers)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
# seaborn's colour-blind-safe palette: its first colours are far apart in hue (two blues sat side by side before)
PALETTE = sns.color_palette("colorblind", 8).as_hex()


def apply() -> None:
    plt.rcParams.update(STYLE)
    plt.rcParams["axes.prop_cycle"] = matplotlib.cycler(color=PALETTE)


def save(fig, folder: Path, stem: str, caption: str = "") -> list[Path]:
    """Write ``stem.png`` and ``stem.pdf``; the caption (profile, runs) goes into the figure footer."""
    folder.mkdir(parents=True, exist_ok=True)
    if caption:
        fig.text(0.01, -0.02, caption, fontsize=7, color="#555555", ha="left", va="top", wrap=True)
    paths = [folder / f"{stem}.png", folder / f"{stem}.pdf"]
    for path in paths:  # no timestamps in the files, so a re-run with the same records gives the same bytes
        fig.savefig(path, metadata={"CreationDate": None} if path.suffix == ".pdf" else {"Software": None})
    plt.close(fig)
    return paths
