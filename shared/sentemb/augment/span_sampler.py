"""DeCLUTR's anchor-positive span sampling (Giorgi et al., 2021, §3.1 and §3.1.1).

From each tokenised document x = (x_1 ... x_n), sample A anchor spans and, for every anchor,
P positive spans (paper's A = P = 2, l_min = 32, l_max = 512; official config ``num_anchors 2,
num_positives 2, min_span_len 32, max_span_len 512``). §3.1.1, written out:

    l_anchor   = floor(p_anchor   * (l_max - l_min) + l_min),   p_anchor   ~ Beta(alpha=4, beta=2)
    l_positive = floor(p_positive * (l_max - l_min) + l_min),   p_positive ~ Beta(alpha=2, beta=4)

    s_i^start        ~ U{0 ... n - l_anchor}                    s_i^end        = s_i^start + l_anchor
    s_{i+pAN}^start  ~ U{s_i^start - l_positive ... s_i^end}    s_{i+pAN}^end  = s_{i+pAN}^start + l_positive
    anchor s_i = x[s_i^start : s_i^end],  positive s_{i+pAN} = x[s_{i+pAN}^start : s_{i+pAN}^end]

"In practice, we restrict the sampling of anchor spans from the same document such that they are
a minimum of l_max tokens apart." Offsets here are 0-based and end-exclusive (Python slices), as
in the formulas. Since l_min is an integer, l = floor(p * (l_max - l_min)) + l_min, always in
[l_min, l_max] (l_max only when p = 1). Beta(4, 2) has mean 4/6 (skewed to long anchors),
Beta(2, 4) has mean 2/6 (skewed to short positives).

How anchor starts are drawn here (the paper's reading). All A lengths are drawn first (the paper:
"we first sample its length ... and then randomly (uniformly) sample its starting position"); the
starts are then uniform over every placement that keeps the anchors inside the document with at
least l_max tokens *between* consecutive anchors (next start - previous end >= l_max; this also
implies starts at least l_max apart). The anchors are laid out left to right in the order their
lengths were drawn; since those lengths are i.i.d., the set of anchors has the same distribution
as for any other order. The uniform placement is drawn without rejection: with slack
S = n - sum(l_anchor) - (A - 1) * l_max >= 0, the free tokens before, between and after the anchors
are a uniform composition of S, obtained from A distinct integers drawn from {0 ... S + A - 1}
(stars and bars). With A = 1 this is exactly s^start ~ U{0 ... n - l_anchor}.

Drawing the lengths first and the starts given the lengths is not the same as rejecting
independent draws of both until the restriction holds: rejection would favour short anchors a
little, whereas here anchor lengths stay exactly Beta-distributed.

How the official code draws them (JohnGiorgi/DeCLUTR, ``sample_anchor_positive_pairs`` in
``contrastive_utils.py``): it cuts the document into l_max-token blocks starting at multiples of
l_max, picks a block uniformly, places the anchor uniformly inside that block, and removes the
picked block and its neighbours in the remaining list (when few blocks remain it picks the first
or last remaining block instead, so that it does not run out). Anchors therefore never straddle a block boundary. Both schemes keep at
least l_max tokens between anchors; we follow the paper's uniform starts, which never fails on a
document that passes the length check below.

Positives: start ~ U{max(0, s_i^start - l_positive) ... min(s_i^end, n - l_positive)} (inclusive).
The paper's range guarantees start <= s_i^end and end >= s_i^start, i.e. the positive overlaps the
anchor, is adjacent to it (start = s_i^start - l_positive or start = s_i^end), is subsumed by it,
or (when l_positive > l_anchor) contains it; the clipping to the document is the official code's
and keeps the range non-empty. Positives of one anchor are drawn independently.

Positive views (DeCLUTR Figure 2c, the official ``sampling_strategy``): ``positive_views="any"`` is the range above
(overlapping, adjacent or subsumed; the paper's method and the official default). ``"adjacent"`` puts each
positive right before or right after its anchor (start = s_i^start - l_positive or start = s_i^end, one of the two
that fit in the document, uniformly; when neither fits, it is shortened to the longer free side). Two readings of
"subsumed" (the positive inside its anchor, start ~ U{s_i^start ... s_i^end - l_positive}), which differ in the
positive's length:

    "subsumed"           l_positive = min(floor(p * (l_max - l_min) + l_min), l_anchor)        (the archive's)
    "subsumed_official"  l_positive = floor(p * (l_anchor - l_min) + l_min)                     (the official code's)
                         p ~ Beta(2, 4) in both

``"subsumed"`` draws the length as for any positive and cuts it to the anchor; ``"subsumed_official"`` is the
official ``sampling_strategy="subsuming"`` (``sample_anchor_positive_pairs``: the Beta(2, 4) draw times
l_anchor - l_min, plus l_min, truncated to an integer), so it is always in [l_min, l_anchor] and shorter on average
(means of 138.0 against 184.9 tokens at the paper's 32-512: E[l_anchor] = 351.5, and (351.5 - 32) / 3 + 32 less
the floor's 0.5). Both draw the anchors and the Beta variates as the other views do. The paper names the views
without their formulas.

Document length: like the official code we require n >= 2 * A * l_max tokens (2048 for the
paper's settings) and raise :class:`DocumentTooShortError` otherwise. Our placement needs only
n >= A * l_max + (A - 1) * l_max, so the official bound is sufficient. The official code counts
tokens of the model's tokenizer (whitespace tokens before May 2021) and later truncates each span
to 510 tokens plus 2 special tokens; this module works on whatever token sequence it is given.
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
