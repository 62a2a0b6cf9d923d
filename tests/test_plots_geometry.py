"""Figure 3-style scatter plots (SimCSE Figure 3, SimCSE++ Figure 1, TNCSE Figure 6): every point's label is readable,
i.e. no two labels overlap, also when two models lie close together (unsup. and sup. SimCSE did in SimCSE's Figure
3)."""

import itertools

import matplotlib

matplotlib.use("Agg")

from sentemb.plots.geometry import align_uniform_points  # noqa: E402

# the small profile's Figure 3: sup. and unsup. SimCSE 0.13 apart in uniformity, 0.005 in alignment
POINTS = {
    "backbone (avg.) + whitening (NLI)": (-3.86, 0.360, 74.21),
    "backbone (avg.)": (-3.84, 0.245, 78.87),
    "sup. SimCSE": (-2.73, 0.146, 77.35),
    "unsup. SimCSE": (-2.60, 0.151, 75.69),
    "backbone ([CLS])": (-1.78, 0.101, 73.33),
}


def test_labels_of_close_points_do_not_overlap():
    points = {k: {"uniformity": u, "alignment": a, "avg_sts": s} for k, (u, a, s) in POINTS.items()}
    fig = align_uniform_points(points, "Figure 3")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    boxes = {t.get_text(): t.get_window_extent(renderer) for t in ax.texts}
    assert len(boxes) == len(POINTS)
    for (a, box_a), (b, box_b) in itertools.combinations(boxes.items(), 2):
        assert not box_a.overlaps(box_b), f"the labels {a!r} and {b!r} overlap"
    figure_box = fig.bbox
    for label, box in boxes.items():  # inside the figure, not cut off
        assert figure_box.x0 <= box.x0 and box.x1 <= figure_box.x1, label
