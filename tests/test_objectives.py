"""SimCSE's InfoNCE losses against sums written out by hand (Eq. 4, 5, 8)."""

import math
import random

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
        den = sum(
            math.exp(_cos(z1[i], z2[j]) / tau) + (alpha if i == j else 1.0) * math.exp(_cos(z1[i], z3[j]) / tau)
            for j in range(3)
        )
        losses.append(-math.log(num / den))
    got = SupervisedInfoNCE(tau, alpha)(z1, z2, z3).item()
    assert got == pytest.approx(sum(losses) / 3, rel=1e-5)


def test_dot_product_similarity_is_table_d1_written_out():
    """Table D.1's "N/A (dot product)": logits are the raw dot products, with no normalisation and no temperature."""
    z1 = torch.tensor([[1.0, 2.0], [0.5, -1.0]])
    z2 = torch.tensor([[1.0, 1.5], [0.0, -1.0]])
    z3 = torch.tensor([[-1.0, 0.3], [1.0, -0.2]])
    dot = lambda a, b: float(torch.dot(a, b))  # noqa: E731
    unsup = [
        -math.log(math.exp(dot(z1[i], z2[i])) / sum(math.exp(dot(z1[i], z2[j])) for j in range(2))) for i in range(2)
    ]
    assert UnsupervisedInfoNCE(0.05, "dot")(z1, z2).item() == pytest.approx(sum(unsup) / 2, rel=1e-5)
    sup = [
        -math.log(
            math.exp(dot(z1[i], z2[i]))
            / sum(math.exp(dot(z1[i], z2[j])) + math.exp(dot(z1[i], z3[j])) for j in range(2))
        )
        for i in range(2)
    ]
    assert SupervisedInfoNCE(0.05, 1.0, "dot")(z1, z2, z3).item() == pytest.approx(sum(sup) / 2, rel=1e-5)
    assert UnsupervisedInfoNCE(0.05, "dot")(z1, z2).item() != pytest.approx(UnsupervisedInfoNCE(0.05)(z1, z2).item())
    with pytest.raises(ValueError, match="similarity"):
        UnsupervisedInfoNCE(0.05, "l2")(z1, z2)


def test_parameters_added_later_keep_old_run_ids_at_their_default():
    from sentemb.errors import ConfigError
    from sentemb.objectives.registry import build_objective
    from sentemb.spec import RunSpec

    old = {
        "profile": "smoke",
        "backbone": "tiny-random-bert",
        "objective": "simcse_sup",
        "train_data": "x",
        "steps": 2,
        "objective_params": {"temperature": 0.05, "hard_negative_alpha": 1.0},
    }
    spec = RunSpec.from_dict(old)
    assert "similarity" not in spec.objective_params  # left out at its default: the id of a record made before
    assert (
        spec.run_id
        == RunSpec.from_dict({**old, "objective_params": {**old["objective_params"], "similarity": "cosine"}}).run_id
    )
    dot = RunSpec.from_dict({**old, "objective_params": {"similarity": "dot"}})
    assert dot.objective_params["similarity"] == "dot" and dot.run_id != spec.run_id
    from sentemb.models.encoder import SentenceEncoder

    objective = build_objective(
        "simcse_sup", spec.objective_params, SentenceEncoder.from_name("tiny-random-bert", "cls", seed=0), max_len=8
    )
    assert objective.loss.similarity == "cosine"  # built with the default it leaves out
    with pytest.raises(ConfigError, match="uses no temperature"):
        RunSpec.from_dict({**old, "objective_params": {"similarity": "dot", "temperature": 0.1}})


@pytest.mark.parametrize(
    "augmentation, check",
    [
        ("none", lambda x, v: v == x),
        ("delete_one_word", lambda x, v: len(v.split()) == len(x.split()) - 1),
        ("crop_0.3", lambda x, v: len(v.split()) == 7 and v in x),  # a contiguous 70% of 10 words
        ("word_deletion_0.2", lambda x, v: len(v.split()) == 8 and v != x),
        (
            "synonym_replacement",
            lambda x, v: len(v.split()) == 10 and sum(a != b for a, b in zip(x.split(), v.split())) == 1,
        ),
    ],
)
def test_table1_augmentation_is_the_second_view_only(augmentation, check):
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.objectives.registry import build_objective

    objective = build_objective(
        "simcse_unsup",
        {"augmentation": augmentation},
        SentenceEncoder.from_name("tiny-random-bert", "cls_before_pooler", seed=0),
        max_len=16,
    )
    seen = []
    objective.embed = lambda sentences: (seen.append(list(sentences)), torch.randn(len(sentences), 8))[1]
    rows = ["the quick brown fox jumps over the lazy dog today", "a small house stands near the old river bank now"]
    objective(rows, random.Random(0))
    first, second = seen[0][:2], seen[0][2:]
    assert first == rows  # x_i as it is, x_i^+ = g(x_i)
    assert all(check(x, v) for x, v in zip(rows, second)), second
    objective(rows, random.Random(0))
    assert seen[1] == seen[0]  # a deterministic function of the step's rng


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


# -- SimCSE++: decoupled / off-dropout InfoNCE (Eq. 2-3) ---------------------------------------------------
from sentemb.models.projector import ExpanderProjector  # noqa: E402
from sentemb.objectives.barlow_twins import BarlowTwins, correlation_rank, cross_correlation  # noqa: E402
from sentemb.objectives.dimension_contrastive import DimensionWiseContrastive  # noqa: E402
from sentemb.objectives.off_dropout_infonce import (  # noqa: E402
    DecoupledInfoNCE,
    add_gaussian_noise,
    encode_without_dropout,
    mean_of_dropout_samples,
)
from sentemb.objectives.vicreg import VICReg, variance_hinge  # noqa: E402

Z1 = torch.tensor([[1.0, 2.0, 0.0], [0.5, -1.0, 1.0], [0.0, 1.0, 1.0]])
Z2 = torch.tensor([[1.0, 1.5, 0.5], [0.0, -1.0, 1.0], [1.0, 0.0, 1.0]])
Z0 = torch.tensor([[0.9, 1.8, 0.2], [0.4, -0.8, 1.1], [0.1, 1.2, 0.8]])


@pytest.mark.parametrize("m", [1.0, 0.9])
def test_off_dropout_infonce_matches_eq3_written_out(m):
    tau = 0.05
    losses = []
    for i in range(3):
        pos = math.exp(_cos(Z1[i], Z2[i]) / tau)
        neg = sum(math.exp(_cos(Z0[i], Z0[j]) / tau) for j in range(3) if j != i)
        losses.append(-math.log(pos / (pos + m * neg)))
    got = DecoupledInfoNCE(tau, m)(Z1, Z2, Z0, Z0).item()
    assert got == pytest.approx(sum(losses) / 3, rel=1e-5)


def test_decoupled_infonce_reduces_to_simcse_and_official_variant():
    assert DecoupledInfoNCE(0.05)(Z1, Z2).item() == pytest.approx(UnsupervisedInfoNCE(0.05)(Z1, Z2).item(), rel=1e-6)
    tau, m = 0.1, 0.9
    losses = []
    for i in range(3):
        pos = m * _cos(Z1[i], Z2[i]) / tau  # the official code scales the positive logit
        neg = [_cos(Z0[i], Z0[j]) / tau for j in range(3) if j != i]
        losses.append(-pos + math.log(math.exp(pos) + sum(math.exp(v) for v in neg)))
    got = DecoupledInfoNCE(tau, m, trade_off="official")(Z1, Z2, Z0, Z0).item()
    assert got == pytest.approx(sum(losses) / 3, rel=1e-5)


def test_noise_helpers():
    g = torch.Generator().manual_seed(0)
    noisy = add_gaussian_noise(torch.zeros(4000, 4), variance=0.1, generator=g)
    assert noisy.var().item() == pytest.approx(0.1, rel=0.05)
    calls = iter([torch.ones(2, 2), 3 * torch.ones(2, 2)])
    assert torch.equal(mean_of_dropout_samples(lambda: next(calls), k=2), 2 * torch.ones(2, 2))


def test_off_dropout_encoding_switches_dropout_off_and_back():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
    net.train()
    x = torch.randn(3, 4)
    off = encode_without_dropout(net, lambda: net(x))
    assert torch.allclose(off, net[0](x)) and off.requires_grad  # no dropout, gradients kept
    assert net[1].training  # restored


# -- SimCSE++ DCL (Eq. 5-6) -----------------------------------------------------------------------------
def _standardise(column):
    n = len(column)
    mean = sum(column) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in column) / (n - 1))
    return [(v - mean) / std for v in column]


def test_dcl_matches_eq5_written_out():
    tau = 5.0
    a = [_standardise(Z1[:, c].tolist()) for c in range(3)]
    b = [_standardise(Z2[:, c].tolist()) for c in range(3)]
    total = 0.0
    for c in range(3):
        s = [sum(a[c][i] * b[d][i] for i in range(3)) / tau for d in range(3)]
        total += -math.log(math.exp(s[c]) / sum(math.exp(v) for v in s))
    assert DimensionWiseContrastive(tau)(Z1, Z2).item() == pytest.approx(total, rel=1e-5)


def test_dcl_official_variant_is_scaled_batchnorm_form():
    torch.manual_seed(1)
    z1, z2 = torch.randn(8, 5), torch.randn(8, 5)
    bn = torch.nn.BatchNorm1d(5, affine=False)
    c = bn(z1).T @ bn(z2) / 8 / 5.0
    expected = torch.nn.functional.cross_entropy(c, torch.arange(5))
    assert DimensionWiseContrastive(5.0, variant="official")(z1, z2).item() == pytest.approx(expected.item(), rel=1e-5)


def test_dcl_forms_differ_by_the_documented_factors():
    """The code's form is the paper's Eq. 5 with tau_DCL multiplied by N - 1 (BatchNorm's biased std and the /N
    together) and the sum over the D dimensions replaced by their mean (up to BatchNorm's eps)."""
    torch.manual_seed(2)
    n, d, tau = 16, 6, 5.0
    z1, z2 = torch.randn(n, d) * 3 + 1, torch.randn(n, d) * 2
    paper, official = DimensionWiseContrastive(tau, "paper"), DimensionWiseContrastive(tau, "official")
    torch.testing.assert_close(official.similarity(z1, z2), paper.similarity(z1, z2) / (n - 1), rtol=1e-4, atol=1e-6)
    rescaled = DimensionWiseContrastive(tau * (n - 1), "paper")(z1, z2) / d
    assert official(z1, z2).item() == pytest.approx(rescaled.item(), rel=1e-4)
    assert paper(z1, z2).item() > 2 * official(z1, z2).item()  # the same tau weighs the paper's form far more


# -- Barlow Twins (non-contrastive Eq. 2, SimCSE++ Eq. 4) and the rank bottleneck ---------------------------
def test_barlow_twins_is_zero_for_identity_correlation():
    z = torch.tensor([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]])  # centred, uncorrelated columns
    assert torch.allclose(cross_correlation(z, z), torch.eye(2), atol=1e-6)
    assert BarlowTwins(off_diagonal_weight=0.5)(z, z).item() == pytest.approx(0.0, abs=1e-10)


def test_barlow_twins_matches_eq2_written_out():
    lam = 0.3

    def pearson(x, y):
        mx, my = sum(x) / len(x), sum(y) / len(y)
        num = sum((a - mx) * (b - my) for a, b in zip(x, y))
        return num / math.sqrt(sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))

    c = [[pearson(Z1[:, i].tolist(), Z2[:, j].tolist()) for j in range(3)] for i in range(3)]
    expected = sum((1 - c[i][i]) ** 2 for i in range(3)) + lam * sum(
        c[i][j] ** 2 for i in range(3) for j in range(3) if i != j
    )
    assert BarlowTwins(lam)(Z1, Z2).item() == pytest.approx(expected, rel=1e-5)


def test_correlation_rank_is_at_most_the_batch_size_and_padding_raises_it():
    torch.manual_seed(2)
    za, zb = torch.randn(8, 32), torch.randn(8, 32)
    assert correlation_rank(za, zb) <= 8
    assert correlation_rank(za, zb, centred=True) <= 7
    g = torch.Generator().manual_seed(0)
    padded = torch.cat([za, torch.randn(16, 32, generator=g)]), torch.cat([zb, torch.randn(16, 32, generator=g)])
    assert correlation_rank(*padded) > 8
    loss = BarlowTwins(pad=16, generator=torch.Generator().manual_seed(0))(za, zb)
    assert torch.isfinite(loss)


# -- VICReg (non-contrastive Eq. 3) and the projector -----------------------------------------------------
def test_vicreg_variance_term_is_zero_when_every_std_is_at_least_one():
    z = torch.tensor([[2.0, -3.0], [-2.0, 3.0], [2.0, 3.0], [-2.0, -3.0]])
    assert variance_hinge(z).item() == 0.0


def test_vicreg_matches_eq3_written_out():
    n, d = 3, 3
    inv = sum(sum((Z1[i, k] - Z2[i, k]).item() ** 2 for k in range(d)) for i in range(n)) / n

    def var_term(z):
        total = 0.0
        for k in range(d):
            col = z[:, k].tolist()
            mean = sum(col) / n
            std = math.sqrt(sum((v - mean) ** 2 for v in col) / (n - 1) + 1e-4)
            total += max(0.0, 1.0 - std)
        return total / d

    def cov_term(z):
        cols = [z[:, k].tolist() for k in range(d)]
        means = [sum(c) / n for c in cols]
        cov = [
            [sum((cols[a][i] - means[a]) * (cols[b][i] - means[b]) for i in range(n)) / (n - 1) for b in range(d)]
            for a in range(d)
        ]
        return sum(cov[a][b] ** 2 for a in range(d) for b in range(d) if a != b) / d

    expected = 2.0 * inv + 3.0 * (var_term(Z1) + var_term(Z2)) + 0.5 * (cov_term(Z1) + cov_term(Z2))
    assert VICReg(2.0, 3.0, 0.5)(Z1, Z2).item() == pytest.approx(expected, rel=1e-5)


def test_projector_shape():
    projector = ExpanderProjector(16, width=32)
    assert projector(torch.randn(4, 16)).shape == (4, 32)
    assert [type(m).__name__ for m in projector] == [
        "Linear",
        "BatchNorm1d",
        "ReLU",
        "Linear",
        "BatchNorm1d",
        "ReLU",
        "Linear",
    ]


@pytest.mark.parametrize(
    "name, rows",
    [
        ("simcse_unsup", ["the quick brown fox jumps", "a small house near the river", "two dogs run on the beach"]),
        (
            "simcse_sup",
            [("a man plays", "someone plays", "nobody plays"), ("a cat sleeps", "an animal rests", "a dog runs")],
        ),
    ],
)
def test_auxiliary_mlm_adds_lambda_times_the_loss_of_a_head_tied_to_the_input_embeddings(name, rows):
    """SimCSE Table D.2: L = L_contrastive + lambda * L_MLM; the fresh head's decoder is the input embedding matrix."""
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.objectives.registry import build_objective

    def loss(weight):
        encoder = SentenceEncoder.from_name("tiny-random-bert", "cls", seed=0, dropout=0.0)  # deterministic passes
        torch.manual_seed(0)
        objective = build_objective(name, {"mlm_weight": weight} if weight else {}, encoder, max_len=16)
        return objective, objective(rows, random.Random(0))

    plain, l0 = loss(0.0)
    assert plain.mlm_loss is None
    objective, l1 = loss(0.1)
    _, l2 = loss(0.2)
    head = objective.mlm_loss.head
    assert head.decoder.weight is objective.encoder.backbone.get_input_embeddings().weight
    assert (l1 - l0).item() > 0 and (l2 - l0).item() == pytest.approx(2 * (l1 - l0).item(), rel=1e-4)
    l1.backward()
    assert head.transform.dense.weight.grad is not None and head.transform.dense.weight.grad.abs().sum() > 0
    assert sum(1 for _ in objective.parameters()) == len({id(p) for p in objective.parameters()})  # tied: once


def test_table6_without_mlp_trains_no_mlp_and_needs_cls_before_pooler():
    from sentemb.errors import ConfigError
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.objectives.registry import build_objective

    for name in ("simcse_unsup", "simcse_sup"):
        bare = build_objective(
            name,
            {"train_mlp": False},
            SentenceEncoder.from_name("tiny-random-bert", "cls_before_pooler", seed=0),
            max_len=8,
        )
        assert bare.mlp is None
        assert (
            build_objective(
                name, {}, SentenceEncoder.from_name("tiny-random-bert", "cls_before_pooler", seed=0), max_len=8
            ).mlp
            is not None
        )  # "w/ MLP (train)", the unsupervised default
        with pytest.raises(ConfigError, match="use cls_before_pooler"):
            build_objective(
                name, {"train_mlp": False}, SentenceEncoder.from_name("tiny-random-bert", "cls", seed=0), max_len=8
            )
