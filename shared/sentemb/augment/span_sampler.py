"""DeCLUTR's anchor-positive span sampling (Giorgi et al., 2021, §3.1 and §3.1.1).

Equations (§3.1.1; A = P = 2, l_min = 32, l_max = 512 in the paper and the official config):
    l_anchor = floor(p * (l_max - l_min) + l_min), p ~ Beta(4, 2);   l_positive likewise with p ~ Beta(2, 4)
    anchor start ~ U{0 ... n - l_anchor};   positive start ~ U{s^start - l_positive ... s^end}
    anchors at least l_max tokens apart; offsets 0-based and end-exclusive
Anchors: lengths first, then starts uniform over every placement with >= l_max tokens between anchors, drawn without
    rejection (stars and bars), so lengths stay exactly Beta-distributed. The official code (JohnGiorgi/DeCLUTR,
    ``sample_anchor_positive_pairs``) instead places each anchor inside a random l_max-token block.
Positives: the paper's range clipped to the document (as the official code). ``positive_views`` (Figure 2c, the
    official ``sampling_strategy``): ``any`` (the default), ``adjacent``, ``subsumed`` (a positive's length cut to
    its anchor) or ``subsumed_official`` (``subsuming``: length floor(p * (l_anchor - l_min) + l_min)).
Inputs: a token sequence of length n >= 2 * A * l_max (the official bound, 2048 for the paper's settings; else
    :class:`DocumentTooShortError`), of any tokenizer's tokens.
References: Giorgi et al., 2021, §3.1, §3.1.1, Figure 2c.
Relations: :mod:`sentemb.objectives.declutr` (the loss; positives anchor-major), :mod:`sentemb.data.documents`.
Derivation, the official code and the views' mean lengths: docs/derivations.md#sentembaugmentspan_samplerpy
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from sentemb.errors import DataError

Token = TypeVar("Token")
Span = tuple[int, int]

ANCHOR_BETA = (4.0, 2.0)
POSITIVE_BETA = (2.0, 4.0)
POSITIVE_VIEWS = ("any", "adjacent", "subsumed", "subsumed_official")


class DocumentTooShortError(DataError, ValueError):
    """A document has fewer than 2 * num_anchors * max_span_len tokens."""


@dataclass(frozen=True)
class SampledSpans(Generic[Token]):
    """Anchors in document order; ``positive_spans[a]`` are the P positives of anchor ``a``.

    Spans are (start, end) token offsets, 0-based and end-exclusive; the ``*_tokens`` fields are
    the matching slices of the document.
    """

    anchor_spans: tuple[Span, ...]
    positive_spans: tuple[tuple[Span, ...], ...]
    anchor_tokens: tuple[Sequence[Token], ...]
    positive_tokens: tuple[tuple[Sequence[Token], ...], ...]


def minimum_document_length(num_anchors: int, max_span_len: int) -> int:
    """Shortest document accepted: 2 * num_anchors * max_span_len (official code's bound)."""
    return 2 * num_anchors * max_span_len


def scale_to_span_length(p: float, min_span_len: int, max_span_len: int) -> int:
    """§3.1.1: l = floor(p * (l_max - l_min) + l_min) for p in [0, 1]."""
    return math.floor(p * (max_span_len - min_span_len) + min_span_len)


def _check_parameters(num_anchors: int, num_positives: int, min_span_len: int, max_span_len: int) -> None:
    if num_anchors < 1 or num_positives < 1:
        raise ValueError(f"num_anchors and num_positives must be >= 1, got {num_anchors} and {num_positives}")
    if not 1 <= min_span_len <= max_span_len:
        raise ValueError(
            f"need 1 <= min_span_len <= max_span_len, got min_span_len={min_span_len}, max_span_len={max_span_len}"
        )


def _place_anchors(lengths: Sequence[int], num_tokens: int, min_gap: int, rng: random.Random) -> list[int]:
    """Starts uniform over all left-to-right placements with >= min_gap tokens between spans."""
    count = len(lengths)
    slack = num_tokens - sum(lengths) - (count - 1) * min_gap
    if slack < 0:
        raise ValueError(f"anchors of lengths {list(lengths)} with gaps of {min_gap} do not fit in {num_tokens} tokens")
    picks = sorted(rng.sample(range(slack + count), count))
    free_before = [pick - rank for rank, pick in enumerate(picks)]  # nondecreasing, in [0, slack]
    starts = []
    occupied = 0  # tokens taken by earlier anchors and the compulsory gaps after them
    for rank, length in enumerate(lengths):
        starts.append(free_before[rank] + occupied)
        occupied += length + min_gap
    return starts


def sample_anchor_positive_spans(
    document: Sequence[Token],
    rng: random.Random,
    *,
    num_anchors: int = 2,
    num_positives: int = 2,
    min_span_len: int = 32,
    max_span_len: int = 512,
    positive_views: str = "any",
) -> SampledSpans[Token]:
    """Sample A anchors and P positives per anchor from one tokenised document (§3.1.1)."""
    _check_parameters(num_anchors, num_positives, min_span_len, max_span_len)
    if positive_views not in POSITIVE_VIEWS:
        raise ValueError(f"positive_views must be one of {POSITIVE_VIEWS}, got {positive_views!r}")
    num_tokens = len(document)
    minimum = minimum_document_length(num_anchors, max_span_len)
    if num_tokens < minimum:
        raise DocumentTooShortError(
            f"document has {num_tokens} tokens, but DeCLUTR span sampling needs at least {minimum} "
            f"(2 * num_anchors * max_span_len = 2 * {num_anchors} * {max_span_len}). Lower num_anchors "
            f"or max_span_len, or filter out documents shorter than {minimum} tokens before sampling."
        )

    anchor_lengths = [
        scale_to_span_length(rng.betavariate(*ANCHOR_BETA), min_span_len, max_span_len) for _ in range(num_anchors)
    ]
    anchor_starts = _place_anchors(anchor_lengths, num_tokens, max_span_len, rng)
    anchor_spans = tuple((start, start + length) for start, length in zip(anchor_starts, anchor_lengths))

    positive_spans = []
    for anchor_start, anchor_end in anchor_spans:
        positives = []
        for _ in range(num_positives):
            p_positive = rng.betavariate(*POSITIVE_BETA)
            length = scale_to_span_length(p_positive, min_span_len, max_span_len)
            if positive_views == "any":
                start = rng.randint(max(0, anchor_start - length), min(anchor_end, num_tokens - length))
            elif positive_views == "adjacent":
                if anchor_start < length and anchor_end + length > num_tokens:  # neither side has room: shorten
                    length = max(anchor_start, num_tokens - anchor_end)
                sides = [s for s in (anchor_start - length, anchor_end) if 0 <= s <= num_tokens - length]
                start = rng.choice(sides)
            else:  # subsumed: inside the anchor
                if positive_views == "subsumed_official":  # Beta(2, 4) scaled to the anchor's length
                    length = scale_to_span_length(p_positive, min_span_len, anchor_end - anchor_start)
                else:
                    length = min(length, anchor_end - anchor_start)
                start = rng.randint(anchor_start, anchor_end - length)
            positives.append((start, start + length))
        positive_spans.append(tuple(positives))

    return SampledSpans(
        anchor_spans=anchor_spans,
        positive_spans=tuple(positive_spans),
        anchor_tokens=tuple(document[start:end] for start, end in anchor_spans),
        positive_tokens=tuple(tuple(document[start:end] for start, end in spans) for spans in positive_spans),
    )
