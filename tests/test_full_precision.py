"""Every objective's loss is computed in fp32 while the encoder runs under bf16 autocast (CPU) or fp16 autocast (CUDA,
the full profile's precision; run where a GPU is, skipped elsewhere).

Each registered objective gets the same fp32 embeddings twice, once under autocast and once without: the
loss values and their gradients with respect to the embeddings must agree to fp32 tolerance. (Before the fix the
contrastive logits were bf16: SimCSE's loss gradient was off by ~3 %, Barlow Twins' loss by ~1 %.) The encoder is
replaced by fixed embeddings and the projectors by the identity, so that only the loss is compared.
"""

import random

import pytest
import torch
from torch import nn

from sentemb.data.documents import TokenisedDocument
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives import registry
from sentemb.objectives.declutr import DeclutrContrastiveLoss
from sentemb.objectives.tensor_norm import TNCSELoss

ROWS = {
    "sentences": [f"sentence number {i} about a topic" for i in range(16)],
    "nli_triples": [(f"premise {i}", f"entailment {i}", f"contradiction {i}") for i in range(16)],
    "sentence_windows": [tuple(f"sentence {i + k} of an article" for k in range(4)) for i in range(16)],
    "documents": [TokenisedDocument(f"doc {i}", tuple(range(2000 + 100 * i, 2200 + 100 * i))) for i in range(4)],
}
DECLUTR_SPANS = {"min_span_len": 4, "max_span_len": 14}
PARAMS = {  # every loss path of every registered objective
    "simcse_unsup": [
        {},
        {"fixed_dropout_mask": True},
        {"similarity": "dot"},
        {"mlm_weight": 0.1},
        {"two_encoders": True},
    ],
    "simcse_next_sentence": [{}, {"context": "next_3_sentences", "two_encoders": True}],
    "simcse_sup": [
        {},
        {"hard_negative_alpha": 2.0},
        {"similarity": "dot"},
        {"negatives": "none"},
        {"negatives": "contradiction+neutral", "hard_negative_alpha": 0.5},
        {"mlm_weight": 1.0},
    ],
    "simcse_pp": [
        {"negatives": "off_dropout", "m": 0.9, "dcl_weight": 0.1},
        {"dcl_weight": 0.1, "dcl_variant": "official", "trade_off": "official", "m": 0.9},
        {"bt_weight": 1.0, "bt_padding": 8},
    ],
    "barlow_twins": [{"projector_width": 32}],
    "vicreg": [{"projector_width": 32}],
    "barlow_twins_pairs": [{"projector_width": 32}],
    # random embeddings have negative [CLS] cosines: the official clamp keeps -log cos (Eq. 6) finite
    "tncse": [{"clamp_negative_cosine": True}, {"clamp_negative_cosine": True, "halve_norm_term": True, "nce": False}],
    "tncse_single": [{"clamp_negative_cosine": True}, {"tn_weight": 0.0}],
    "declutr": [
        DECLUTR_SPANS,
        {**DECLUTR_SPANS, "mlm_weight": 0.0, "memory_size": 64},
        {**DECLUTR_SPANS, "contrastive": False},
        {**DECLUTR_SPANS, "loss_form": "official", "positive_views": "subsumed_official", "min_document_tokens": 60},
    ],
}


def _objective(name, params):
    encoders = [
        SentenceEncoder.from_name("tiny-random-bert", "cls_before_pooler", seed=0)
        for _ in range(registry.encoders_needed(name))
    ]

    objective = registry.build_objective(name, params, encoders, max_len=16)
    if hasattr(objective, "projector"):
        objective.projector = nn.Identity()
    if getattr(objective, "mlp", None) is not None:  # SimCSE's second encoder's outputs pass the MLP too
        objective.mlp = nn.Identity()
    return objective


CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (fp16 autocast)")
AUTOCASTS = [
    pytest.param("cpu", torch.bfloat16, id="cpu-bf16"),
    pytest.param("cuda", torch.float16, id="cuda-fp16", marks=CUDA),
]


def _loss_and_grad(objective, rows, embeddings, autocast=None):
    """The objective's loss with ``embed`` returning slices of ``embeddings`` (a fresh slice per call), under
    ``autocast`` = (device type, dtype) when given."""
    leaf = embeddings.clone().requires_grad_(True)
    used = [0]

    def embed(sentences):
        start = used[0]
        used[0] += len(sentences)
        return leaf[start : start + len(sentences)]

    def cls_and_pooler(input_ids, attention_mask, token_type_ids=None):  # TNCSE: ([CLS], pooler_output) slices
        n = input_ids.shape[0]
        return embed([None] * n), embed([None] * n)

    def pooled(input_ids, attention_mask, token_type_ids=None, training=True):  # DeCLUTR's spans
        return embed([None] * input_ids.shape[0])

    def pooled_and_states(input_ids, attention_mask, token_type_ids=None):  # DeCLUTR's masked anchors
        n, length = input_ids.shape
        return embed([None] * n), embed([None] * (n * length)).view(n, length, -1)

    objective.embed = embed
    for module in objective.modules():
        if isinstance(module, SentenceEncoder):
            module.forward_with_pooler_output = cls_and_pooler
            module.forward = pooled
            module.forward_with_last_hidden_state = pooled_and_states
    torch.manual_seed(0)  # the Gaussian padding rows of SimCSE++'s BT probe
    with torch.autocast(
        autocast[0] if autocast else "cpu", dtype=autocast[1] if autocast else None, enabled=autocast is not None
    ):
        loss = objective(rows, random.Random(0))
    loss.backward()
    return loss.detach(), leaf.grad


@pytest.mark.parametrize("device, dtype", AUTOCASTS)
@pytest.mark.parametrize("name, params", [(n, p) for n, ps in PARAMS.items() for p in ps])
def test_every_objective_loss_is_fp32_under_autocast(name, params, device, dtype):
    assert set(PARAMS) == set(registry.TRAINING_OBJECTIVES), "a new objective needs its loss paths listed here"

    def fresh():  # one objective per precision: a memory bank's queue carries over from one call to the next
        torch.manual_seed(0)  # the modules an objective creates (DeCLUTR's MLM head)
        return _objective(name, params).to(device)

    objective = fresh()
    rows = ROWS[objective.rows]
    if params.get("negatives") == "contradiction+neutral":  # SimCSE Table 7: a neutral hypothesis per row too
        rows = [(*row, f"neutral {i}") for i, row in enumerate(rows)]
    mlm = name == "declutr" or params.get("mlm_weight")
    width = objective.encoder.dim if mlm else 384  # an MLM head reads encoder-wide token states
    embeddings = torch.randn(64 * len(rows), width, generator=torch.Generator().manual_seed(1)).to(device)
    loss32, grad32 = _loss_and_grad(objective.to(device), rows, embeddings)
    loss16, grad16 = _loss_and_grad(fresh(), rows, embeddings, (device, dtype))
    assert loss16.dtype == torch.float32
    torch.testing.assert_close(loss16, loss32, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(grad16, grad32, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("device, dtype", AUTOCASTS)
@pytest.mark.parametrize(
    "loss, shapes",
    [
        (TNCSELoss(), [(8, 384)] * 4),  # TNCSE: two encoders' [CLS] and pooler outputs, interleaved views
        (DeclutrContrastiveLoss(), [(4, 384), (4, 2, 384)]),  # DeCLUTR: anchors (AN, d) and positives (AN, P, d)
    ],
)
def test_the_loss_modules_of_papers_to_come_are_fp32_too(loss, shapes, device, dtype):
    # positive entries: positive cosines, so that -log cos (TNCSE Eq. 7) is defined
    inputs = [torch.rand(*s, generator=torch.Generator().manual_seed(i)).to(device) for i, s in enumerate(shapes)]
    results = {}
    for autocast in (False, True):
        leaves = [x.clone().requires_grad_(True) for x in inputs]
        with torch.autocast(device, dtype=dtype, enabled=autocast):
            value = loss.to(device)(*leaves)
        value.backward()
        results[autocast] = (value.detach(), [x.grad for x in leaves])
    torch.testing.assert_close(results[True][0], results[False][0], rtol=1e-5, atol=1e-6)
    for g16, g32 in zip(results[True][1], results[False][1]):
        torch.testing.assert_close(g16, g32, rtol=1e-4, atol=1e-7)
