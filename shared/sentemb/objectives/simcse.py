"""SimCSE's two training objectives (Gao et al., 2021), with the MLP they own.

``simcse_unsup`` (§3, Eq. 4): each sentence twice in one (2N, len) pass, two dropout masks, loss
:class:`~sentemb.objectives.infonce.UnsupervisedInfoNCE`. Switches: ``fixed_dropout_mask`` (Table 3 "fixed 0.1"),
``augmentation`` (Table 1's g(x), on the second view only), ``two_encoders`` (Table 2; evaluates f_theta1).
``simcse_sup`` (§4, Eq. 5; Eq. 8 with ``hard_negative_alpha``): (premise, entailment, contradiction) rows, loss
:class:`~sentemb.objectives.infonce.SupervisedInfoNCE`; ``negatives`` (Table 7): ``contradiction`` (the paper's),
``none`` (pairs, Table 4) or ``contradiction+neutral`` (quads; the official code has no neutral option).
Both: ``similarity`` (Table D.1: cosine / tau, or dot) and ``mlm_weight`` (Table D.2: + lambda L_MLM, a fresh tied
head; the views stay unmasked as in the official code after its PR #121; whether Table D.2 ran before it is unverified).
The MLP (Table 6; §6.3, footnote 9): with a [CLS] pooler a fresh dense + tanh on [CLS], BERT-initialised, owned by
the objective and written into the backbone's ``pooler`` for evaluation (as ``simcse_to_huggingface.py``).
``cls`` evaluates MLP([CLS]), ``cls_before_pooler`` [CLS] alone (``mlp_only_train``); ``train_mlp=false`` is
"[CLS] w/o MLP"; other poolers train no MLP. Inputs are cut to ``max_len`` tokens (32) and padded per batch.
References: Gao et al., 2021, §3, §4, §6.3; Tables 1-4, 6, 7, D.1, D.2.
Relations: :mod:`sentemb.objectives.infonce` (the losses), :mod:`sentemb.augment` (the views), ``masked_lm.py``.
Every parameter and the official code's switches: docs/derivations.md#sentembobjectivessimcsepy
"""

from __future__ import annotations

import copy
import random
from typing import Sequence

import torch
from torch import nn

from sentemb.augment import crop, delete_one_word, delete_words, synonym_replacement
from sentemb.errors import ConfigError
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives.base import Param, TrainingObjective
from sentemb.objectives.infonce import SIMILARITIES, SupervisedInfoNCE, UnsupervisedInfoNCE
from sentemb.objectives.masked_lm import MaskedLMLoss, mask_tokens_for_mlm, tied_mlm_head

MLP_POOLERS = ("cls", "cls_before_pooler")
TEMPERATURE = Param(
    "temperature", float, 0.05, "tau of Eq. 4/5: cosine similarities are divided by it", low=0.0, low_open=True
)
SIMILARITY = Param(
    "similarity",
    str,
    "cosine",
    "Table D.1: 'cosine' (cos/tau) or 'dot' (dot product, no temperature)",
    choices=SIMILARITIES,
    added=True,
)
AUGMENTATIONS = {  # Table 1's discrete operators g for the second view
    "none": lambda sentence, rng: sentence,
    "delete_one_word": delete_one_word,
    **{f"crop_{k:g}": (lambda sentence, rng, k=k: crop(sentence, rng, k)) for k in (0.1, 0.2, 0.3)},
    **{f"word_deletion_{k:g}": (lambda sentence, rng, k=k: delete_words(sentence, rng, k)) for k in (0.1, 0.2, 0.3)},
    "synonym_replacement": synonym_replacement,
}


HARD_NEGATIVES = {"none": 2, "contradiction": 3, "contradiction+neutral": 4}  # -> sentences per row used


TRAIN_MLP = Param(
    "train_mlp",
    bool,
    True,
    "Table 6: train the MLP on [CLS] (false: '[CLS] w/o MLP', evaluated with cls_before_pooler)",
    added=True,
)
MLM_WEIGHT = Param(
    "mlm_weight", float, 0.0, "Table D.2: lambda of the auxiliary MLM loss (0: none)", low=0.0, added=True
)


def check_similarity(params: dict) -> list[str]:
    """The dot product takes no temperature: a spec that sets one with it would name a run it does not train."""
    if params["similarity"] == "dot" and params["temperature"] != TEMPERATURE.default:
        return [f"similarity 'dot' uses no temperature; leave temperature at {TEMPERATURE.default}"]
    return []


def check_pooler(encoder: SentenceEncoder, train_mlp: bool) -> None:
    """``cls`` evaluates the trained MLP; without one it would evaluate the checkpoint's own, untrained, pooler."""
    if not train_mlp and encoder.pooler == "cls":
        raise ConfigError(
            "train_mlp false trains no MLP for pooler 'cls' to evaluate; use cls_before_pooler "
            "(Table 6 '[CLS] w/o MLP')"
        )


class SimCSEMLP(nn.Module):
    """Dense + tanh on [CLS] (SimCSE's ``MLPLayer``), freshly initialised as BERT initialises a linear layer."""

    def __init__(self, dim: int, initializer_range: float = 0.02) -> None:
        super().__init__()
        self.dense = nn.Linear(dim, dim)
        self.activation = nn.Tanh()
        nn.init.normal_(self.dense.weight, mean=0.0, std=initializer_range)
        nn.init.zeros_(self.dense.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.activation(self.dense(x))


class SimCSEBase(TrainingObjective):
    """What every SimCSE-style objective shares: the fresh MLP on [CLS] it owns, and its export to the checkpoint."""

    def __init__(
        self,
        encoder: SentenceEncoder,
        max_len: int,
        mlm_weight: float = 0.0,
        two_encoders: bool = False,
        train_mlp: bool = True,
    ) -> None:
        super().__init__(encoder, max_len)
        check_pooler(encoder, train_mlp)
        self.positive_encoder = None
        if two_encoders:  # f_theta2 of SimCSE Table 2: the same backbone, trained as an independent copy
            self.positive_encoder = SentenceEncoder(
                copy.deepcopy(encoder.backbone), encoder.tokenizer, encoder.pooler, name=encoder.name
            )
        self.mlp = None
        if encoder.pooler in MLP_POOLERS and train_mlp:
            config = encoder.backbone.config
            self.mlp = SimCSEMLP(encoder.dim, getattr(config, "initializer_range", 0.02)).to(encoder.device)
        self.mlm_weight = mlm_weight
        self.mlm_loss = MaskedLMLoss(tied_mlm_head(encoder)).to(encoder.device) if mlm_weight > 0 else None

    def auxiliary_mlm(self, sentences: Sequence[str], rng: random.Random) -> torch.Tensor:
        """lambda * L_MLM over ``sentences`` (Table D.2), or 0 without MLM (the rng is then not drawn from)."""
        if self.mlm_loss is None:
            return torch.zeros((), device=self.encoder.device)
        tokenizer = self.encoder.tokenizer
        inputs = self.encoder.cpu_batch(list(sentences), self.max_len)
        inputs["input_ids"], inputs["labels"] = mask_tokens_for_mlm(
            inputs["input_ids"],
            mask_token_id=tokenizer.mask_token_id,
            vocab_size=len(tokenizer),
            special_token_ids=set(tokenizer.all_special_ids),
            generator=torch.Generator().manual_seed(rng.getrandbits(63)),
        )
        labels = inputs.pop("labels")  # stays on the CPU: MaskedLMLoss finds the selected positions there
        _, token_states = self.encoder.forward_with_last_hidden_state(**self.encoder.to_device(inputs, self.max_len))
        return self.mlm_weight * self.mlm_loss(token_states, labels)

    def embed(self, sentences: Sequence[str]) -> torch.Tensor:
        z = super().embed(sentences)
        return self.mlp(z) if self.mlp is not None else z

    def embed_pairs(self, anchors: Sequence[str], positives: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """(z_i, z_i^+): one pass of 2N through the encoder (two dropout masks, the official layout), or, with two
        encoders, the anchors through f_theta1 and the positives through f_theta2."""
        n = len(anchors)
        if self.positive_encoder is None:
            z = self.embed(list(anchors) + list(positives))
            return z[:n], z[n:]
        inputs = self.positive_encoder.tokenize(list(positives), self.max_len)
        z_positive = self.positive_encoder(**inputs, training=True)
        return self.embed(anchors), self.mlp(z_positive) if self.mlp is not None else z_positive

    def evaluation_encoder(self) -> SentenceEncoder:
        """The encoder, with the trained MLP written into its ``pooler`` module (evaluated by ``cls``; for
        ``cls_before_pooler`` it is only kept in the checkpoint, as SimCSE's converted checkpoints keep it, when the
        backbone has a pooler module: ``cls_before_pooler`` does not need one)."""
        if self.mlp is not None and getattr(self.encoder.backbone, "pooler", None) is not None:
            with torch.no_grad():
                self.encoder.backbone.pooler.dense.weight.copy_(self.mlp.dense.weight)
                self.encoder.backbone.pooler.dense.bias.copy_(self.mlp.dense.bias)
        return self.encoder


class SimCSEUnsupervised(SimCSEBase):
    """Unsupervised SimCSE (Eq. 4). Input rows: sentences. Evaluated: the encoder with the spec's pooler."""

    name = "simcse_unsup"
    reference = "SimCSE (Gao et al., EMNLP 2021), unsupervised"
    rows = "sentences"
    sequences_per_row = 2
    params = (
        TEMPERATURE,
        Param("fixed_dropout_mask", bool, False, "Table 3 'fixed 0.1': one dropout mask shared by both views"),
        Param(
            "augmentation",
            str,
            "none",
            "second view g(x) of Table 1: 'none' (dropout only) or a discrete operator",
            choices=tuple(AUGMENTATIONS),
        ),
        SIMILARITY,
        MLM_WEIGHT,
        Param("two_encoders", bool, False, "Table 2: x_i and x_i^+ through two independent encoders", added=True),
        TRAIN_MLP,
    )

    def __init__(
        self,
        encoder: SentenceEncoder,
        max_len: int,
        temperature: float,
        fixed_dropout_mask: bool,
        augmentation: str,
        similarity: str,
        mlm_weight: float,
        two_encoders: bool,
        train_mlp: bool,
    ) -> None:
        super().__init__(encoder, max_len, mlm_weight, two_encoders, train_mlp)
        self.loss = UnsupervisedInfoNCE(temperature, similarity)
        self.fixed_dropout_mask = fixed_dropout_mask
        self.augmentation = augmentation

    @classmethod
    def check_combination(cls, params: dict) -> list[str]:
        problems = check_similarity(params)
        if params["fixed_dropout_mask"] and (params["augmentation"] != "none" or params["two_encoders"]):
            problems.append("fixed_dropout_mask encodes one view for both; it takes no augmentation and one encoder")
        return problems

    def forward(self, rows: Sequence[str], rng: random.Random) -> torch.Tensor:
        if self.fixed_dropout_mask:
            z = self.global_batch(self.embed(rows))
            return self.loss(z, z) + self.auxiliary_mlm(rows, rng)
        augment = AUGMENTATIONS[self.augmentation]
        second = [augment(s, rng) for s in rows]
        z1, z2 = self.global_batch(*self.embed_pairs(rows, second))
        return self.loss(z1, z2) + self.auxiliary_mlm(list(rows) + second, rng)


class SimCSESupervised(SimCSEBase):
    """Supervised SimCSE (Eq. 5, Eq. 8 with alpha). Input rows: (premise, entailment, contradiction)."""

    name = "simcse_sup"
    reference = "SimCSE (Gao et al., EMNLP 2021), supervised"
    rows = "nli_triples"
    sequences_per_row = 3
    params = (
        TEMPERATURE,
        Param(
            "hard_negative_alpha",
            float,
            1.0,
            "alpha of Eq. 8: weight of the anchor's own hard negative (1 = Eq. 5)",
            low=0.0,
            low_open=True,
        ),
        SIMILARITY,
        Param(
            "negatives",
            str,
            "contradiction",
            "Table 7: hard negatives per anchor: 'contradiction', 'none' "
            "(in-batch only; rows may be pairs) or 'contradiction+neutral' (rows with a neutral 4th column)",
            choices=tuple(HARD_NEGATIVES),
            added=True,
        ),
        MLM_WEIGHT,
        TRAIN_MLP,
    )

    def __init__(
        self,
        encoder: SentenceEncoder,
        max_len: int,
        temperature: float,
        hard_negative_alpha: float,
        similarity: str,
        negatives: str,
        mlm_weight: float,
        train_mlp: bool,
    ) -> None:
        super().__init__(encoder, max_len, mlm_weight, train_mlp=train_mlp)
        self.negatives = negatives
        self.row_length = HARD_NEGATIVES[negatives]
        self.sequences_per_row = self.row_length  # what it encodes per row (throughput)
        self.loss = SupervisedInfoNCE(temperature, hard_negative_alpha, similarity)
        self.pairs_loss = UnsupervisedInfoNCE(temperature, similarity)

    @classmethod
    def check_combination(cls, params: dict) -> list[str]:
        problems = check_similarity(params)
        if params["negatives"] == "none" and params["hard_negative_alpha"] != 1.0:
            problems.append("negatives 'none' has no hard negative for hard_negative_alpha to weigh; leave it at 1.0")
        return problems

    def forward(self, rows: Sequence[tuple[str, ...]], rng: random.Random) -> torch.Tensor:
        n = len(rows)
        short = [r for r in rows if len(r) < self.row_length]
        if short:
            raise ConfigError(
                f"simcse_sup with negatives {self.negatives!r} needs rows of {self.row_length} sentences "
                f"(premise, entailment{', contradiction' if self.row_length > 2 else ''}"
                f"{', neutral' if self.row_length > 3 else ''}); got {short[0]!r}: "
                f"{'train on snli_devtest_with_neutral' if self.row_length > 3 else 'check train_data'}"
            )
        sentences = [r[k] for k in range(self.row_length) for r in rows]
        z = self.embed(sentences)
        views = self.global_batch(*[z[k * n : (k + 1) * n] for k in range(self.row_length)])
        contrastive = self.pairs_loss(views[0], views[1]) if self.negatives == "none" else self.loss(*views)
        return contrastive + self.auxiliary_mlm(sentences, rng)
