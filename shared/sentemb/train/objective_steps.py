"""How each objective turns a batch of training rows into a loss.

- ``simcse_unsup`` (SimCSE §3): each sentence is fed twice in one forward pass of shape (2N, len), so
  the two copies get independent dropout masks (this is how the official code builds the views).
  ``fixed_dropout_mask`` (Table 3 "fixed 0.1") encodes once and uses that output for both views,
  i.e. the same mask for the pair. ``delete_one_word`` replaces the second view by the sentence with
  one word removed (Table 1, Figure 2).
- ``simcse_sup`` (SimCSE §4): rows are (premise, entailment, contradiction), encoded in one pass.

Training inputs are truncated to ``max_len`` tokens (32 in SimCSE), padded per batch.
"""

from __future__ import annotations

import random

import torch

from sentemb.augment import delete_one_word
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives import SupervisedInfoNCE, UnsupervisedInfoNCE
from sentemb.runs.spec import RunSpec


def _encode(encoder: SentenceEncoder, sentences: list[str], max_len: int) -> torch.Tensor:
    return encoder(**encoder.tokenize(sentences, max_len), training=True)


def simcse_unsup_loss(encoder: SentenceEncoder, rows: list[str], spec: RunSpec, rng: random.Random) -> torch.Tensor:
    loss_fn = UnsupervisedInfoNCE(spec.temperature)
    n = len(rows)
    if spec.fixed_dropout_mask:
        z = _encode(encoder, rows, spec.max_len)
        return loss_fn(z, z)
    second = [delete_one_word(s, rng) for s in rows] if spec.augmentation == "delete_one_word" else rows
    z = _encode(encoder, list(rows) + list(second), spec.max_len)
    return loss_fn(z[:n], z[n:])


def simcse_sup_loss(encoder: SentenceEncoder, rows: list[tuple[str, str, str]], spec: RunSpec,
                    rng: random.Random) -> torch.Tensor:
    n = len(rows)
    sentences = [r[0] for r in rows] + [r[1] for r in rows] + [r[2] for r in rows]
    z = _encode(encoder, sentences, spec.max_len)
    return SupervisedInfoNCE(spec.temperature, spec.hard_negative_alpha)(z[:n], z[n : 2 * n], z[2 * n :])


LOSSES = {"simcse_unsup": simcse_unsup_loss, "simcse_sup": simcse_sup_loss}
SENTENCES_PER_ROW = {"simcse_unsup": 2, "simcse_sup": 3}
