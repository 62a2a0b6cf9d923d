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


# the raw profile's Figure 3, whose labels never settle: adjustText ran until its default 1 s time limit
UNSETTLED = {
    "backbone (avg.) + whitening (NLI)": (-3.87, 0.643, 60.89),
    "backbone (avg.) + BERT-flow (NLI)": (-3.69, 0.593, 58.82),
    "unsup. SimCSE": (-1.58, 0.157, 47.08),
    "backbone (avg.)": (-0.99, 0.120, 49.15),
    "sup. SimCSE": (-1.25, 0.101, 48.77),
    "backbone ([CLS])": (-0.45, 0.041, 46.74),
}


def _label_positions(monkeypatch, seconds_per_tick: float) -> list[tuple[float, float]]:
    """The labels' positions after layout, on a machine whose clock advances ``seconds_per_tick`` per reading."""
    import adjustText

    clock = itertools.count()
    monkeypatch.setattr(adjustText, "timer", lambda: next(clock) * seconds_per_tick)
    points = {k: {"uniformity": u, "alignment": a, "avg_sts": s} for k, (u, a, s) in UNSETTLED.items()}
    fig = align_uniform_points(points, "Figure 3")
    return [tuple(t.get_position()) for t in fig.axes[0].texts]


def test_the_label_layout_does_not_depend_on_the_machines_speed(monkeypatch):
    """A slow or loaded machine (a clock that races) gets the same figure as a fast one: the layout runs a fixed number
    of iterations, not until a wall-clock limit."""
    assert _label_positions(monkeypatch, 0.5) == _label_positions(monkeypatch, 1e-4)
