"""SimCSE's InfoNCE losses against sums written out by hand (Eq. 4, 5, 8)."""

import math

import pytest
import torch

from sentemb.objectives import SupervisedInfoNCE, UnsupervisedInfoNCE


def _cos(a, b):
    return float(torch.dot(a, b) / (a.norm() * b.norm()))


def test_unsupervised_infonce_two_orthogonal_pairs():
    z = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    # sim(i,i)=1, sim(i,j)=0, tau=1: l_i = -log(e / (e + 1)) for both rows.
    expected = -math.log(math.e / (math.e + 1.0))
    assert UnsupervisedInfoNCE(temperature=1.0)(z, z).item() == pytest.approx(expected, rel=1e-6)


def test_unsupervised_infonce_matches_eq4_written_out():
    z1 = torch.tensor([[1.0, 2.0, 0.0], [0.5, -1.0, 1.0], [0.0, 1.0, 1.0]])
    z2 = torch.tensor([[1.0, 1.5, 0.5], [0.0, -1.0, 1.0], [1.0, 0.0, 1.0]])
    tau = 0.05
    losses = []
    for i in range(3):
        num = math.exp(_cos(z1[i], z2[i]) / tau)
        den = sum(math.exp(_cos(z1[i], z2[j]) / tau) for j in range(3))
        losses.append(-math.log(num / den))
    got = UnsupervisedInfoNCE(tau)(z1, z2).item()
    assert got == pytest.approx(sum(losses) / 3, rel=1e-5)


@pytest.mark.parametrize("alpha", [1.0, 0.5, 2.0])
def test_supervised_infonce_matches_eq8_written_out(alpha):
    z1 = torch.tensor([[1.0, 0.2], [0.3, 1.0], [-1.0, 0.5]])
    z2 = torch.tensor([[0.9, 0.1], [0.1, 1.0], [-0.8, 0.9]])
    z3 = torch.tensor([[-1.0, 0.3], [1.0, -0.2], [0.7, 0.7]])
    tau = 0.1
    losses = []
    for i in range(3):
        num = math.exp(_cos(z1[i], z2[i]) / tau)
        den = sum(math.exp(_cos(z1[i], z2[j]) / tau) + (alpha if i == j else 1.0) * math.exp(_cos(z1[i], z3[j]) / tau)
                  for j in range(3))
        losses.append(-math.log(num / den))
    got = SupervisedInfoNCE(tau, alpha)(z1, z2, z3).item()
    assert got == pytest.approx(sum(losses) / 3, rel=1e-5)


def test_supervised_alpha_one_is_eq5_and_hard_negatives_raise_the_loss():
    torch.manual_seed(0)
    z1, z2, z3 = torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 8)
    unsup = UnsupervisedInfoNCE(0.05)(z1, z2)
    sup = SupervisedInfoNCE(0.05, 1.0)(z1, z2, z3)
    assert sup.item() > unsup.item()  # extra terms in the denominator


def test_losses_have_gradients_and_reject_bad_alpha():
    z1 = torch.randn(3, 4, requires_grad=True)
    UnsupervisedInfoNCE()(z1, z1.detach() + 0.1).backward()
    assert z1.grad is not None and torch.isfinite(z1.grad).all()
    with pytest.raises(ValueError):
        SupervisedInfoNCE(alpha=0.0)
