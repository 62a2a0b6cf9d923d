"""SimCSE++ (Xu et al., 2023): SimCSE with off-dropout negatives (§3.2, Eq. 3) and dimension-wise DCL (§4.3).

Equations, on SimCSE's two dropout views z^1, z^2 after its MLP (``cls`` + ``mlp_only_train``, as the official code):
    l_info = DecoupledInfoNCE(a, b, c, d; tau, m)                               (Eq. 2-3; m scales the negative sum)
    l      = w_info * l_info + lambda * l_DCL(z^1, z^2) + w_BT * l_BT(z^1, z^2)  (Eq. 5-6, w_info = 1; Table 2's BT)
Switches: ``negatives="off_dropout"`` encodes the negatives a third time in eval mode (gradients kept);
    ``positive_noise`` / ``negative_noise`` are Table 1's +/-Noise probes (§3.1: N(0, 0.1) noise, or the mean of
    K = 10 dropout samples); ``info_weight`` 0 trains DCL alone (Table 4 block 1); ``bt_*`` is Table 2's Barlow
    Twins with M Gaussian padding rows (§4.2, the paper's Eq. 4).
SimCSE++ = off-dropout + DCL with tau = 0.05, m = 0.9, tau_DCL = 5, lambda = 0.1 (§5.1); with every option at its
    default the objective is unsupervised SimCSE (Eq. 4) exactly.
Official code: ``trade_off="official"`` (m scales the positive logit, its ``pos_ratio``); ``dcl_variant="official"``
    (the 2022-11-10 code's DCL; tau_DCL and lambda do not carry over). The code at HEAD computes no DCL, and its
    Table 2 probe is commented out (``scd_loss``).
References: Xu et al., 2023, §3.1-3.2, §4.2-4.3, §5.1; Tables 1, 2, 4.
Relations: :mod:`~sentemb.objectives.off_dropout_infonce`, :mod:`~sentemb.objectives.dimension_contrastive`,
    :mod:`~sentemb.objectives.barlow_twins`; :mod:`~sentemb.objectives.simcse` (the base class and its MLP).
The step written out: docs/derivations.md#sentembobjectivessimcse_pppy
"""

from __future__ import annotations

import random
from typing import Sequence

import torch

from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives.barlow_twins import BarlowTwins
from sentemb.objectives.base import Param
from sentemb.objectives.dimension_contrastive import DimensionWiseContrastive
from sentemb.objectives.off_dropout_infonce import (
    DecoupledInfoNCE,
    add_gaussian_noise,
    encode_without_dropout,
    mean_of_dropout_samples,
)
from sentemb.objectives.simcse import TEMPERATURE, SimCSEBase

NOISE = ("none", "plus", "minus")


class SimCSEPlusPlus(SimCSEBase):
    """SimCSE++ and its ablations. Input rows: sentences. Evaluated: the encoder with the spec's pooler."""

    name = "simcse_pp"
    reference = "SimCSE++ (Xu et al., EMNLP 2023)"
    rows = "sentences"
    sequences_per_row = 2
    params = (
        TEMPERATURE,
        Param(
            "negatives",
            str,
            "dropout",
            "negative views: 'dropout' (SimCSE) or 'off_dropout' (Eq. 3)",
            choices=("dropout", "off_dropout"),
        ),
        Param("m", float, 1.0, "trade-off factor of Eq. 3 (0.9 in §5.1; 1 = SimCSE)", low=0.0, low_open=True),
        Param(
            "trade_off",
            str,
            "paper",
            "'paper': m scales the negatives (Eq. 3); 'official': m scales the positive logit (the code's pos_ratio)",
            choices=("paper", "official"),
        ),
        Param(
            "positive_noise",
            str,
            "none",
            "Table 1: 'plus' Gaussian noise, 'minus' mean of K dropout samples",
            choices=NOISE,
        ),
        Param("negative_noise", str, "none", "Table 1, for the negative pairs", choices=NOISE),
        Param("noise_variance", float, 0.1, "variance of the '+Noise' Gaussian (§3.1: 0.1)", low=0.0, low_open=True),
        Param("noise_samples", int, 10, "K dropout samples averaged by '-Noise' (§3.1: 10)", low=1),
        Param(
            "info_weight",
            float,
            1.0,
            "weight of the InfoNCE term (1 in Eq. 6; 0 trains DCL alone, Table 4 block 1)",
            low=0.0,
        ),
        Param("dcl_weight", float, 0.0, "lambda of Eq. 6 (0.1 in §5.1; 0 = no DCL)", low=0.0),
        Param("dcl_temperature", float, 5.0, "tau_DCL of Eq. 5 (5 in §5.1)", low=0.0, low_open=True),
        Param(
            "dcl_variant",
            str,
            "paper",
            "'paper' (Eq. 5) or 'official' (the 2022-11-10 code)",
            choices=("paper", "official"),
        ),
        Param(
            "bt_weight",
            float,
            0.0,
            "weight of the Barlow Twins term added to SimCSE (Table 2; 0 = none; the paper does not state it)",
            low=0.0,
        ),
        Param(
            "bt_off_diagonal",
            float,
            0.0051,
            "lambda of Barlow Twins' off-diagonal sum (SimCSE++ does not state it; Barlow Twins' own default)",
            low=0.0,
        ),
        Param("bt_padding", int, 0, "M artificial N(0, I) embeddings appended to the batch (Table 2)", low=0),
    )

    def __init__(
        self,
        encoder: SentenceEncoder,
        max_len: int,
        temperature: float,
        negatives: str,
        m: float,
        trade_off: str,
        positive_noise: str,
        negative_noise: str,
        noise_variance: float,
        noise_samples: int,
        info_weight: float,
        dcl_weight: float,
        dcl_temperature: float,
        dcl_variant: str,
        bt_weight: float,
        bt_off_diagonal: float,
        bt_padding: int,
    ) -> None:
        super().__init__(encoder, max_len)
        self.info = DecoupledInfoNCE(temperature, m, trade_off)
        self.negatives, self.positive_noise, self.negative_noise = negatives, positive_noise, negative_noise
        self.noise_variance, self.noise_samples = noise_variance, noise_samples
        self.info_weight, self.dcl_weight, self.bt_weight = info_weight, dcl_weight, bt_weight
        self.dcl = DimensionWiseContrastive(dcl_temperature, dcl_variant)
        self.bt = BarlowTwins(bt_off_diagonal, centred=False, pad=bt_padding)
        extra = {"none": 0, "plus": 0, "minus": 2 * noise_samples}
        self.sequences_per_row = 2 + (negatives == "off_dropout") + extra[positive_noise] + extra[negative_noise]

    @classmethod
    def check_combination(cls, params: dict) -> list[str]:
        problems = []
        if params["negatives"] == "off_dropout" and params["negative_noise"] != "none":
            problems.append("negative_noise applies to dropout negatives; off-dropout negatives carry no noise")
        if not (params["info_weight"] or params["dcl_weight"] or params["bt_weight"]):
            problems.append("info_weight, dcl_weight and bt_weight are all 0: there is nothing to train")
        return problems

    def _mean_view(self, rows: Sequence[str]) -> torch.Tensor:
        return mean_of_dropout_samples(lambda: self.embed(rows), self.noise_samples)

    def _noisy(self, z: torch.Tensor) -> torch.Tensor:
        return add_gaussian_noise(z, self.noise_variance)

    def forward(self, rows: Sequence[str], rng: random.Random) -> torch.Tensor:
        """Each view is made from this process's rows, then taken over the global batch (``global_batch``: the
        identity in one process) before a loss sees it; the views are drawn in the same order either way."""
        n = len(rows)
        z = self.embed(list(rows) + list(rows))
        z1, z2 = z[:n], z[n:]
        g1, g2 = self.global_batch(z1, z2)
        loss = z.new_zeros(())
        if self.dcl_weight:
            loss = loss + self.dcl_weight * self.dcl(g1, g2)
        if self.bt_weight:
            loss = loss + self.bt_weight * self.bt(g1, g2)
        if not self.info_weight:
            return loss
        a, b = g1, g2
        if self.positive_noise == "plus":
            a, b = self.global_batch(self._noisy(z1), self._noisy(z2))
        elif self.positive_noise == "minus":
            a, b = self.global_batch(self._mean_view(rows), self._mean_view(rows))
        if self.negatives == "off_dropout":
            c = d = self.global_batch(encode_without_dropout(self.encoder, lambda: self.embed(rows)))
        elif self.negative_noise == "plus":
            c, d = self.global_batch(self._noisy(z1), self._noisy(z2))
        elif self.negative_noise == "minus":
            c, d = self.global_batch(self._mean_view(rows), self._mean_view(rows))
        else:
            c, d = g1, g2
        return loss + self.info_weight * self.info(a, b, c, d)
