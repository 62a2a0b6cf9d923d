"""SimCSE Table 2's next-sentence objectives (§3; Logeswaran and Lee, 2018), with one encoder or two.

Rows: windows of consecutive sentences of an article, (s_i, s_{i+1}, s_{i+2}, s_{i+3})
(:mod:`sentemb.data.sentence_windows`). The pair is x_i = s_i and

- ``context="next_sentence"``: x_i^+ = s_{i+1};
- ``context="next_3_sentences"``: x_i^+ drawn uniformly from s_{i+1}, s_{i+2}, s_{i+3} (Table 2's caption: "randomly
  sample one from the next 3 sentences"), with the step's ``rng``, so a resumed run draws the same;

and the loss is Eq. 4's InfoNCE with in-batch negatives (cos / tau, tau = 0.05), dropout on, as for unsupervised
SimCSE, whose [CLS] + MLP-in-training setup the rows of Table 2 share. ``two_encoders``: x_i through f_theta1 (the
evaluated encoder) and x_i^+ through f_theta2, a copy of the backbone that the objective owns and trains jointly
(:class:`~sentemb.objectives.simcse.SimCSEBase`); the paper gives no more detail, and SimCSE's code has none of
these objectives.
"""

from __future__ import annotations

import random
from typing import Sequence

import torch

from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives.base import Param
from sentemb.objectives.infonce import UnsupervisedInfoNCE
from sentemb.objectives.simcse import TEMPERATURE, SimCSEBase

CONTEXTS = {"next_sentence": 1, "next_3_sentences": 3}  # -> how many following sentences the positive comes from


class SimCSENextSentence(SimCSEBase):
    """Next sentence / next 3 sentences as positives (SimCSE Table 2). Input rows: sentence windows."""

    name = "simcse_next_sentence"
    reference = "SimCSE (Gao et al., EMNLP 2021), Table 2's next-sentence positives"
    rows = "sentence_windows"
    sequences_per_row = 2
    params = (
        TEMPERATURE,
        Param(
            "context",
            str,
            "next_sentence",
            "the positive: the next sentence, or one of the next 3 (Table 2)",
            choices=tuple(CONTEXTS),
        ),
        Param("two_encoders", bool, False, "Table 2's right column: x_i and x_i^+ through two independent encoders"),
    )

    def __init__(
        self, encoder: SentenceEncoder, max_len: int, temperature: float, context: str, two_encoders: bool
    ) -> None:
        super().__init__(encoder, max_len, two_encoders=two_encoders)
        self.loss = UnsupervisedInfoNCE(temperature)
        self.following = CONTEXTS[context]

    def positives(self, rows: Sequence[Sequence[str]], rng: random.Random) -> list[str]:
        return [row[1 + rng.randrange(self.following)] if self.following > 1 else row[1] for row in rows]

    def forward(self, rows: Sequence[Sequence[str]], rng: random.Random) -> torch.Tensor:
        short = [row for row in rows if len(row) < 1 + self.following]
        if short:
            raise ValueError(f"a window of {len(short[0])} sentences has no {self.following} following sentence(s)")
        z1, z2 = self.global_batch(*self.embed_pairs([row[0] for row in rows], self.positives(rows, rng)))
        return self.loss(z1, z2)
