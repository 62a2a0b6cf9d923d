"""TNCSE's tensor norm objectives (Eq. 1, 3, 4-8) against values and loops written out by hand."""

import math

import numpy as np
import pytest
import torch

from sentemb.objectives.tensor_norm import (
    NEGATIVE_COSINE_FLOOR,
    TNCSELoss,
    icnce,
    ictn,
    interleave_views,
    interleaved_infonce,
    partner_rows,
    tensor_norm_distance,
    tensor_norm_loss,
    tn_surface,
)

# ---- plain-Python references (lists of floats, no torch) -------------------------------------


def _norm(x):
    return math.sqrt(sum(v * v for v in x))


def _cos(a, b):
    return sum(x * y for x, y in zip(a, b)) / (_norm(a) * _norm(b))


def _ltn(a, b):
    return _norm([x - y for x, y in zip(a, b)]) / (_norm(a) + _norm(b))


def _nce(anchors, candidates, tau):
    """Eq. 4 on interleaved rows: positive = the other view (r XOR 1), negatives = all rows but r."""
    n = len(anchors)
    total = 0.0
    for r in range(n):
        positive = r + 1 if r % 2 == 0 else r - 1
        numerator = math.exp(_cos(anchors[r], candidates[positive]) / tau)
        denominator = sum(math.exp(_cos(anchors[r], candidates[j]) / tau) for j in range(n) if j != r)
        total += -math.log(numerator / denominator)
    return total / n


def _tn(h_anchor, h_positive, p_anchor, p_positive, halve=False, clamp=False):
    """Eq. 6: mean over sentences m of -log cos(h_i[2m], h_j[2m+1]) * l_TN(p_i[2m], p_j[2m+1])."""
    terms = []
    for m in range(len(h_anchor) // 2):
        c = _cos(h_anchor[2 * m], h_positive[2 * m + 1])
        if clamp and c < 0:
            c = 1e-4
        norm_term = _ltn(p_anchor[2 * m], p_positive[2 * m + 1])
        if halve:
            norm_term /= 2
        terms.append(-math.log(c) * norm_term)
    return sum(terms) / len(terms)


# Two sentences (B = 2), interleaved rows [s0 view a, s0 view b, s1 view a, s1 view b], d = 3.
H1 = [[1.0, 0.5, -0.2], [0.9, 0.6, -0.1], [-0.3, 1.0, 0.4], [-0.2, 0.8, 0.5]]
H2 = [[0.8, 0.4, 0.1], [1.1, 0.3, -0.3], [-0.5, 0.9, 0.2], [-0.1, 1.2, 0.3]]
P1 = [[0.5, -0.7, 0.2], [0.4, -0.6, 0.3], [0.9, 0.1, -0.8], [0.7, 0.2, -0.9]]
P2 = [[-0.3, 0.6, 0.1], [0.2, -0.9, 0.4], [0.6, 0.5, -0.2], [0.1, 0.3, -0.7]]


def _t(rows, requires_grad=False):
    return torch.tensor(rows, dtype=torch.float64, requires_grad=requires_grad)


# ---- Eq. 1: l_TN on vectors ------------------------------------------------------------------


def test_l_tn_of_identical_vectors_is_zero():
    u = torch.tensor([[3.0, -1.0, 2.0], [0.5, 0.5, 0.5]])
    assert torch.equal(tensor_norm_distance(u, u.clone()), torch.zeros(2))


def test_l_tn_matches_eq1_by_hand():
    # u = (3, 4, 0), v = (0, 0, 5): ||u - v|| = sqrt(9 + 16 + 25) = sqrt(50), ||u|| + ||v|| = 10.
    got = tensor_norm_distance(torch.tensor([3.0, 4.0, 0.0]), torch.tensor([0.0, 0.0, 5.0]))
    assert got.item() == pytest.approx(math.sqrt(50) / 10, rel=1e-6)
    u, v = _t(P1), _t(P2)
    expected = [_ltn(a, b) for a, b in zip(P1, P2)]
    assert tensor_norm_distance(u, v).tolist() == pytest.approx(expected, rel=1e-12)


def test_l_tn_is_symmetric_scale_invariant_and_bounded():
    g = torch.Generator().manual_seed(0)
    u, v = torch.randn(6, 5, generator=g, dtype=torch.float64), torch.randn(6, 5, generator=g, dtype=torch.float64)
    d = tensor_norm_distance(u, v)
    assert torch.allclose(d, tensor_norm_distance(v, u))
    assert torch.allclose(d, tensor_norm_distance(2.5 * u, 2.5 * v))
    assert bool(((d >= 0) & (d <= 1)).all())
    # Opposite directions: ||u + c u|| = (1 + c)||u|| = ||u|| + ||c u||, so l_TN = 1 for every c > 0.
    assert torch.allclose(tensor_norm_distance(u, -0.3 * u), torch.ones(6, dtype=torch.float64))


# ---- Eq. 3 / Figure 2: the surface l_TN(k, t) --------------------------------------------------


@pytest.mark.parametrize(
    "k, t, expected",
    [
        (1.0, 1.0, 0.0),  # sqrt(0) / 2
        (1.0, 0.0, math.sqrt(2) / 2),  # sqrt(2) / 2
        (1.0, -1.0, 1.0),  # sqrt(4) / 2
        (2.0, 1.0, 1 / 3),  # sqrt(1 + 4 - 4) / 3
        (3.0, 0.5, math.sqrt(7) / 4),  # sqrt(1 + 9 - 3) / 4
        (0.5, 0.0, math.sqrt(1.25) / 1.5),  # sqrt(1 + 0.25) / 1.5
        (4.0, -0.5, math.sqrt(21) / 5),  # sqrt(1 + 16 + 4) / 5
    ],
)
def test_surface_at_hand_computed_points(k, t, expected):
    assert float(tn_surface(k, t)) == pytest.approx(expected, abs=1e-12)
    assert tn_surface(torch.tensor(k, dtype=torch.float64), t).item() == pytest.approx(expected, abs=1e-12)


def test_surface_is_symmetric_in_k_and_inverse_k():
    k = np.array([0.2, 0.5, 1.7, 3.0])
    t = np.array([-0.9, 0.1, 0.6, 0.99])
    assert np.allclose(tn_surface(k, t), tn_surface(1 / k, t))


def test_surface_on_a_figure2_grid_numpy_and_torch():
    k_grid, t_grid = np.meshgrid(np.linspace(0.1, 3.0, 30), np.linspace(-1.0, 1.0, 21))
    z = tn_surface(k_grid, t_grid)
    assert isinstance(z, np.ndarray) and z.shape == k_grid.shape and np.isfinite(z).all()
    i, j = np.unravel_index(np.argmin(z), z.shape)
    assert (k_grid[i, j], t_grid[i, j]) == pytest.approx((1.0, 1.0))  # minimum at k = t = 1 (paper, Fig. 2)
    assert z.min() == pytest.approx(0.0, abs=1e-12)
    assert np.allclose(z[0], 1.0)  # t = -1 row
    zt = tn_surface(torch.from_numpy(k_grid), torch.from_numpy(t_grid))
    assert isinstance(zt, torch.Tensor) and np.allclose(zt.numpy(), z)


def test_surface_equals_eq1_through_law_of_cosines():
    # Eq. 2 -> Eq. 3: l_TN(h, h+) = l_TN(k = ||h+||/||h||, t = cos(h, h+)).
    for a, b in zip(H1 + P1, H2 + P2):
        via_surface = float(tn_surface(_norm(b) / _norm(a), _cos(a, b)))
        assert via_surface == pytest.approx(_ltn(a, b), rel=1e-12)


# ---- layout helpers --------------------------------------------------------------------------


def test_interleave_and_partner_rows():
    a = torch.tensor([[1.0, 1.0], [2.0, 2.0]])
    b = torch.tensor([[-1.0, -1.0], [-2.0, -2.0]])
    assert interleave_views(a, b).tolist() == [[1.0, 1.0], [-1.0, -1.0], [2.0, 2.0], [-2.0, -2.0]]
    assert partner_rows(6).tolist() == [1, 0, 3, 2, 5, 4]


def test_shapes_are_checked():
    with pytest.raises(ValueError):
        interleaved_infonce(torch.randn(3, 4), torch.randn(3, 4))  # odd number of rows
    with pytest.raises(ValueError):
        tensor_norm_loss(torch.randn(4, 3), torch.randn(4, 3), torch.randn(2, 3), torch.randn(2, 3))
    with pytest.raises(ValueError):
        interleave_views(torch.randn(2, 3), torch.randn(3, 3))
    with pytest.raises(ValueError):
        TNCSELoss(temperature=0.0)


# ---- Eq. 4-8 on one sentence (2 x 3 tensors), worked out by hand -------------------------------


def test_one_sentence_two_by_three_by_hand():
    h1 = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    h2 = torch.tensor([[0.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    p1 = torch.tensor([[3.0, 4.0, 0.0], [0.0, 0.0, 1.0]])
    p2 = torch.tensor([[1.0, 0.0, 0.0], [0.0, 3.0, 4.0]])
    # 1->2: cos(h1[0], h2[1]) = 1/sqrt(2); l_TN(p1[0], p2[1]) = ||(3, 1, -4)|| / (5 + 5) = sqrt(26)/10.
    # 2->1: cos(h2[0], h1[1]) = 1/sqrt(2); l_TN(p2[0], p1[1]) = ||(1, 0, -1)|| / (1 + 1) = sqrt(2)/2.
    minus_log_cos = 0.5 * math.log(2)
    tn_12 = minus_log_cos * math.sqrt(26) / 10
    tn_21 = minus_log_cos * math.sqrt(2) / 2
    assert tensor_norm_loss(h1, h2, p1, p2).item() == pytest.approx(tn_12, rel=1e-6)
    assert tensor_norm_loss(h2, h1, p2, p1).item() == pytest.approx(tn_21, rel=1e-6)
    assert ictn(h1, h2, p1, p2).item() == pytest.approx(tn_12 + tn_21, rel=1e-6)
    assert ictn(h1, h2, p1, p2, halve_norm_term=True).item() == pytest.approx((tn_12 + tn_21) / 2, rel=1e-6)
    # One sentence: after the own row is masked, each row's only candidate is its positive -> -log 1 = 0.
    assert interleaved_infonce(h1, h1).item() == pytest.approx(0.0, abs=1e-7)
    assert icnce(h1, h2).item() == pytest.approx(0.0, abs=1e-7)
    terms = TNCSELoss().terms(h1, h2, p1, p2)
    assert list(terms) == ["nce_1", "nce_2", "icnce", "tn_1_to_2", "tn_2_to_1"]
    assert TNCSELoss()(h1, h2, p1, p2).item() == pytest.approx(tn_12 + tn_21, rel=1e-6)


# ---- Eq. 4-8 on two sentences (4 x 3 tensors) against loop-written sums -------------------------


@pytest.mark.parametrize("tau", [0.05, 1.0])
def test_infonce_and_icnce_match_eq4_eq5_written_out(tau):
    assert interleaved_infonce(_t(H1), _t(H1), tau).item() == pytest.approx(_nce(H1, H1, tau), rel=1e-10)
    assert interleaved_infonce(_t(H2), _t(H2), tau).item() == pytest.approx(_nce(H2, H2, tau), rel=1e-10)
    assert icnce(_t(H1), _t(H2), tau).item() == pytest.approx(_nce(H1, H2, tau), rel=1e-10)


@pytest.mark.parametrize("halve", [False, True])
def test_tn_and_ictn_match_eq6_eq7_written_out(halve):
    h1, h2, p1, p2 = _t(H1), _t(H2), _t(P1), _t(P2)
    tn_12 = _tn(H1, H2, P1, P2, halve=halve)
    tn_21 = _tn(H2, H1, P2, P1, halve=halve)
    assert tensor_norm_loss(h1, h2, p1, p2, halve_norm_term=halve).item() == pytest.approx(tn_12, rel=1e-10)
    assert tensor_norm_loss(h2, h1, p2, p1, halve_norm_term=halve).item() == pytest.approx(tn_21, rel=1e-10)
    assert ictn(h1, h2, p1, p2, halve_norm_term=halve).item() == pytest.approx(tn_12 + tn_21, rel=1e-10)
    assert tn_12 != pytest.approx(tn_21)  # the two directions use different view pairs


@pytest.mark.parametrize("halve, clamp", [(False, False), (True, True)])
def test_total_matches_eq8_written_out(halve, clamp):
    tau = 0.05
    expected = (
        _nce(H1, H1, tau)
        + _nce(H2, H2, tau)
        + _nce(H1, H2, tau)
        + _tn(H1, H2, P1, P2, halve, clamp)
        + _tn(H2, H1, P2, P1, halve, clamp)
    )
    loss = TNCSELoss(tau, halve_norm_term=halve, clamp_negative_cosine=clamp)
    got = loss(_t(H1), _t(H2), _t(P1), _t(P2))
    assert got.item() == pytest.approx(expected, rel=1e-10)
    assert got.item() == pytest.approx(sum(v.item() for v in loss.terms(_t(H1), _t(H2), _t(P1), _t(P2)).values()))


# ---- the official code's clamp of negative cosines ---------------------------------------------


def test_negative_cosine_clamp_value_and_no_gradient_through_the_factor():
    # Sentence 0: cos(h1[0], h2[1]) = cos((1,0,0), (-1,0.5,0)) < 0 -> clamped.
    # Sentence 1: cos(h1[2], h2[3]) = cos((0,1,0), (0,1,1)) = 1/sqrt(2) > 0 -> kept.
    h1 = _t([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], requires_grad=True)
    h2 = _t([[0.0, 1.0, 0.0], [-1.0, 0.5, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 1.0]], requires_grad=True)
    p1 = _t(P1, requires_grad=True)
    p2 = _t(P2, requires_grad=True)
    loss = tensor_norm_loss(h1, h2, p1, p2, clamp_negative_cosine=True)
    expected = (-math.log(NEGATIVE_COSINE_FLOOR) * _ltn(P1[0], P2[1]) + 0.5 * math.log(2) * _ltn(P1[2], P2[3])) / 2
    assert -math.log(NEGATIVE_COSINE_FLOOR) == pytest.approx(4 * math.log(10))
    assert loss.item() == pytest.approx(expected, rel=1e-10)
    loss.backward()
    # The clamped factor is a constant: nothing reaches h1[0] or h2[1] ...
    assert torch.equal(h1.grad[0], torch.zeros(3, dtype=torch.float64))
    assert torch.equal(h2.grad[1], torch.zeros(3, dtype=torch.float64))
    # ... while the kept pair's cosine and both pairs' pooler rows do get gradients.
    assert h1.grad[2].abs().sum() > 0 and h2.grad[3].abs().sum() > 0
    assert p1.grad[0].abs().sum() > 0 and p2.grad[1].abs().sum() > 0
    # Rows outside the pairs (view b of encoder i, view a of encoder j) play no part in L_TN(i -> j).
    assert torch.equal(h1.grad[1], torch.zeros(3, dtype=torch.float64))
    assert torch.equal(p2.grad[0], torch.zeros(3, dtype=torch.float64))


def test_paper_default_takes_log_of_a_negative_cosine_literally():
    h1 = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    h2 = torch.tensor([[0.0, 1.0, 0.0], [-1.0, 0.5, 0.0]])
    p = torch.tensor([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0]])
    assert torch.isnan(tensor_norm_loss(h1, h2, p, p))
    assert torch.isfinite(tensor_norm_loss(h1, h2, p, p, clamp_negative_cosine=True))


# ---- gradients --------------------------------------------------------------------------------


def test_total_gradients_are_finite():
    g = torch.Generator().manual_seed(0)
    base_h, base_p = torch.randn(4, 16, generator=g), torch.randn(4, 16, generator=g)
    views = []
    for base in (base_h, base_h, base_p, base_p):  # h1, h2, p1, p2: two dropout-like views of 4 sentences
        a = base + 0.05 * torch.randn(base.shape, generator=g)
        b = base + 0.05 * torch.randn(base.shape, generator=g)
        views.append(interleave_views(a, b).requires_grad_(True))
    loss = TNCSELoss()(*views)
    loss.backward()
    assert torch.isfinite(loss)
    for x in views:
        assert x.grad is not None and torch.isfinite(x.grad).all() and x.grad.abs().sum() > 0


def test_gradients_finite_with_clamp_on_random_inputs_and_at_identical_pooler_rows():
    g = torch.Generator().manual_seed(1)
    inputs = [torch.randn(8, 6, generator=g).requires_grad_(True) for _ in range(4)]
    TNCSELoss(halve_norm_term=True, clamp_negative_cosine=True)(*inputs).backward()
    assert all(torch.isfinite(x.grad).all() for x in inputs)
    # l_TN at u = v: ||u - v|| = 0 is not differentiable; torch's subgradient 0 keeps it finite.
    h = torch.tensor([[1.0, 0.2, 0.0], [0.9, 0.3, 0.1]], requires_grad=True)
    p = torch.tensor([[0.5, -0.5, 1.0], [0.5, -0.5, 1.0]], requires_grad=True)
    ictn(h, h, p, p).backward()
    assert torch.isfinite(h.grad).all() and torch.isfinite(p.grad).all()
