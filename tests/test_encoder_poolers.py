"""Poolers (SimCSE's five) and the evaluation path of the SentenceEncoder, on a tiny random BERT."""

import numpy as np
import pytest
import torch

from sentemb.errors import ConfigError
from sentemb.models.encoder import SentenceEncoder
from sentemb.models.poolers import pool, uses_checkpoint_mlp


def test_masked_mean_ignores_padding():
    hidden = torch.tensor([[[1.0, 1.0], [3.0, 3.0], [100.0, 100.0]]])
    mask = torch.tensor([[1, 1, 0]])
    assert pool("avg", hidden, None, mask).tolist() == [[2.0, 2.0]]
    assert pool("cls", hidden, None, mask).tolist() == [[1.0, 1.0]]


def test_first_last_and_top2_use_the_right_layers():
    layers = [torch.full((1, 2, 1), float(k)) for k in range(4)]  # embeddings, layer 1, 2, 3
    mask = torch.ones(1, 2, dtype=torch.long)
    assert pool("avg_first_last", layers[-1], layers, mask).item() == pytest.approx((1 + 3) / 2)
    assert pool("avg_top2", layers[-1], layers, mask).item() == pytest.approx((2 + 3) / 2)


def test_the_checkpoint_mlp_only_on_the_evaluation_path_of_cls():
    assert uses_checkpoint_mlp("cls", False) and not uses_checkpoint_mlp("cls", True)
    assert not uses_checkpoint_mlp("cls_before_pooler", False) and not uses_checkpoint_mlp("cls_before_pooler", True)
    assert not uses_checkpoint_mlp("avg", False)


@pytest.fixture(scope="module")
def tiny():
    return SentenceEncoder.from_name("tiny-random-bert", "cls_before_pooler", seed=3)


def test_the_encoder_returns_cls_and_applies_the_checkpoint_pooler_only_for_cls_at_evaluation(tiny):
    batch = tiny.tokenize(["a man is playing a guitar ."], max_length=None)
    tiny.eval()
    with_mlp = SentenceEncoder(tiny.backbone, tiny.tokenizer, "cls")
    with torch.no_grad():
        cls = tiny.backbone(**batch).last_hidden_state[:, 0]
        pooled = torch.tanh(tiny.backbone.pooler.dense(cls))
        assert torch.allclose(tiny(**batch, training=True), cls)  # the MLP of training belongs to the objective
        assert torch.allclose(tiny(**batch, training=False), cls)
        assert torch.allclose(with_mlp(**batch, training=True), cls)
        assert torch.allclose(with_mlp(**batch, training=False), pooled)


def test_encode_keeps_order_dedupes_and_is_batch_independent(tiny):
    sentences = [
        "short one .",
        "a much longer sentence with quite a few more words in it .",
        "short one .",
        "mid size text",
    ]
    one = tiny.encode(sentences, batch_size=1)
    many = tiny.encode(sentences, batch_size=64)
    assert one.shape == (4, tiny.dim)
    np.testing.assert_allclose(one, many, atol=1e-5)
    np.testing.assert_array_equal(one[0], one[2])
    single = tiny.encode(["mid size text"])
    np.testing.assert_allclose(single[0], one[3], atol=1e-5)


def test_encode_does_not_truncate_below_the_position_limit(tiny):
    long = " ".join(["word"] * 100)  # > 32 tokens: training length, not evaluation length
    full = tiny.encode([long])
    cut = tiny.encode([" ".join(["word"] * 30)])
    assert not np.allclose(full, cut)
    assert tiny.truncated_sentences == 0


def test_unknown_pooler_and_bad_model_dir_are_clear_errors(tmp_path):
    with pytest.raises(ConfigError, match="unknown pooler"):
        SentenceEncoder.from_name("tiny-random-bert", "max")
    with pytest.raises(ConfigError, match="no config.json"):
        SentenceEncoder.from_name(str(tmp_path), "avg")
    with pytest.raises(ConfigError, match="does not exist"):
        SentenceEncoder.from_name("./no/such/model", "avg")


def test_roberta_style_positions_leave_out_the_padding_offset():
    """RoBERTa numbers positions from pad_token_id + 1: of its 514 position embeddings, 512 are usable. With 514 the
    full profile's DeCLUTR spans (and any evaluation sentence that long) indexed past the table (found on a GPU)."""
    from transformers import RobertaConfig, RobertaModel

    tokenizer = SentenceEncoder.from_name("tiny-random-bert", "avg").tokenizer
    config = RobertaConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=514,
        type_vocab_size=1,
        pad_token_id=1,
    )
    encoder = SentenceEncoder(RobertaModel(config), tokenizer, "avg")
    assert encoder.max_positions == 512
    long = " ".join(["word"] * 700)
    assert encoder.encode([long, "short"]).shape == (2, 32)
    assert encoder.truncated_sentences == 1
