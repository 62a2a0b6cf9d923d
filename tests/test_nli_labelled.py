"""SimCSE Tables 4 and 7's data: SNLI pairs by label, and the hard-negative options of supervised SimCSE."""

import math
import random

import pytest
import torch
from conftest import needs_mirror

from sentemb.errors import ConfigError
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives import SupervisedInfoNCE, UnsupervisedInfoNCE
from sentemb.objectives.registry import build_objective


@needs_mirror
def test_labelled_pairs_rebuild_the_mirrors_triples_and_split_by_label():
    from sentemb.data.corpora import load_nli_triples
    from sentemb.data.nli_labelled import labelled_pairs, nli_quads, positive_pairs

    pairs = labelled_pairs()
    assert len(pairs) == 9842 + 9824  # SNLI 1.0 dev + test
    counts = {label: len(positive_pairs(label)) for label in ("entailment", "neutral", "contradiction")}
    assert counts == {"entailment": 6697, "neutral": 6454, "contradiction": 6515}
    assert len(positive_pairs("all")) == len(pairs)
    assert pairs[0][0] == "Two women are embracing while holding to go packages."  # detokenised: no " ."
    quads = nli_quads()
    triples = load_nli_triples("snli_devtest_for_simcse")
    assert {q[:3] for q in quads} <= set(triples) and len(quads) == 5189
    label_of = {(p, h): label for p, h, label in pairs}
    assert all(
        label_of[(p, e)] == "entailment" and label_of[(p, c)] == "contradiction" and label_of[(p, n)] == "neutral"
        for p, e, c, n in quads
    )
    # the mirror's triples are these pairs grouped by premise, i-th entailment with i-th contradiction
    grouped = {}
    for p, h, label in pairs:
        grouped.setdefault(p, {"entailment": [], "contradiction": []}).get(label, []).append(h)
    rebuilt = {(p, e, c) for p, hyps in grouped.items() for e, c in zip(hyps["entailment"], hyps["contradiction"])}
    assert rebuilt == set(triples)
    assert load_nli_triples("snli_devtest_pairs_neutral")[:3] == positive_pairs("neutral")[:3]
    with pytest.raises(ConfigError, match="unknown NLI corpus"):
        load_nli_triples("snli_devtest_pairs_maybe")


def test_contradiction_plus_neutral_adds_the_neutral_hypotheses_to_the_denominator():
    z1, z2, z3, z4 = (torch.randn(3, 4, generator=torch.Generator().manual_seed(i)) for i in range(4))
    cos = lambda a, b: float(torch.dot(a, b) / (a.norm() * b.norm()))  # noqa: E731
    tau, alpha = 0.1, 0.5
    expected = []
    for i in range(3):
        den = sum(
            math.exp(cos(z1[i], z2[j]) / tau)
            + (alpha if i == j else 1.0) * (math.exp(cos(z1[i], z3[j]) / tau) + math.exp(cos(z1[i], z4[j]) / tau))
            for j in range(3)
        )
        expected.append(-math.log(math.exp(cos(z1[i], z2[i]) / tau) / den))
    assert SupervisedInfoNCE(tau, alpha)(z1, z2, z3, z4).item() == pytest.approx(sum(expected) / 3, rel=1e-5)


@pytest.mark.parametrize(
    "negatives, rows, used",
    [
        ("none", [("p0", "h0"), ("p1", "h1")], 2),
        ("contradiction", [("p0", "e0", "c0"), ("p1", "e1", "c1")], 3),
        ("contradiction+neutral", [("p0", "e0", "c0", "n0"), ("p1", "e1", "c1", "n1")], 4),
    ],
)
def test_supervised_simcse_encodes_the_columns_its_negatives_need(negatives, rows, used):
    objective = build_objective(
        "simcse_sup", {"negatives": negatives}, SentenceEncoder.from_name("tiny-random-bert", "cls", seed=0), max_len=8
    )
    seen = []
    objective.embed = lambda sentences: (seen.append(list(sentences)), torch.randn(len(sentences), 8))[1]
    loss = objective(rows, random.Random(0))
    assert seen[0] == [row[k] for k in range(used) for row in rows] and objective.sequences_per_row == used
    assert torch.isfinite(loss)
    if negatives == "none":  # Table 7 "N/A": Eq. 4's loss over (premise, hypothesis)
        objective.embed = lambda sentences: torch.arange(len(sentences) * 8, dtype=torch.float).view(-1, 8).sin()
        z = objective.embed(seen[0])
        assert objective(rows, random.Random(0)).item() == pytest.approx(UnsupervisedInfoNCE(0.05)(z[:2], z[2:]).item())


def test_rows_without_the_columns_the_negatives_need_are_a_clear_error():
    objective = build_objective(
        "simcse_sup",
        {"negatives": "contradiction+neutral"},
        SentenceEncoder.from_name("tiny-random-bert", "cls", seed=0),
        max_len=8,
    )
    with pytest.raises(ConfigError, match="needs rows of 4 sentences.*snli_devtest_with_neutral"):
        objective([("p", "e", "c")], random.Random(0))
    from sentemb.spec import RunSpec

    with pytest.raises(ConfigError, match="no hard negative for hard_negative_alpha"):
        RunSpec.from_dict(
            {
                "profile": "smoke",
                "backbone": "tiny-random-bert",
                "objective": "simcse_sup",
                "train_data": "x",
                "steps": 1,
                "objective_params": {"negatives": "none", "hard_negative_alpha": 2.0},
            }
        )
