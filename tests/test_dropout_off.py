"""Every "dropout off" and every dropout setting, checked on the real all-MiniLM-L6-v2 (transformers' BERT), not a toy.

In transformers 5 BERT's self-attention applies attention-probability dropout from its own ``training`` flag, with
no ``nn.Dropout`` module, so switching only the ``nn.Dropout`` modules to eval leaves attention dropout on (1 - cos
between two such "off-dropout" passes was 0.035 on wiki sentences). These tests fail on that code.
"""

import pytest
import torch

from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives.off_dropout_infonce import encode_without_dropout
from sentemb.objectives.registry import build_objective

SENTENCES = [
    "A man is playing a guitar on the stage.",
    "Two dogs run across a snowy field.",
    "The committee postponed its decision until next spring.",
    "She reads the paper every morning.",
    "A child is slicing a tomato in the kitchen.",
    "Stock markets fell sharply after the announcement.",
]


def _minilm(dropout=None) -> SentenceEncoder:
    return SentenceEncoder.from_name("all-MiniLM-L6-v2", "cls_before_pooler", dropout=dropout, seed=0)


def _training_pass(encoder):
    return encoder(**encoder.tokenize(SENTENCES, 32), training=True)


def test_off_dropout_passes_are_identical_and_equal_the_eval_pass():
    encoder = _minilm()
    encoder.train()
    first = encode_without_dropout(encoder, lambda: _training_pass(encoder))
    second = encode_without_dropout(encoder, lambda: _training_pass(encoder))
    assert first.requires_grad  # gradients kept (the official code does not detach)
    assert torch.equal(first, second)
    assert all(m.training for m in encoder.modules())  # training mode restored everywhere
    encoder.eval()
    with torch.no_grad():
        evaluated = _training_pass(encoder)
    torch.testing.assert_close(first.detach(), evaluated, rtol=0, atol=1e-6)
    encoder.train()
    assert not torch.allclose(_training_pass(encoder), _training_pass(encoder))  # dropout is on again


def test_off_dropout_restores_each_submodule_mode_as_it_was():
    encoder = _minilm()
    encoder.train()
    frozen = encoder.backbone.embeddings
    frozen.eval()  # a submodule deliberately in eval mode stays so
    encode_without_dropout(encoder, lambda: _training_pass(encoder))
    assert not any(m.training for m in frozen.modules())
    assert encoder.backbone.encoder.training and encoder.training


def test_the_simcse_pp_objective_off_dropout_negatives_are_the_eval_embeddings():
    encoder = _minilm()
    objective = build_objective("simcse_pp", {"negatives": "off_dropout", "m": 0.9}, encoder, max_len=32)
    objective.train()
    z = encode_without_dropout(objective.encoder, lambda: objective.embed(SENTENCES))
    objective.eval()
    with torch.no_grad():
        assert torch.allclose(z.detach(), objective.embed(SENTENCES), atol=1e-6)


@pytest.mark.parametrize("p", [0.0, 0.1])
def test_the_dropout_sweep_sets_hidden_and_attention_dropout(p):
    """SimCSE Table 3's p (and the non-contrastive paper's dropout cells): the spec's dropout reaches both the hidden
    and the attention dropout; at p = 0 two training passes are identical, so no dropout is left anywhere."""
    encoder = _minilm(dropout=p)
    config = encoder.backbone.config
    assert config.hidden_dropout_prob == p and config.attention_probs_dropout_prob == p
    encoder.train()
    same = torch.equal(_training_pass(encoder), _training_pass(encoder))
    assert same == (p == 0.0)


def test_attention_dropout_alone_makes_views_differ():
    """BERT's attention dropout (transformers 5: its p is the attention module's ``dropout.p``, applied while the
    attention module itself is training) is a dropout of its own: with hidden dropout 0 and attention dropout 0.1 the
    two views differ; with the spec's p = 0 (previous test) they do not."""
    encoder = _minilm(dropout=0.0)
    attention = [m for m in encoder.backbone.modules() if type(m).__name__.endswith("SelfAttention")]
    assert attention
    for module in attention:
        module.dropout.p = 0.1
    encoder.train()
    assert not torch.equal(_training_pass(encoder), _training_pass(encoder))


def test_the_fixed_mask_shares_one_dropout_mask_between_the_views():
    """SimCSE Table 3 "fixed 0.1": one encoding (one dropout mask) is both views, dropout on."""
    encoder = _minilm()
    objective = build_objective("simcse_unsup", {"fixed_dropout_mask": True}, encoder, max_len=32)
    objective.train()
    views = []
    objective.loss.forward = lambda z1, z2: views.append((z1, z2)) or (z1 - z2).sum()
    objective(SENTENCES, None)
    ((z1, z2),) = views
    assert torch.equal(z1, z2)
    objective.eval()
    with torch.no_grad():
        assert not torch.allclose(z1.detach(), objective.embed(SENTENCES), atol=1e-4)  # it was a dropout view
