"""TNCSE's training objectives (Zong et al., AAAI 2025): two encoders trained jointly, and the one-encoder probe.

``tncse`` (Eq. 8, Figure 3): encoders I (``self.encoder``) and II (``self.encoder_2``), both from the stage-1
checkpoints of the spec's ``init_runs``. The B sentences go twice, on interleaved rows, through each encoder in one
pass; [CLS] (h) feeds the angle terms and ``pooler_output`` (p) the norm terms of
:class:`~sentemb.objectives.tensor_norm.TNCSELoss` (Eq. 4-7):
    L = [nce] (L_NCE(h_I) + L_NCE(h_II)) + [icnce] L_ICNCE(h_I, h_II) + [ictn] (L_TN(I->II) + L_TN(II->I))
Switches: ``nce``, ``icnce``, ``ictn`` are Table 4's ablation rows (all on: Eq. 8). Evaluated model: CLS(I) + CLS(II)
(:class:`~sentemb.models.summed_encoders.SummedEncoders`, as ``evaluation_CKPT.py``).
``tncse_single`` (Table 5, "TNCSE-Single"): one encoder, L = L_NCE(h) + [tn_weight] L_TN(h, h+), Eq. 6 between its
two dropout views (our reading of the paper's one sentence; no code released). ``tn_weight`` 0 leaves L_TN out (not
times 0): Eq. 4 alone, Table 5's SimCSE matched to TNCSE-Single.
Official code: ``halve_norm_term`` and ``clamp_negative_cosine`` select ``train_dual.py``'s Eq. 6 (its /2, and
-log(1e-4) for a negative [CLS] cosine); the default is the paper's. Its other settings (dropout, lr, length, batch,
optimizer, evaluation) live in the spec; padding per batch replaces its padding to 64 (same embeddings).
References: Zong et al., Method, Eq. 4-8; Tables 4, 5. Relations: :mod:`sentemb.objectives.tensor_norm` (the terms).
Settings and the TNCSE-Single reading: docs/derivations.md#sentembobjectivestncsepy
"""

from __future__ import annotations

import random
from typing import Any, Mapping, Sequence

import torch

from sentemb.models.encoder import SentenceEncoder
from sentemb.models.summed_encoders import SummedEncoders
from sentemb.objectives.base import Param, TrainingObjective
from sentemb.objectives.full_precision import fp32_loss
from sentemb.objectives.tensor_norm import TNCSELoss, interleaved_infonce, tensor_norm_loss

TEMPERATURE = Param("temperature", float, 0.05, "tau of Eq. 4-5", low=0.0, low_open=True)
HALVE = Param("halve_norm_term", bool, False, "official code: the norm term of Eq. 6 divided by 2 (paper: no /2)")
CLAMP = Param(
    "clamp_negative_cosine",
    bool,
    False,
    "official code: -log(1e-4), without gradient, in Eq. 6 when the [CLS] cosine is negative (paper: "
    "-log of a negative number, NaN, which stops the run)",
)


def interleaved_twice(sentences: Sequence[str]) -> list[str]:
    """[s0, s0, s1, s1, ...]: rows 2m and 2m+1 carry sentence m (the official ``[line, line]`` layout)."""
    return [s for s in sentences for _ in range(2)]


def cls_and_pooler_output(encoder: SentenceEncoder, rows: list[str], max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(h, p) of ``rows`` through ``encoder`` in training mode: [CLS] of the last layer and BERT's pooler_output."""
    return encoder.forward_with_pooler_output(**encoder.tokenize(rows, max_len))


class TNCSE(TrainingObjective):
    """Two encoders trained jointly with InfoNCE, ICNCE and ICTN (Eq. 8). Rows: sentences."""

    name = "tncse"
    reference = "TNCSE (Zong et al., AAAI 2025)"
    rows = "sentences"
    sequences_per_row = 4  # each sentence twice through each encoder
    n_encoders = 2
    params = (
        TEMPERATURE,
        Param("nce", bool, True, "Table 4: the per-encoder InfoNCE terms L_NCE(h_I) + L_NCE(h_II) (Eq. 4)"),
        Param("icnce", bool, True, "Table 4: the cross-encoder InfoNCE L_ICNCE (Eq. 5)"),
        Param("ictn", bool, True, "Table 4: the interaction tensor-norm constraint L_ICTN (Eq. 6-7)"),
        HALVE,
        CLAMP,
    )
    TERMS = {"nce": ("nce_1", "nce_2"), "icnce": ("icnce",), "ictn": ("tn_1_to_2", "tn_2_to_1")}

    def __init__(
        self,
        encoder: SentenceEncoder,
        encoder_2: SentenceEncoder,
        max_len: int,
        temperature: float,
        nce: bool,
        icnce: bool,
        ictn: bool,
        halve_norm_term: bool,
        clamp_negative_cosine: bool,
    ) -> None:
        super().__init__(encoder, max_len)
        self.encoder_2 = encoder_2
        self.loss = TNCSELoss(temperature, halve_norm_term=halve_norm_term, clamp_negative_cosine=clamp_negative_cosine)
        self.active_terms = [
            t for group, on in (("nce", nce), ("icnce", icnce), ("ictn", ictn)) if on for t in self.TERMS[group]
        ]

    @classmethod
    def build(cls, encoders: Sequence[SentenceEncoder], max_len: int, params: Mapping[str, Any]) -> "TNCSE":
        cls.check_encoders(encoders)
        return cls(encoders[0], encoders[1], max_len, **params)

    @classmethod
    def check_combination(cls, params: dict[str, Any]) -> list[str]:
        if not (params["nce"] or params["icnce"] or params["ictn"]):
            return ["at least one of nce, icnce and ictn must be true (Table 4 has no row without a loss)"]
        return []

    def forward(self, rows: Sequence[str], rng: random.Random) -> torch.Tensor:
        twice = interleaved_twice(rows)
        h1, p1 = cls_and_pooler_output(self.encoder, twice, self.max_len)
        h2, p2 = cls_and_pooler_output(self.encoder_2, twice, self.max_len)
        return self.selected_loss(*self.global_batch(h1, h2, p1, p2))

    @fp32_loss
    def selected_loss(self, h1: torch.Tensor, h2: torch.Tensor, p1: torch.Tensor, p2: torch.Tensor) -> torch.Tensor:
        terms = self.loss.terms(h1, h2, p1, p2)
        return torch.stack([terms[t] for t in self.active_terms]).sum()

    def evaluation_encoder(self) -> SummedEncoders:
        """CLS(I) + CLS(II), the official inference (a view over the objective's two encoders, not a copy)."""
        return SummedEncoders([self.encoder, self.encoder_2], name=self.encoder.name)


class TNCSESingle(TrainingObjective):
    """Table 5 "TNCSE-Single": one encoder, InfoNCE over its interleaved views plus ``tn_weight`` x L_TN between
    them (Eq. 4 + Eq. 6); ``tn_weight=0`` is the matched SimCSE row (Eq. 4 alone)."""

    name = "tncse_single"
    reference = "TNCSE (Zong et al., AAAI 2025), TNCSE-Single"
    rows = "sentences"
    sequences_per_row = 2
    params = (
        TEMPERATURE,
        HALVE,
        CLAMP,
        Param(
            "tn_weight",
            float,
            1.0,
            "weight of L_TN (Eq. 6) next to Eq. 4's InfoNCE; 1 = TNCSE-Single "
            "(the paper), 0 = the term left out (Table 5's SimCSE matched to TNCSE-Single)",
            low=0.0,
            added=True,
        ),
    )

    def __init__(
        self,
        encoder: SentenceEncoder,
        max_len: int,
        temperature: float,
        halve_norm_term: bool,
        clamp_negative_cosine: bool,
        tn_weight: float,
    ) -> None:
        super().__init__(encoder, max_len)
        self.temperature = temperature
        self.tn_weight = tn_weight
        self.flags = {"halve_norm_term": halve_norm_term, "clamp_negative_cosine": clamp_negative_cosine}

    def forward(self, rows: Sequence[str], rng: random.Random) -> torch.Tensor:
        h, p = cls_and_pooler_output(self.encoder, interleaved_twice(rows), self.max_len)
        return self.loss(*self.global_batch(h, p))

    @fp32_loss
    def loss(self, h: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        nce = interleaved_infonce(h, h, self.temperature)
        if self.tn_weight == 0:
            return nce
        return nce + self.tn_weight * tensor_norm_loss(h, h, p, p, **self.flags)
