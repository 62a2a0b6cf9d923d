"""DeCLUTR's objectives (Giorgi et al., 2021): NT-Xent over anchors and mean positives, plus MLM.

Equations (§3.1-3.2), N documents, A anchors each, P positives per anchor:
    mean positive (the display before Eq. 2)  e_{i+AN} = (1/P) sum_p g(f(s_{i+pAN}))
    Eq. 2  L_contrastive = sum_i [l(i, i+AN) + l(i+AN, i)], l the cosine NT-Xent over the 2AN embeddings, tau 0.05
    Eq. 3  L = L_contrastive + L_MLM, unweighted (as the official code), MLM on the anchor spans
Official code: the mean of the 2AN terms instead of Eq. 2's sum (pytorch-metric-learning's NTXentLoss; followed
    here). ``loss_form``: ``exact`` (:func:`nt_xent`, default, Eq. 2 at any tau) or ``official``
    (:func:`nt_xent_official`, -log(n / d + tiny): capped at 87.3 in float32, which bites at tau = 5e-4; Figure 2's
    grid uses ``exact``). The masked anchors feed both losses; positives are never masked.
Inputs: positives anchor-major, (AN, P, d) (the official layout and the span sampler's; the paper indexes them
    positive-major), averaged over axis 1.
Deviation: the MLM head is fresh and tied to the input embeddings; the official code uses the checkpoint's own
    pretrained LM head (on the full profile's RoBERTa: a deviation to remove when the full profile runs).
References: Giorgi et al., 2021, §3.1 (Eq. 2), §3.2 (Eq. 3).
Relations: :mod:`sentemb.augment.span_sampler` (the spans), :mod:`sentemb.objectives.masked_lm` (L_MLM),
    :mod:`sentemb.data.documents` (the documents).
Derivation and the official code: docs/derivations.md#sentembobjectivesdeclutrpy
"""

from __future__ import annotations

import random
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from sentemb.augment.span_sampler import (
    POSITIVE_VIEWS,
    DocumentTooShortError,
    minimum_document_length,
    sample_anchor_positive_spans,
)
from sentemb.data.documents import Document, HubCorpus, TokenisedDocument, kept_documents
from sentemb.errors import ConfigError
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives.base import Param, TrainingObjective
from sentemb.objectives.full_precision import fp32_loss
from sentemb.objectives.masked_lm import MaskedLMLoss, mask_tokens_for_mlm, tied_mlm_head

LOSS_FORMS = ("exact", "official")


def _check_pairs(first: torch.Tensor, second: torch.Tensor) -> None:
    if first.shape != second.shape or first.dim() != 2:
        raise ValueError(
            f"expected two (M, d) tensors of the same shape, got {tuple(first.shape)} and {tuple(second.shape)}"
        )


def nt_xent(first: torch.Tensor, second: torch.Tensor, temperature: float) -> torch.Tensor:
    """SimCLR's NT-Xent, exact: ``first[i]`` and ``second[i]`` are a positive pair among 2M embeddings.

    The mean over the 2M terms l(i, i+M) and l(i+M, i) of Eq. 2 above, each a cross entropy (log-sum-exp) over the
    cosine similarities / tau of e_i to the 2M - 1 other embeddings: exact at any tau.

    Args:
        first: (M, d), e_1 ... e_M (DeCLUTR: the AN anchors).
        second: (M, d), their partners e_{M+1} ... e_2M (DeCLUTR: the mean positives).
        temperature: tau (0.05 in the paper; Figure 2 also 5e-4).

    References:
        - Chen et al. (2020), "A Simple Framework for Contrastive Learning of Visual Representations", Eq. 1.
        - Giorgi et al. (2021), "DeCLUTR", §3.1, Eq. 2.

    Official code:
        pytorch-metric-learning's ``NTXentLoss`` (:func:`nt_xent_official`): the same terms and mean, computed as
        -log(n / d + tiny), so a term is capped at -log(tiny) (87.3 in float32) where this one keeps growing.
    """
    _check_pairs(first, second)
    count = first.shape[0]
    embeddings = F.normalize(torch.cat([first, second]), dim=-1)
    logits = embeddings @ embeddings.T / temperature
    self_pairs = torch.eye(2 * count, dtype=torch.bool, device=logits.device)
    logits = logits.masked_fill(self_pairs, float("-inf"))
    index = torch.arange(count, device=logits.device)
    partners = torch.cat([index + count, index])
    return F.cross_entropy(logits, partners)


def nt_xent_official(first: torch.Tensor, second: torch.Tensor, temperature: float) -> torch.Tensor:
    """NT-Xent as the official code computes it: pytorch-metric-learning's ``NTXentLoss`` on the 2M embeddings,
    ``first[i]`` and ``second[i]`` sharing a label (so each is the other's only positive).

    For the 2M (embedding, partner) pairs, with s the cosine similarities / tau of the embedding to the others and m
    their maximum (detached), n = exp(s_partner - m) and d = n + sum over the negatives of exp(s_negative - m), the
    term is -log(n / d + tiny), tiny = ``torch.finfo(dtype).tiny`` (1.18e-38 in float32); the loss is their mean.
    While n / d is well above tiny this is :func:`nt_xent` up to rounding. Where it is not (the partner's s more
    than 87.3 below the log-sum-exp of the row, which a cosine 87.3 tau below the best negative's is enough for:
    0.044 at tau = 5e-4, out of reach at tau = 0.05, where it would be 4.4) the term saturates at -log(tiny) =
    87.34, and its gradient fades to exactly 0 once n underflows (s_partner - m below about -103).

    Args:
        first: (M, d), e_1 ... e_M (DeCLUTR: the AN anchors).
        second: (M, d), their partners e_{M+1} ... e_2M (DeCLUTR: the mean positives).
        temperature: tau.

    References:
        - pytorch-metric-learning, ``losses/ntxent_loss.py`` (``NTXentLoss._compute_loss``), the version installed
          here (the same formula in 0.9.98, the official code's lower bound).
        - JohnGiorgi/DeCLUTR, ``declutr/losses/pytorch_metric_learning.py`` (the ``nt_xent`` loss of the configs).

    Official code:
        The same function, but its configs train under fp16 autocast (``use_amp``), where the similarity matrix is
        float16, so tiny is float16's (6.1e-5) and the cap -log(tiny) = 9.70, within reach at tau = 0.05 too (read
        from the code; not run under CUDA autocast). This form is always float32 (the loss module's
        :func:`~sentemb.objectives.full_precision.fp32_loss`), cap 87.34.
    """
    from pytorch_metric_learning.losses import NTXentLoss

    _check_pairs(first, second)
    labels = torch.arange(first.shape[0], device=first.device).repeat(2)  # e_i and e_{i+M}: one label
    return NTXentLoss(temperature=temperature)(torch.cat([first, second]), labels)


class DeclutrContrastiveLoss(nn.Module):
    """Eq. 2 with mean positives: each anchor's P positive embeddings are averaged, then NT-Xent over the 2AN
    embeddings (anchors, mean positives), in float32 whatever the encoder ran in.

    Args:
        temperature: tau of Eq. 2 (0.05).
        loss_form: ``exact`` (:func:`nt_xent`, Eq. 2 as a cross entropy) or ``official`` (:func:`nt_xent_official`,
            pytorch-metric-learning's NTXentLoss, each pair's term capped at 87.34).

    Inputs: anchors (AN, d), positives (AN, P, d), anchor-major (row i holds anchor i's positives) -> scalar.

    References:
        - Giorgi et al. (2021), "DeCLUTR", §3.1, Eq. 2 and the mean positive before it.

    Official code:
        ``loss_form="official"`` is its loss; it runs it under fp16 autocast, where the cap is 9.70
        (:func:`nt_xent_official`).
    """

    def __init__(self, temperature: float = 0.05, loss_form: str = "exact") -> None:
        super().__init__()
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        if loss_form not in LOSS_FORMS:
            raise ValueError(f"loss_form must be one of {LOSS_FORMS}, got {loss_form!r}")
        self.temperature, self.loss_form = temperature, loss_form
        self._loss = nt_xent if loss_form == "exact" else nt_xent_official

    @fp32_loss
    def forward(self, anchor_embeddings: torch.Tensor, positive_embeddings: torch.Tensor) -> torch.Tensor:
        if positive_embeddings.dim() != 3 or positive_embeddings.shape[0] != anchor_embeddings.shape[0]:
            raise ValueError(
                "positive_embeddings must be (AN, P, d) with the anchors' AN first; got anchors "
                f"{tuple(anchor_embeddings.shape)} and positives {tuple(positive_embeddings.shape)}"
            )
        mean_positives = positive_embeddings.mean(dim=1)
        return self._loss(anchor_embeddings, mean_positives, self.temperature)


def declutr_loss(contrastive_loss: torch.Tensor, mlm_loss: torch.Tensor) -> torch.Tensor:
    """Eq. 3: L = L_contrastive + L_MLM (unweighted)."""
    return contrastive_loss + mlm_loss


PROJECTIONS = ("none", "linear", "mlp")


def projection_head(kind: str, dim: int, out_dim: int) -> nn.Module:
    """DeCLUTR Figure S1a (SimCLR's head, the supplement's Eq. S1): z = W2 sigma(W1 e), W1 (dim x dim), W2 (out_dim x
    dim), sigma a ReLU (``mlp``) or the identity (``linear``); ``none`` is e itself. Used in training only: the
    evaluated embedding is e. Each span's embedding is projected, then a anchor's positives are averaged (our order;
    the paper does not say)."""
    if kind == "none":
        return nn.Identity()
    return nn.Sequential(nn.Linear(dim, dim), nn.ReLU() if kind == "mlp" else nn.Identity(), nn.Linear(dim, out_dim))


class MemoryBankContrastiveLoss(nn.Module):
    """Eq. 2 with a cross-batch memory (DeCLUTR Figure S1b, XBM): pytorch-metric-learning's ``CrossBatchMemory``
    around its ``NTXentLoss``, as the supplement's experiment used. The 2AN embeddings of a step (anchors, then
    mean positives) are enqueued, and every pair is contrasted with the rest of the batch plus the queue (up to
    ``memory_size`` earlier embeddings, oldest replaced first). Each pair gets a label no earlier pair had, so an
    embedding in the queue is only ever a negative. With an empty queue the loss is :func:`nt_xent_official`, which
    is :func:`nt_xent` except where a pair's term reaches its cap (small tau: Figure S1b's 1e-3 points can): the
    memory bank always computes the official form, whatever ``loss_form`` says.

    Resuming restores the queue exactly: the memory tensors are buffers of the wrapped module, and the queue
    position, its filled flag and the label counter travel in this module's extra state."""

    def __init__(self, temperature: float, dim: int, memory_size: int) -> None:
        super().__init__()
        from pytorch_metric_learning.losses import CrossBatchMemory, NTXentLoss

        self.memory = CrossBatchMemory(NTXentLoss(temperature=temperature), embedding_size=dim, memory_size=memory_size)
        self.pairs_seen = 0

    @fp32_loss
    def forward(self, anchor_embeddings: torch.Tensor, positive_embeddings: torch.Tensor) -> torch.Tensor:
        count = anchor_embeddings.shape[0]
        if 2 * count > self.memory.memory_size:
            raise ConfigError(
                f"memory_size {self.memory.memory_size} is smaller than a step's {2 * count} embeddings "
                "(2 x anchors): make it at least that"
            )
        labels = torch.arange(self.pairs_seen, self.pairs_seen + count, device=anchor_embeddings.device).repeat(2)
        self.pairs_seen += count
        return self.memory(torch.cat([anchor_embeddings, positive_embeddings.mean(dim=1)]), labels)

    def get_extra_state(self) -> dict:
        return {
            "queue_idx": int(self.memory.queue_idx),
            "has_been_filled": bool(self.memory.has_been_filled),
            "pairs_seen": self.pairs_seen,
        }

    def set_extra_state(self, state: dict) -> None:
        self.memory.queue_idx, self.memory.has_been_filled = state["queue_idx"], state["has_been_filled"]
        self.pairs_seen = state["pairs_seen"]


class DeCLUTR(TrainingObjective):
    """DeCLUTR's objective, Eq. 3 (§3): NT-Xent over anchors and mean positives (Eq. 2) + ``mlm_weight`` * L_MLM.

    Rows are documents; :meth:`select_rows` tokenises them with the encoder's tokenizer and keeps those with at
    least ``min_document_tokens`` subword tokens: by default 2 * A * l_max (the official sampler's bound), so that
    the training set would depend on A and l_max; the paper keeps one set, the OpenWebText documents of >= 2048
    tokens (§4), for every setting, which an explicit ``min_document_tokens`` (>= 2 * A * l_max) fixes. Spans are
    encoded as ``[CLS] span [SEP]`` with the encoder's pooler (``avg``, mean pooling, in the paper's configuration)
    and cut to ``max_len`` tokens with the special tokens (the official code cuts at 512).
    ``contrastive=False`` with ``mlm_weight=1`` is Figure 3's "MLM only"; ``mlm_weight=0`` its "contrastive only".
    """

    name = "declutr"
    reference = "DeCLUTR (Giorgi et al., ACL 2021)"
    rows = "documents"
    params = (
        Param("num_anchors", int, 2, "A, anchors sampled per document (§3.1)", low=1),
        Param("num_positives", int, 2, "P, positives sampled per anchor (§3.1)", low=1),
        Param("min_span_len", int, 32, "l_min, the shortest span in tokens (§3.1.1)", low=1),
        Param("max_span_len", int, 512, "l_max, the longest span in tokens (§3.1.1)", low=1),
        Param("temperature", float, 0.05, "tau of Eq. 2", low=0.0, low_open=True),
        Param("contrastive", bool, True, "include L_contrastive (Figure 3: false = MLM only)"),
        Param("mlm_weight", float, 1.0, "weight of L_MLM in Eq. 3 (1 in the paper; 0 = contrastive only)", low=0.0),
        Param(
            "positive_views",
            str,
            "any",
            "which positives (Figure 2c): overlapping/adjacent/subsumed, or one view",
            choices=POSITIVE_VIEWS,
        ),
        Param(
            "projection",
            str,
            "none",
            "head between pooler and loss, training only (Figure S1a, Eq. S1)",
            choices=PROJECTIONS,
        ),
        Param("projection_dim", int, 128, "output width of the projection head (Figure S1a)", low=1),
        Param(
            "memory_size",
            int,
            0,
            "queue of a cross-batch memory of embeddings, extra negatives (Figure S1b); 0: none",
            low=0,
        ),
        Param(
            "min_document_tokens",
            int,
            0,
            "train on the documents of at least this many subword tokens, one set "
            "for every A and l_max (the paper: OpenWebText documents of >= 2048 tokens); >= 2 * A * l_max; 0: the "
            "sampler's bound 2 * A * l_max",
            low=0,
            added=True,
        ),
        Param(
            "loss_form",
            str,
            "exact",
            "NT-Xent as Eq. 2 (exact) or as the official code's pytorch-metric-learning "
            "NTXentLoss (official: each pair's loss capped at -log(float32 tiny) = 87.3); a memory bank is always "
            "the official form",
            choices=LOSS_FORMS,
            added=True,
        ),
    )

    def __init__(
        self,
        encoder: SentenceEncoder,
        max_len: int,
        num_anchors: int,
        num_positives: int,
        min_span_len: int,
        max_span_len: int,
        temperature: float,
        contrastive: bool,
        mlm_weight: float,
        positive_views: str,
        projection: str,
        projection_dim: int,
        memory_size: int,
        min_document_tokens: int = 0,
        loss_form: str = "exact",
    ) -> None:
        super().__init__(encoder, max_len)
        self.num_anchors, self.num_positives = num_anchors, num_positives
        self.min_span_len, self.max_span_len = min_span_len, max_span_len
        #: the training set: documents of at least this many subword tokens (0 in the spec: the sampler's bound)
        self.min_document_tokens = min_document_tokens or minimum_document_length(num_anchors, max_span_len)
        self.contrastive, self.mlm_weight, self.positive_views = contrastive, mlm_weight, positive_views
        self.sequences_per_row = num_anchors * (1 + num_positives)  # spans encoded per document
        self.projection = projection_head(projection, encoder.dim, projection_dim)
        self.contrastive_loss = (
            DeclutrContrastiveLoss(temperature, loss_form)
            if memory_size == 0
            else MemoryBankContrastiveLoss(
                temperature, projection_dim if projection != "none" else encoder.dim, memory_size
            )
        )
        self.mlm_loss = MaskedLMLoss(tied_mlm_head(encoder)) if mlm_weight > 0 else None

    @classmethod
    def check_combination(cls, params: dict) -> list[str]:
        problems = []
        if params["min_span_len"] > params["max_span_len"]:
            problems.append(f"min_span_len {params['min_span_len']} > max_span_len {params['max_span_len']}")
        if not params["contrastive"] and params["mlm_weight"] == 0:
            problems.append("contrastive=false with mlm_weight=0 leaves no loss")
        bound = minimum_document_length(params["num_anchors"], params["max_span_len"])
        if 0 < params["min_document_tokens"] < bound:
            problems.append(
                f"min_document_tokens {params['min_document_tokens']} is below the {bound} tokens the span "
                f"sampler needs (2 * num_anchors * max_span_len = 2 * {params['num_anchors']} * "
                f"{params['max_span_len']}): set it to at least {bound}, or 0 for exactly that bound"
            )
        return problems

    def select_rows(self, documents: Sequence[Document] | HubCorpus) -> Sequence[TokenisedDocument]:
        """The documents of at least ``min_document_tokens`` subword tokens (all long enough for A anchors), as
        subword token ids: a list of documents tokenised in memory, a lazy corpus (the full profile's OpenWebText)
        through its token store on disk (:func:`~sentemb.data.documents.kept_documents`)."""
        return kept_documents(documents, self.encoder.tokenizer, self.min_document_tokens)

    def sample_spans(self, documents: Sequence[TokenisedDocument], rng: random.Random):
        """(anchors: AN token-id sequences, positives: AN lists of P), anchor-major, document by document."""
        anchors, positives = [], []
        for document in documents:
            try:
                spans = sample_anchor_positive_spans(
                    document.token_ids,
                    rng,
                    num_anchors=self.num_anchors,
                    num_positives=self.num_positives,
                    min_span_len=self.min_span_len,
                    max_span_len=self.max_span_len,
                    positive_views=self.positive_views,
                )
            except DocumentTooShortError as exc:
                raise DocumentTooShortError(f"document {document.id!r}: {exc}") from None
            anchors.extend(spans.anchor_tokens)
            positives.extend(spans.positive_tokens)
        return anchors, positives

    def _inputs(self, spans: Sequence[Sequence[int]]) -> dict[str, torch.Tensor]:
        tokenizer = self.encoder.tokenizer
        cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id  # [CLS]/[SEP] (BERT), <s>/</s> (RoBERTa)
        if cls is None or sep is None:
            raise ConfigError(f"the tokenizer of {self.encoder.name or 'this encoder'} has no [CLS]/[SEP] tokens")
        room = min(self.max_len, self.encoder.max_positions) - 2
        if room < 1:
            raise ConfigError(f"max_len {self.max_len} leaves no room for a span between the special tokens")
        ids = [[cls, *span[:room], sep] for span in spans]
        batch = tokenizer.pad({"input_ids": ids}, return_tensors="pt")
        return {k: v for k, v in batch.items() if k in ("input_ids", "attention_mask")}

    def forward(self, rows: Sequence[TokenisedDocument], rng: random.Random) -> torch.Tensor:
        anchors, positives = self.sample_spans(rows, rng)
        anchor_inputs = self._inputs(anchors)
        loss = torch.zeros((), device=self.encoder.device)
        if self.mlm_loss is not None:  # the masked anchors serve both terms (official code)
            tokenizer = self.encoder.tokenizer
            generator = torch.Generator().manual_seed(rng.getrandbits(63))
            anchor_inputs["input_ids"], anchor_inputs["labels"] = mask_tokens_for_mlm(
                anchor_inputs["input_ids"],
                mask_token_id=tokenizer.mask_token_id,
                vocab_size=len(tokenizer),
                special_token_ids=set(tokenizer.all_special_ids),
                generator=generator,
            )
            labels = anchor_inputs.pop("labels")  # stays on the CPU: MaskedLMLoss finds the selected positions there
            anchor_inputs = self.encoder.to_device(anchor_inputs, self.max_len)
            anchor_embeddings, token_states = self.encoder.forward_with_last_hidden_state(**anchor_inputs)
            loss = loss + self.mlm_weight * self.mlm_loss(token_states, labels)
        else:
            anchor_embeddings = self.encoder(**self.encoder.to_device(anchor_inputs, self.max_len), training=True)
        if self.contrastive:
            flat = [span for spans in positives for span in spans]  # anchor-major: anchor 0's P, anchor 1's P, ...
            flat_inputs = self.encoder.to_device(self._inputs(flat), self.max_len)
            positive_embeddings = self.projection(self.encoder(**flat_inputs, training=True))
            positive_embeddings = positive_embeddings.view(len(anchors), self.num_positives, -1)
            loss = loss + self.contrastive_loss(
                *self.global_batch(self.projection(anchor_embeddings), positive_embeddings)
            )
        return loss
