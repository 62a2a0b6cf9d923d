"""SimCSE Table 2: ordered sentence windows, the next-sentence objectives, and two encoders."""

import random

import pytest
import torch
from conftest import needs_mirror

from sentemb.data.sentence_windows import article_sentences, load_sentence_windows, windows_of
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives.registry import build_objective

WINDOWS = [tuple(f"sentence {i + k} of the article" for k in range(4)) for i in range(8)]


def test_windows_are_consecutive_sentences_without_unk():
    sentences = [f"s{i} is here" for i in range(6)] + ["an <unk> word here"] + [f"t{i} is here" for i in range(5)]
    windows = windows_of(sentences)
    assert windows[0] == ("s0 is here", "s1 is here", "s2 is here", "s3 is here")
    assert len(windows) == 3 + 2 and not any("<unk>" in s for w in windows for s in w)  # 3 before, 2 after
    assert all(len(w) == 4 for w in windows)
    assert len(load_sentence_windows("synthetic")) > 100


@needs_mirror
def test_articles_split_into_sentences_as_the_mirrors_files_were():
    import pysbd

    from sentemb.data.corpora import load_sentences
    from sentemb.data.documents import load_documents

    segmenter = pysbd.Segmenter(language="en", clean=False)
    mirror = set(load_sentences("wiki_sentences_combined"))
    valid = [d for d in load_documents("wikitext2_articles") if "<unk>" not in d.text][:3]  # raw valid/test articles
    sentences = [s for d in valid for s in article_sentences(d.text, segmenter)]
    assert len(sentences) > 50 and all(len(s.split()) >= 3 for s in sentences)
    assert sum(s in mirror for s in sentences) / len(sentences) > 0.95  # the mirror's pysbd split of the same text


@pytest.mark.parametrize("context, allowed", [("next_sentence", {1}), ("next_3_sentences", {1, 2, 3})])
def test_the_positive_is_the_next_sentence_or_one_of_the_next_three(context, allowed):
    objective = build_objective(
        "simcse_next_sentence",
        {"context": context},
        SentenceEncoder.from_name("tiny-random-bert", "cls_before_pooler", seed=0),
        max_len=16,
    )
    rng = random.Random(0)
    drawn = [row.index(p) for _ in range(20) for row, p in zip(WINDOWS, objective.positives(WINDOWS, rng))]
    assert set(drawn) == allowed
    assert objective.positives(WINDOWS, random.Random(5)) == objective.positives(WINDOWS, random.Random(5))
    seen = []
    objective.embed = lambda sentences: (seen.append(list(sentences)), torch.randn(len(sentences), 8))[1]
    objective(WINDOWS, random.Random(0))
    assert seen[0][:8] == [w[0] for w in WINDOWS]  # one pass of 2N with one encoder: anchors, then positives


@pytest.mark.parametrize("name, rows", [("simcse_next_sentence", WINDOWS), ("simcse_unsup", [w[0] for w in WINDOWS])])
def test_two_encoders_are_independent_copies_trained_jointly_and_the_first_is_evaluated(name, rows):
    encoder = SentenceEncoder.from_name("tiny-random-bert", "cls_before_pooler", seed=0)
    torch.manual_seed(0)
    objective = build_objective(name, {"two_encoders": True}, encoder, max_len=16)
    first, second = objective.encoder, objective.positive_encoder
    assert second is not None and second.backbone is not first.backbone
    before = [p.detach().clone() for p in second.backbone.parameters()]
    assert all(torch.equal(a, b) for a, b in zip(first.backbone.parameters(), before))  # both start from the backbone
    optimizer = torch.optim.SGD(objective.parameters(), lr=1.0)
    objective.train()
    objective(rows, random.Random(0)).backward()
    optimizer.step()
    assert any(not torch.equal(a, b) for a, b in zip(second.backbone.parameters(), before))
    assert any(not torch.equal(a, b) for a, b in zip(first.backbone.parameters(), second.backbone.parameters()))
    assert objective.evaluation_encoder() is first
    assert any(k.startswith("positive_encoder.") for k in objective.state_dict())  # checkpointed and resumed
