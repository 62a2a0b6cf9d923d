"""SimCSE++ as a training objective: off-dropout's third pass, the noise probes, DCL and BT terms, defaults = SimCSE."""

import random

import pytest
import torch
from torch import nn

from sentemb.errors import ConfigError
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives import BarlowTwins, DecoupledInfoNCE, DimensionWiseContrastive, UnsupervisedInfoNCE
from sentemb.spec import RunSpec
from sentemb.train.loop import prepare_objective

SPEC = dict(
    profile="smoke",
    backbone="tiny-random-bert",
    pooler="cls_before_pooler",
    objective="simcse_pp",
    train_data="wiki_sentences_combined",
    steps=6,
    batch_size=8,
    eval_every=3,
    final_eval="stsb_dev",
    synthetic_data=True,
)
ROWS = [
    "a man is playing a guitar .",
    "the cat sleeps on the sofa .",
    "two girls are reading books .",
    "a dog runs in the park .",
]


def _objective(**params):
    spec = RunSpec(**SPEC, objective_params=params)
    encoder = SentenceEncoder.from_name(spec.backbone, spec.pooler, seed=3)
    return prepare_objective(spec, encoder)


def test_defaults_are_unsupervised_simcse():
    pp = _objective()
    simcse = prepare_objective(
        RunSpec(**{**SPEC, "objective": "simcse_unsup"}),
        SentenceEncoder.from_name("tiny-random-bert", "cls_before_pooler", seed=3),
    )
    pp.train(), simcse.train()
    torch.manual_seed(0)
    a = pp(ROWS, random.Random(0))
    torch.manual_seed(0)
    b = simcse(ROWS, random.Random(0))
    # the same loss up to fp32 rounding: the two objectives order their products differently, and the rounding
    # depends on the CPU's kernels (1.0e-6 apart on a CPU with AMX; a different loss differs by orders more)
    assert a.item() == pytest.approx(b.item(), rel=1e-5)


def test_off_dropout_runs_a_third_pass_without_dropout_that_carries_gradients():
    objective = _objective(negatives="off_dropout", m=0.9)
    assert objective.sequences_per_row == 3
    objective.train()
    calls = []

    def record(module, inputs, output):
        dropout_on = [m.training for m in module.modules() if isinstance(m, nn.Dropout)]
        output.last_hidden_state.retain_grad()
        calls.append((inputs[0].shape[0] if inputs else None, all(dropout_on), any(dropout_on), output))

    handle = objective.encoder.backbone.register_forward_hook(record)
    try:
        loss = objective(ROWS, random.Random(0))
    finally:
        handle.remove()
    assert [(c[1], c[2]) for c in calls] == [(True, True), (False, False)]  # two views with dropout, then none
    assert all(m.training for m in objective.encoder.modules() if isinstance(m, nn.Dropout))  # switched back on
    loss.backward()
    third = calls[1][3].last_hidden_state
    assert third.requires_grad and third.grad is not None and third.grad.abs().sum() > 0  # not detached


def _fixed_views(objective, z1, z2, z0=None):
    """Make ``embed`` return fixed tensors: the (2N) two-view pass, then (N) single passes."""
    queue = [torch.cat([z1, z2])] + ([z0] if z0 is not None else [])

    def embed(sentences):
        return queue.pop(0) if queue else z1

    objective.embed = embed


def test_the_loss_is_eq6_with_the_dcl_and_bt_terms():
    torch.manual_seed(1)
    z1, z2, z0 = torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 8)
    for variant in ("paper", "official"):
        objective = _objective(negatives="off_dropout", m=0.9, dcl_weight=0.1, dcl_variant=variant, bt_weight=0.5)
        _fixed_views(objective, z1, z2, z0)
        expected = (
            DecoupledInfoNCE(0.05, 0.9)(z1, z2, z0, z0)
            + 0.1 * DimensionWiseContrastive(5.0, variant)(z1, z2)
            + 0.5 * BarlowTwins(0.0051, centred=False)(z1, z2)
        )
        assert objective(ROWS, random.Random(0)).item() == pytest.approx(expected.item(), rel=1e-6)
    official = _objective(negatives="off_dropout", trade_off="official", m=0.9)
    _fixed_views(official, z1, z2, z0)
    assert official(ROWS, random.Random(0)).item() == pytest.approx(
        DecoupledInfoNCE(0.05, 0.9, "official")(z1, z2, z0, z0).item(), rel=1e-6
    )


def test_dcl_alone_for_table4():
    torch.manual_seed(3)
    z1, z2 = torch.randn(4, 8), torch.randn(4, 8)
    objective = _objective(info_weight=0.0, dcl_weight=1.0, dcl_temperature=0.05, negatives="off_dropout")
    _fixed_views(objective, z1, z2, torch.full((4, 8), float("nan")))  # an off-dropout pass would poison the loss
    expected = DimensionWiseContrastive(0.05)(z1, z2)
    assert objective(ROWS, random.Random(0)).item() == pytest.approx(expected.item(), rel=1e-6)
    with pytest.raises(ConfigError, match="nothing to train"):
        RunSpec(**SPEC, objective_params={"info_weight": 0.0})


def test_noise_probes_change_only_their_pair():
    torch.manual_seed(2)
    z1, z2 = torch.randn(4, 8), torch.randn(4, 8)
    plus = _objective(positive_noise="plus")
    _fixed_views(plus, z1, z2)
    torch.manual_seed(7)
    got = plus(ROWS, random.Random(0))
    torch.manual_seed(7)
    a = z1 + torch.randn(z1.shape) * 0.1**0.5
    b = z2 + torch.randn(z2.shape) * 0.1**0.5
    assert got.item() == pytest.approx(DecoupledInfoNCE(0.05)(a, b, z1, z2).item(), rel=1e-6)
    minus = _objective(negative_noise="minus", noise_samples=3)
    assert minus.sequences_per_row == 2 + 6
    _fixed_views(minus, z1, z2)  # every further pass returns z1: the mean of 3 samples of z1 is z1
    assert minus(ROWS, random.Random(0)).item() == pytest.approx(
        DecoupledInfoNCE(0.05)(z1, z2, z1, z1).item(), rel=1e-6
    )
    assert UnsupervisedInfoNCE(0.05)(z1, z2).item() == pytest.approx(DecoupledInfoNCE(0.05)(z1, z2).item(), rel=1e-6)


def test_parameters_are_validated_together():
    with pytest.raises(ConfigError, match="off-dropout negatives carry no noise"):
        RunSpec(**SPEC, objective_params={"negatives": "off_dropout", "negative_noise": "plus"})
    with pytest.raises(ConfigError, match=r"objective 'simcse_pp': m: 0.0 is not float in \(0, inf\]"):
        RunSpec(**SPEC, objective_params={"m": 0.0})
    with pytest.raises(ConfigError, match="dcl_variant: 'code' is not one of 'paper', 'official'"):
        RunSpec(**SPEC, objective_params={"dcl_variant": "code"})
