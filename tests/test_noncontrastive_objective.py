"""Barlow Twins / VICReg as training objectives (non-contrastive paper §3): the views, the loss on the projected
views, the projector the objective owns and drops at evaluation, and parameter validation."""

from __future__ import annotations

import random

import pytest
import torch

from sentemb.errors import ConfigError
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives.barlow_twins import BarlowTwins
from sentemb.objectives.vicreg import VICReg
from sentemb.runs import execute
from sentemb.spec import RunSpec
from sentemb.train.loop import prepare_objective

SENTENCES = [
    "the cat sat on the mat today",
    "a man is playing a large guitar",
    "two dogs run in the park",
    "she reads an old book by the window",
]
BASE = dict(
    profile="smoke",
    backbone="tiny-random-bert",
    pooler="cls_before_pooler",
    train_data="wiki_sentences_combined",
    steps=6,
    batch_size=4,
    eval_every=3,
    lr=1e-3,
    final_eval="stsb_dev",
    synthetic_data=True,
)


def _objective(name: str, dropout: float | None = None, **params):
    spec = RunSpec(**BASE, objective=name, objective_params={"projector_width": 24, **params}, dropout=dropout)
    encoder = SentenceEncoder.from_name(spec.backbone, spec.pooler, dropout=spec.dropout, seed=spec.seed)
    return prepare_objective(spec, encoder).train(), spec


def _projected(objective, first, second):
    h = objective.encoder(**objective.encoder.tokenize(first + second, objective.max_len), training=True)
    z = objective.projector(h).float()
    return z[: len(first)], z[len(first) :]


def test_barlow_twins_objective_is_eq2_on_the_projected_dropout_views():
    objective, _ = _objective("barlow_twins", dropout=0.0, off_diagonal_weight=0.02)  # no dropout: deterministic
    loss = objective(SENTENCES, random.Random(0))
    za, zb = _projected(objective, SENTENCES, SENTENCES)
    assert torch.allclose(loss, BarlowTwins(0.02, centred=True)(za, zb), atol=1e-5)
    loss.backward()  # gradients reach the encoder and the projector
    assert objective.projector[0].weight.grad is not None
    assert next(objective.encoder.parameters()).grad is not None


def test_vicreg_objective_is_eq3_on_the_projected_views():
    objective, _ = _objective("vicreg", dropout=0.0, invariance_weight=2.0, variance_weight=3.0, covariance_weight=0.5)
    loss = objective(SENTENCES, random.Random(0))
    za, zb = _projected(objective, SENTENCES, SENTENCES)
    assert torch.allclose(loss, VICReg(2.0, 3.0, 0.5)(za, zb), atol=1e-4)


def test_views_per_augmentation():
    shuffle, _ = _objective("barlow_twins", augmentation="shuffle", strength=0.5)
    first, second = shuffle.views(SENTENCES, random.Random(1))
    assert all(sorted(a.split()) == sorted(s.split()) == sorted(b.split()) for a, b, s in zip(first, second, SENTENCES))
    assert first != SENTENCES and first != second  # both branches are shuffled, independently
    dropout, _ = _objective("barlow_twins")
    assert dropout.views(SENTENCES, random.Random(1)) == (SENTENCES, SENTENCES)  # the views differ by dropout only
    eda, _ = _objective("vicreg", augmentation="eda", strength=0.2)
    a, b = eda.views(SENTENCES, random.Random(1)), eda.views(SENTENCES, random.Random(1))
    assert a == b and a[0] != SENTENCES  # seeded by the step's generator
    pairs, _ = _objective("barlow_twins_pairs")
    rows = [("a premise .", "its entailment .", "a contradiction ."), ("p2 .", "e2 .", "c2 .")]
    assert pairs.views(rows, random.Random(0)) == (["a premise .", "p2 ."], ["its entailment .", "e2 ."])


def test_the_projector_is_owned_trained_and_dropped_at_evaluation(tmp_path):
    objective, spec = _objective("barlow_twins")
    names = [n for n, _ in objective.named_parameters()]
    assert any(n.startswith("projector.") for n in names) and any(n.startswith("encoder.") for n in names)
    assert objective.projector[-1].out_features == 24 and objective.projector[-1].bias is None
    assert objective.evaluation_encoder() is objective.encoder  # [CLS] of the encoder, no projector
    objective.evaluation_encoder().save(tmp_path / "best")
    reloaded = SentenceEncoder.from_name(str(tmp_path / "best"), spec.pooler)
    assert reloaded.encode(SENTENCES[:2]).shape == (2, objective.encoder.dim)  # 64, not the projector's 24
    assert not any("projector" in n for n in reloaded.state_dict())


def test_a_run_trains_the_projector_and_evaluates_without_it():
    spec = RunSpec(**BASE, objective="barlow_twins", objective_params={"projector_width": 24})
    record = execute.ensure(spec, progress=False)
    assert record["training"]["best_step"] > 0 and record["metrics"]["stsb_dev_spearman"] == pytest.approx(
        record["training"]["best_stsb_dev"], abs=1e-6
    )  # the dev score of the saved model is the selected one
    assert record["spec"]["objective_params"]["projector_width"] == 24


def test_parameters_are_validated():
    with pytest.raises(ConfigError, match="strength must be 0 with augmentation 'dropout'"):
        RunSpec(**BASE, objective="barlow_twins", objective_params={"strength": 0.1})
    with pytest.raises(ConfigError, match="augmentation 'shuffle' needs strength > 0"):
        RunSpec(**BASE, objective="vicreg", objective_params={"augmentation": "shuffle"})
    with pytest.raises(ConfigError, match="augmentation: 'crop' is not one of"):
        RunSpec(**BASE, objective="barlow_twins", objective_params={"augmentation": "crop", "strength": 0.1})
    with pytest.raises(ConfigError, match=r"unknown parameter\(s\) \['augmentation'\]"):
        RunSpec(**BASE, objective="barlow_twins_pairs", objective_params={"augmentation": "shuffle"})
    spec = RunSpec(**BASE, objective="vicreg")
    assert spec.objective_params == {
        "augmentation": "dropout",
        "covariance_weight": 1.0,
        "invariance_weight": 25.0,
        "projector_width": 8192,
        "strength": 0.0,
        "variance_weight": 25.0,
    }
