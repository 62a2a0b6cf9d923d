"""Barlow Twins and VICReg for sentences (Farina & Pappadopulo, 2024, §3), with the projector they own.

Equations: h^A, h^B = [CLS] of the two views (one (2N, len) pass, dropout on); z = projector(h), of width W =
    ``projector_width`` (8192); l = l_BT(z^A, z^B) (Eq. 2, :class:`~sentemb.objectives.barlow_twins.BarlowTwins`)
    or l_VICReg(z^A, z^B) (Eq. 3, :class:`~sentemb.objectives.vicreg.VICReg`).
Views (``augmentation``; §3 "Augmentations", Table 1; the same operation on both branches): ``dropout`` (the
    encoder's own, p = the spec's ``dropout``), ``shuffle`` (a fraction ``strength`` of the words shuffled) or
    ``eda`` (one EDA edit at alpha = ``strength``, WordNet 3.0); with text views the encoder keeps its dropout.
    ``barlow_twins_pairs`` (Table 6, "BT (NLI)"): the branches are a premise and its entailment hypothesis.
The projector (Linear-BN-ReLU x 2, Linear) is created fresh per run, trained, checkpointed and resumed with the
    encoder, and dropped at evaluation: dev selection, final evaluation and checkpoints see [CLS] only.
Official code: none released; where the text is silent (dropout with text views, a bias on the last projector
    layer) the choice is ours. VICReg's reference code scales invariance by 1/D and halves the variance term: its
    weight triple is (lambda_s * D, 2 * lambda_v, lambda_c) here.
References: Farina & Pappadopulo, 2024, §3, Eq. 2-3, Tables 1 and 6.
Relations: :mod:`sentemb.models.projector` (``ExpanderProjector``), :mod:`sentemb.augment` (``shuffle_words``,
    ``eda``).
The step and the views in full: docs/derivations.md#sentembobjectivesnon_contrastivepy
"""

from __future__ import annotations

import random
from typing import Sequence

import torch

from sentemb.augment import eda, shuffle_words
from sentemb.models.encoder import SentenceEncoder
from sentemb.models.projector import ExpanderProjector
from sentemb.objectives.barlow_twins import BarlowTwins
from sentemb.objectives.base import Param, TrainingObjective
from sentemb.objectives.vicreg import VICReg

AUGMENTATIONS = ("dropout", "shuffle", "eda")
PROJECTOR_WIDTH = Param("projector_width", int, 8192, "width W of the three projector layers (§3: 8192)", low=1)
AUGMENTATION = Param(
    "augmentation",
    str,
    "dropout",
    "per-branch view: 'dropout' (the encoder's own, p = the spec's "
    "dropout), 'shuffle' (p of the words) or 'eda' (alpha)",
    choices=AUGMENTATIONS,
)
STRENGTH = Param("strength", float, 0.0, "p of shuffle or alpha of EDA (Table 1); 0 with 'dropout'", low=0.0, high=1.0)


class ProjectedTwoViews(TrainingObjective):
    """What BT and VICReg share: two views of each row, the projector they own, and evaluation without it."""

    rows = "sentences"
    sequences_per_row = 2

    def __init__(self, encoder: SentenceEncoder, max_len: int, projector_width: int) -> None:
        super().__init__(encoder, max_len)
        self.projector = ExpanderProjector(encoder.dim, projector_width).to(encoder.device)

    @classmethod
    def check_combination(cls, params: dict) -> list[str]:
        if "augmentation" not in params:
            return []
        if params["augmentation"] == "dropout" and params["strength"] != 0.0:
            return ["strength must be 0 with augmentation 'dropout' (its p is the spec's dropout)"]
        if params["augmentation"] != "dropout" and params["strength"] <= 0.0:
            return [f"augmentation {params['augmentation']!r} needs strength > 0 (Table 1: 0.05-0.5)"]
        return []

    def views(self, rows: Sequence, rng: random.Random) -> tuple[list[str], list[str]]:
        raise NotImplementedError  # pragma: no cover - abstract

    def loss(self, za: torch.Tensor, zb: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError  # pragma: no cover - abstract

    def forward(self, rows: Sequence, rng: random.Random) -> torch.Tensor:
        """Under torchrun the encoder's embeddings are gathered before the projector, which then runs on the global
        batch on every rank: its BatchNorm statistics and the loss's correlation/covariance statistics are the
        global batch's, exactly as in one process (SyncBatchNorm would need GPUs)."""
        first, second = self.views(rows, rng)
        e = self.embed(first + second)
        n = len(first)
        ea, eb = self.global_batch(e[:n], e[n:])
        z = self.projector(torch.cat([ea, eb]))
        return self.loss(z[: len(ea)], z[len(ea) :])  # the losses compute their statistics in fp32 (full_precision)

    def evaluation_encoder(self) -> SentenceEncoder:
        """The encoder alone: the projector is a training device, dropped at evaluation (§3)."""
        return self.encoder


class AugmentedViews(ProjectedTwoViews):
    """Two augmented views of each sentence (§3 "Augmentations")."""

    def __init__(
        self, encoder: SentenceEncoder, max_len: int, projector_width: int, augmentation: str, strength: float
    ) -> None:
        super().__init__(encoder, max_len, projector_width)
        self.augmentation, self.strength = augmentation, strength

    def augment(self, sentence: str, rng: random.Random) -> str:
        if self.augmentation == "shuffle":
            return shuffle_words(sentence, rng, self.strength)
        if self.augmentation == "eda":
            return eda(sentence, rng, self.strength)
        return sentence

    def views(self, rows: Sequence[str], rng: random.Random) -> tuple[list[str], list[str]]:
        first = [self.augment(s, rng) for s in rows]
        second = [self.augment(s, rng) for s in rows]
        return first, second


BT_LAMBDA = Param(
    "off_diagonal_weight",
    float,
    0.0051,
    "lambda of Eq. 2 (scanned; the paper's values are lost: 0.0051 is Barlow Twins' image default, not the paper's)",
    low=0.0,
)


class BarlowTwinsSentences(AugmentedViews):
    """Barlow Twins (Eq. 2) on the projected views; C is the Pearson correlation over the batch."""

    name = "barlow_twins"
    reference = "Non-contrastive sentence representations (Farina & Pappadopulo, 2024), Barlow Twins"
    params = (PROJECTOR_WIDTH, BT_LAMBDA, AUGMENTATION, STRENGTH)

    def __init__(
        self,
        encoder: SentenceEncoder,
        max_len: int,
        projector_width: int,
        off_diagonal_weight: float,
        augmentation: str,
        strength: float,
    ) -> None:
        super().__init__(encoder, max_len, projector_width, augmentation, strength)
        self.barlow_twins = BarlowTwins(off_diagonal_weight, centred=True)

    def loss(self, za: torch.Tensor, zb: torch.Tensor) -> torch.Tensor:
        return self.barlow_twins(za, zb)


class VICRegSentences(AugmentedViews):
    """VICReg (Eq. 3) on the projected views."""

    name = "vicreg"
    reference = "Non-contrastive sentence representations (Farina & Pappadopulo, 2024), VICReg"
    params = (
        PROJECTOR_WIDTH,
        Param(
            "invariance_weight",
            float,
            25.0,
            "lambda_s of Eq. 3 (scanned; lost in extraction: 25 is VICReg's image default)",
            low=0.0,
        ),
        Param(
            "variance_weight",
            float,
            25.0,
            "lambda_v of Eq. 3 (scanned; lost in extraction: 25 is VICReg's image default)",
            low=0.0,
        ),
        Param(
            "covariance_weight",
            float,
            1.0,
            "lambda_c of Eq. 3 (held fixed: App. A.2 fixes one coefficient, "
            "which one and its value are lost; 1 as in VICReg)",
            low=0.0,
        ),
        AUGMENTATION,
        STRENGTH,
    )

    def __init__(
        self,
        encoder: SentenceEncoder,
        max_len: int,
        projector_width: int,
        invariance_weight: float,
        variance_weight: float,
        covariance_weight: float,
        augmentation: str,
        strength: float,
    ) -> None:
        super().__init__(encoder, max_len, projector_width, augmentation, strength)
        self.vicreg = VICReg(invariance_weight, variance_weight, covariance_weight)

    def loss(self, za: torch.Tensor, zb: torch.Tensor) -> torch.Tensor:
        return self.vicreg(za, zb)


class BarlowTwinsPairs(ProjectedTwoViews):
    """Supervised Barlow Twins (Table 6 "BT (NLI)"): the branches are the two sentences of a positive pair. Rows:
    (premise, entailment, contradiction) triples, of which the contradiction is not used."""

    name = "barlow_twins_pairs"
    reference = "Non-contrastive sentence representations (Farina & Pappadopulo, 2024), Barlow Twins on NLI pairs"
    rows = "nli_triples"
    params = (PROJECTOR_WIDTH, BT_LAMBDA)

    def __init__(
        self, encoder: SentenceEncoder, max_len: int, projector_width: int, off_diagonal_weight: float
    ) -> None:
        super().__init__(encoder, max_len, projector_width)
        self.barlow_twins = BarlowTwins(off_diagonal_weight, centred=True)

    def views(self, rows: Sequence[tuple[str, str, str]], rng: random.Random) -> tuple[list[str], list[str]]:
        return [r[0] for r in rows], [r[1] for r in rows]

    def loss(self, za: torch.Tensor, zb: torch.Tensor) -> torch.Tensor:
        return self.barlow_twins(za, zb)
