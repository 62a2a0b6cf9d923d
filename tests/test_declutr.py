"""DeCLUTR: span sampling (§3.1.1), NT-Xent with mean positives (Eq. 2) and MLM (Eq. 3), by hand."""

import math
import random
from collections import Counter

import pytest
import torch

from sentemb.augment.span_sampler import (
    DocumentTooShortError,
    minimum_document_length,
    sample_anchor_positive_spans,
    scale_to_span_length,
)
from sentemb.errors import DataError
from sentemb.objectives.declutr import DeclutrContrastiveLoss, declutr_loss, nt_xent
from sentemb.objectives.masked_lm import mask_tokens_for_mlm, masked_lm_loss

PAPER = dict(num_anchors=2, num_positives=2, min_span_len=32, max_span_len=512)


def _cos(a, b):
    return float(torch.dot(a, b) / (a.norm() * b.norm()))


def _many_samples(document, count, seed=0, **parameters):
    rng = random.Random(seed)
    return [sample_anchor_positive_spans(document, rng, **parameters) for _ in range(count)]


# ----------------------------------------------------------------------------- span sampler


def test_span_length_formula_by_hand():
    # l = floor(p * (l_max - l_min) + l_min) with l_min = 32, l_max = 512
    assert scale_to_span_length(0.0, 32, 512) == 32
    assert scale_to_span_length(0.5, 32, 512) == 272  # 0.5 * 480 + 32
    assert scale_to_span_length(0.999, 32, 512) == 511  # floor(479.52 + 32)
    assert scale_to_span_length(1.0, 32, 512) == 512
    assert minimum_document_length(2, 512) == 2048


def test_lengths_follow_beta_4_2_for_anchors_and_beta_2_4_for_positives():
    document = list(range(2048))
    samples = _many_samples(document, 1500, **PAPER)
    anchor_lengths = [end - start for s in samples for start, end in s.anchor_spans]
    positive_lengths = [end - start for s in samples for spans in s.positive_spans for start, end in spans]
    assert len(anchor_lengths) == 3000 and len(positive_lengths) == 6000
    for lengths in (anchor_lengths, positive_lengths):
        assert min(lengths) >= 32 and max(lengths) <= 512

    def normalised(lengths):
        return [(length - 32) / (512 - 32) for length in lengths]

    def mean(values):
        return sum(values) / len(values)

    def variance(values):
        m = mean(values)
        return sum((v - m) ** 2 for v in values) / len(values)

    # Beta(a, b): mean a / (a + b), variance ab / ((a + b)^2 (a + b + 1)) = 8 / 252 for both.
    assert mean(normalised(anchor_lengths)) == pytest.approx(4 / 6, abs=0.015)
    assert mean(normalised(positive_lengths)) == pytest.approx(2 / 6, abs=0.015)
    assert variance(normalised(anchor_lengths)) == pytest.approx(8 / 252, abs=0.005)
    assert variance(normalised(positive_lengths)) == pytest.approx(8 / 252, abs=0.005)


@pytest.mark.parametrize("num_anchors", [1, 2, 3])
def test_anchors_are_inside_the_document_and_at_least_max_span_len_apart(num_anchors):
    minimum = minimum_document_length(num_anchors, 16)
    for num_tokens in (minimum, minimum + 37):  # the shortest accepted document never fails
        document = list(range(num_tokens))
        for sample in _many_samples(
            document, 400, seed=num_tokens, num_anchors=num_anchors, num_positives=1, min_span_len=4, max_span_len=16
        ):
            spans = sample.anchor_spans
            assert len(spans) == num_anchors
            assert all(0 <= start < end <= num_tokens for start, end in spans)
            for (_, previous_end), (next_start, _) in zip(spans, spans[1:]):
                assert next_start - previous_end >= 16


def test_anchor_starts_are_uniform_over_valid_placements():
    # A = 2, l_min = l_max = 2 (length always 2), n = 2 * 2 * 2 = 8. Valid (s1, s2): s1 >= 0,
    # s2 >= s1 + 2 + 2 (anchor plus l_max gap), s2 + 2 <= 8. Enumerated by hand: 6 placements.
    valid = [(0, 4), (0, 5), (0, 6), (1, 5), (1, 6), (2, 6)]
    counts = Counter()
    for sample in _many_samples(list(range(8)), 6000, num_anchors=2, num_positives=1, min_span_len=2, max_span_len=2):
        counts[tuple(start for start, _ in sample.anchor_spans)] += 1
    assert set(counts) == set(valid)
    for placement in valid:
        assert counts[placement] / 6000 == pytest.approx(1 / 6, abs=0.03)


def test_single_anchor_start_is_uniform_over_the_whole_document():
    # A = 1, length fixed at 4, n = 8: s ~ U{0 ... 4}, as in the paper's formula.
    counts = Counter(
        s.anchor_spans[0][0]
        for s in _many_samples(list(range(8)), 5000, num_anchors=1, num_positives=1, min_span_len=4, max_span_len=4)
    )
    assert sorted(counts) == [0, 1, 2, 3, 4]
    assert all(c / 5000 == pytest.approx(1 / 5, abs=0.03) for c in counts.values())


def test_positives_overlap_are_adjacent_to_or_are_subsumed_by_their_anchor():
    num_tokens = 2 * 2 * 64
    relations = Counter()
    for sample in _many_samples(
        list(range(num_tokens)), 1500, num_anchors=2, num_positives=3, min_span_len=8, max_span_len=64
    ):
        assert all(len(spans) == 3 for spans in sample.positive_spans)
        for (a_start, a_end), spans in zip(sample.anchor_spans, sample.positive_spans):
            for p_start, p_end in spans:
                assert 0 <= p_start < p_end <= num_tokens
                assert p_start <= a_end and p_end >= a_start  # touch or intersect
                if p_end == a_start or p_start == a_end:
                    relations["adjacent"] += 1
                elif a_start <= p_start and p_end <= a_end:
                    relations["subsumed"] += 1
                else:
                    relations["overlapping"] += 1
    assert set(relations) == {"adjacent", "subsumed", "overlapping"}


def test_positive_start_range_is_clipped_to_the_document():
    # A = 1, n = 8, all lengths 4. For the anchor (0, 4) the paper's range {0 - 4 ... 4} is clipped
    # to max(0, 0 - 4) ... min(4, 8 - 4) = {0 ... 4}: never negative, never past the end.
    starts = Counter()
    for sample in _many_samples(list(range(8)), 3000, num_anchors=1, num_positives=1, min_span_len=4, max_span_len=4):
        (a_start, a_end), ((p_start, p_end),) = sample.anchor_spans[0], sample.positive_spans[0]
        low, high = max(0, a_start - 4), min(a_end, 8 - 4)
        assert low <= p_start <= high and p_end == p_start + 4
        if a_start == 0:
            starts[p_start] += 1
    assert sorted(starts) == [0, 1, 2, 3, 4]


def test_token_slices_match_offsets_for_string_tokens():
    document = [f"w{i}" for i in range(2048)]
    sample = sample_anchor_positive_spans(document, random.Random(3), **PAPER)
    for (start, end), tokens in zip(sample.anchor_spans, sample.anchor_tokens):
        assert list(tokens) == [f"w{i}" for i in range(start, end)]
    for spans, token_lists in zip(sample.positive_spans, sample.positive_tokens):
        for (start, end), tokens in zip(spans, token_lists):
            assert list(tokens) == [f"w{i}" for i in range(start, end)]


def test_short_document_is_rejected_with_length_minimum_and_fix():
    with pytest.raises(DocumentTooShortError) as caught:
        sample_anchor_positive_spans(list(range(2047)), random.Random(0), **PAPER)
    assert isinstance(caught.value, DataError) and isinstance(caught.value, ValueError)
    message = str(caught.value)
    for part in ("2047", "2048", "num_anchors", "max_span_len", "filter"):
        assert part in message
    sample_anchor_positive_spans(list(range(2048)), random.Random(0), **PAPER)  # exactly the minimum is fine


def test_invalid_sampler_parameters_raise():
    document = list(range(4096))
    with pytest.raises(ValueError):
        sample_anchor_positive_spans(document, random.Random(0), num_anchors=0)
    with pytest.raises(ValueError):
        sample_anchor_positive_spans(document, random.Random(0), num_positives=0)
    with pytest.raises(ValueError):
        sample_anchor_positive_spans(document, random.Random(0), min_span_len=600, max_span_len=512)


def test_sampler_is_deterministic_under_a_seed():
    document = list(range(3000))
    first = sample_anchor_positive_spans(document, random.Random(7), **PAPER)
    again = sample_anchor_positive_spans(document, random.Random(7), **PAPER)
    other = sample_anchor_positive_spans(document, random.Random(8), **PAPER)
    assert first == again
    assert first.anchor_spans != other.anchor_spans or first.positive_spans != other.positive_spans


def _subsumed_lengths(view, count=20000):
    """(anchor length, positive length) of ``count`` draws with A = P = 1 at the paper's spans, draw i seeded by i."""
    pairs = []
    for i in range(count):
        sample = sample_anchor_positive_spans(
            list(range(1024)),
            random.Random(i),
            num_anchors=1,
            num_positives=1,
            min_span_len=32,
            max_span_len=512,
            positive_views=view,
        )
        (a_start, a_end), ((p_start, p_end),) = sample.anchor_spans[0], sample.positive_spans[0]
        assert a_start <= p_start < p_end <= a_end  # inside its anchor
        pairs.append((a_end - a_start, p_end - p_start))
    return pairs


def test_official_subsumed_length_is_beta_2_4_scaled_to_the_anchor():
    # official "subsuming": l_positive = floor(p * (l_anchor - l_min) + l_min), p ~ Beta(2, 4), so in [l_min, l_anchor]
    # and E[l_positive | l_anchor] = (l_anchor - l_min) / 3 + l_min - 1/2 (the floor); 20,000 draws: sd of the mean
    # is about 0.4 tokens
    official = _subsumed_lengths("subsumed_official")
    assert all(32 <= positive <= anchor for anchor, positive in official)
    expected = sum((anchor - 32) / 3 + 32 - 0.5 for anchor, _ in official) / len(official)
    mean = sum(positive for _, positive in official) / len(official)
    assert mean == pytest.approx(expected, abs=1.5) and mean == pytest.approx(138.0, abs=1.5)
    normalised = [(p - 32) / (a - 32) for a, p in official if a > 200]  # Beta(2, 4)'s mean 1/3, less the floor
    assert sum(normalised) / len(normalised) == pytest.approx(1 / 3, abs=0.01)
    # the archive's "subsumed" (unchanged): Beta(2, 4) over l_max - l_min, cut to the anchor: longer on average
    archive = _subsumed_lengths("subsumed")
    assert [a for a, _ in archive] == [a for a, _ in official]  # the same seeds: the same anchors
    assert all(positive == min(positive, anchor) for anchor, positive in archive)
    assert sum(p for _, p in archive) / len(archive) == pytest.approx(184.9, abs=1.5)
    assert sum(p == a for a, p in archive) > 0 and sum(p == a for a, p in official) < sum(p == a for a, p in archive)


# ----------------------------------------------------------------------------- NT-Xent (Eq. 2)


def _eq2_by_hand(embeddings, tau):
    """Mean over i of l(i, i+AN) and l(i+AN, i) on a list of 2AN vectors, as loops."""
    count = len(embeddings) // 2

    def term(i, j):
        numerator = math.exp(_cos(embeddings[i], embeddings[j]) / tau)
        denominator = sum(math.exp(_cos(embeddings[i], embeddings[k]) / tau) for k in range(len(embeddings)) if k != i)
        return -math.log(numerator / denominator)

    return sum(term(i, i + count) + term(i + count, i) for i in range(count)) / (2 * count)


def test_declutr_nt_xent_closed_form_on_orthogonal_anchors():
    # N = 1, A = 2, P = 2. Positives average to the anchors: e = [x, y, x, y].
    # Each of the 4 terms: k != i leaves one partner (cos 1) and two others (cos 0):
    # l = -log(e^(1/tau) / (e^(1/tau) + 2)).
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    positives = torch.tensor([[[1.0, 0.5], [1.0, -0.5]], [[0.5, 1.0], [-0.5, 1.0]]])
    for tau in (1.0, 0.5):
        expected = -math.log(math.exp(1 / tau) / (math.exp(1 / tau) + 2))
        assert DeclutrContrastiveLoss(tau)(anchors, positives).item() == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("tau", [0.05, 0.5, 1.0])
def test_declutr_nt_xent_matches_eq2_written_out(tau):
    # N = 1, A = 2, P = 2, 2-d embeddings; mean positives computed by hand.
    # Directions close together, so the loss is far from 0 even at tau = 0.05.
    anchors = torch.tensor([[1.0, 0.2], [0.9, 0.4]])
    positives = torch.tensor([[[0.8, 0.6], [1.0, -0.2]], [[1.0, 0.1], [0.6, 0.5]]])
    mean_positives = [
        torch.tensor([(0.8 + 1.0) / 2, (0.6 - 0.2) / 2]),
        torch.tensor([(1.0 + 0.6) / 2, (0.1 + 0.5) / 2]),
    ]
    expected = _eq2_by_hand([anchors[0], anchors[1], mean_positives[0], mean_positives[1]], tau)
    assert expected > 0.5
    assert DeclutrContrastiveLoss(tau)(anchors, positives).item() == pytest.approx(expected, rel=1e-5)


def test_declutr_nt_xent_with_one_positive_is_simclr_nt_xent():
    # SimCLR orders the 2M views as interleaved pairs (2k, 2k+1); with P = 1 the DeCLUTR loss is
    # the same number: L = 1/(2M) sum_k [ l(2k, 2k+1) + l(2k+1, 2k) ].
    generator = torch.Generator().manual_seed(0)
    anchors = torch.randn(6, 5, generator=generator)
    positives = torch.randn(6, 1, 5, generator=generator)
    tau = 0.1
    views = [v for k in range(6) for v in (anchors[k], positives[k, 0])]

    def term(i, j):
        numerator = math.exp(_cos(views[i], views[j]) / tau)
        denominator = sum(math.exp(_cos(views[i], views[k]) / tau) for k in range(12) if k != i)
        return -math.log(numerator / denominator)

    simclr = sum(term(2 * k, 2 * k + 1) + term(2 * k + 1, 2 * k) for k in range(6)) / 12
    assert DeclutrContrastiveLoss(tau)(anchors, positives).item() == pytest.approx(simclr, rel=1e-5)
    assert nt_xent(anchors, positives[:, 0], tau).item() == pytest.approx(simclr, rel=1e-5)


def test_contrastive_loss_has_finite_gradients_and_checks_shapes():
    anchors = torch.randn(4, 8, requires_grad=True)
    positives = torch.randn(4, 2, 8, requires_grad=True)
    DeclutrContrastiveLoss()(anchors, positives).backward()
    assert torch.isfinite(anchors.grad).all() and torch.isfinite(positives.grad).all()
    with pytest.raises(ValueError):
        DeclutrContrastiveLoss()(torch.randn(4, 8), torch.randn(4, 8))
    with pytest.raises(ValueError):
        DeclutrContrastiveLoss(temperature=0.0)


# ----------------------------------------------------------------------------- MLM (Eq. 3)

CLS, PAD, SEP, MASK, VOCAB = 0, 1, 2, 3, 1000
SPECIALS = {CLS, PAD, SEP, MASK}


def _batch(rows, length, seed=0):
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(4, VOCAB, (rows, length), generator=generator)
    ids[:, 0] = CLS
    ids[:, -1] = SEP
    ids[::2, -20:-1] = PAD  # every other row padded
    return ids


def _mask(ids, seed=0, **kwargs):
    return mask_tokens_for_mlm(
        ids,
        mask_token_id=MASK,
        vocab_size=VOCAB,
        special_token_ids=SPECIALS,
        generator=torch.Generator().manual_seed(seed),
        **kwargs,
    )


def test_mlm_by_hand_when_everything_is_selected_and_masked():
    ids = torch.tensor([[CLS, 11, 12, 13, SEP, PAD]])
    masked, labels = _mask(ids, select_probability=1.0, mask_probability=1.0, random_probability=0.0)
    assert masked.tolist() == [[CLS, MASK, MASK, MASK, SEP, PAD]]
    assert labels.tolist() == [[-100, 11, 12, 13, -100, -100]]


def test_mlm_masking_rates_follow_bert_and_spare_special_tokens():
    ids = _batch(64, 512)
    masked, labels = _mask(ids)
    special = torch.zeros_like(ids, dtype=torch.bool)
    for token in SPECIALS:
        special |= ids == token
    selected = labels != -100
    assert not (selected & special).any()
    assert torch.equal(masked[special], ids[special])
    maskable = int((~special).sum())
    assert int(selected.sum()) / maskable == pytest.approx(0.15, abs=0.01)
    n_selected = int(selected.sum())
    to_mask = int((selected & (masked == MASK)).sum())
    changed_other = int((selected & (masked != MASK) & (masked != ids)).sum())
    unchanged = int((selected & (masked == ids)).sum())
    assert to_mask / n_selected == pytest.approx(0.8, abs=0.03)
    assert changed_other / n_selected == pytest.approx(0.1, abs=0.03)
    assert unchanged / n_selected == pytest.approx(0.1, abs=0.03)


def test_mlm_labels_are_minus_100_outside_masked_positions_and_input_is_untouched():
    ids = _batch(8, 64, seed=1)
    original = ids.clone()
    masked, labels = _mask(ids, seed=1)
    assert torch.equal(ids, original)
    for row in range(8):
        for column in range(64):
            if labels[row, column] == -100:
                assert masked[row, column] == ids[row, column]
            else:
                assert labels[row, column] == ids[row, column]


def test_mlm_selects_at_least_one_token_per_sequence():
    ids = torch.tensor([[CLS, 21, 22, 23, SEP]] * 300 + [[CLS, SEP, PAD, PAD, PAD]])
    _, labels = _mask(ids, seed=2)
    per_row = (labels != -100).sum(dim=1)
    assert (per_row[:300] >= 1).all()  # 0.85^3 = 61% of rows would have none without the fallback
    assert per_row[300] == 0  # nothing maskable in that row
    with pytest.raises(ValueError):
        _mask(torch.tensor([[CLS, SEP, PAD]]))


def test_mlm_masking_is_deterministic_under_a_seed():
    ids = _batch(4, 32)
    assert all(torch.equal(a, b) for a, b in zip(_mask(ids, seed=5), _mask(ids, seed=5)))


def test_masked_lm_loss_and_total_loss_by_hand():
    logits = torch.tensor([[[1.0, 0.0, -1.0], [0.5, 2.0, 0.0], [0.0, 0.0, 3.0]]], requires_grad=True)
    labels = torch.tensor([[-100, 1, 0]])

    def nll(row, target):
        return -math.log(math.exp(row[target]) / sum(math.exp(v) for v in row))

    expected = (nll([0.5, 2.0, 0.0], 1) + nll([0.0, 0.0, 3.0], 0)) / 2
    mlm = masked_lm_loss(logits, labels)
    assert mlm.item() == pytest.approx(expected, rel=1e-6)
    contrastive = torch.tensor(0.75, requires_grad=True)
    total = declutr_loss(contrastive, mlm)
    assert total.item() == pytest.approx(0.75 + expected, rel=1e-6)
    total.backward()
    assert contrastive.grad.item() == 1.0 and torch.equal(logits.grad[0, 0], torch.zeros(3))
