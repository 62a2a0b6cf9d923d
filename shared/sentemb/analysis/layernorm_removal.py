"""TNCSE Figure 5 (Discussion, "Why choose pooler output over last hidden state?"): remove the last k LayerNorms of
a BERT encoder and look at the norm of its last hidden state and at its STS-B score.

The paper: each Transformer layer has two LayerNorms (after attention, after the feed-forward block), so the norms
of SimCSE-BERT's last hidden states sit between 14 and 16 whatever the input; removing "the last several layers of
LayerNorm" gives them back a norm feature. It reports, for 0-6 removed LayerNorms, the mean norm of the last hidden
state of 100 random Wiki1M sentences (bars) and the STS-B score of TNCSE trained with those LayerNorms removed
(line).

Here the LayerNorms are counted from the top of the encoder in module order (layer L's feed-forward LayerNorm,
then layer L's attention LayerNorm, then layer L-1's, ...) and replaced by the identity, in a copy of the model. The
norm is that of the [CLS] vector of the last hidden state (the paper's h^L), averaged over the sentences; the score
is STS-B dev Spearman of the modified model **without re-training** (the paper re-trains TNCSE after each removal,
which is not done here: the line shows what removal does to the trained encoder, not what training recovers).
"""

from __future__ import annotations

import copy
from typing import Sequence

import numpy as np
import torch
from torch import nn

from sentemb.data.sts import load_task
from sentemb.errors import ConfigError
from sentemb.evaluate.sts import correlations, pair_scores
from sentemb.models.encoder import SentenceEncoder


def encoder_layernorms(backbone: nn.Module) -> list[tuple[nn.Module, str]]:
    """(parent module, attribute name) of every LayerNorm inside the Transformer layers, bottom to top."""
    layers = getattr(getattr(backbone, "encoder", None), "layer", None)
    if layers is None:
        raise ConfigError("LayerNorm removal needs a BERT-like backbone (backbone.encoder.layer)")
    found = []
    for layer in layers:
        for parent in layer.modules():
            for name, child in parent.named_children():
                if isinstance(child, nn.LayerNorm):
                    found.append((parent, name))
    return found


def without_last_layernorms(encoder: SentenceEncoder, k: int) -> SentenceEncoder:
    """A copy of ``encoder`` whose last ``k`` Transformer LayerNorms are the identity."""
    modified = copy.deepcopy(encoder)
    norms = encoder_layernorms(modified.backbone)
    if not 0 <= k <= len(norms):
        raise ConfigError(f"cannot remove {k} LayerNorms: the encoder has {len(norms)}")
    for parent, name in norms[len(norms) - k :]:
        setattr(parent, name, nn.Identity())
    return modified


@torch.inference_mode()
def mean_cls_norm(encoder: SentenceEncoder, sentences: Sequence[str]) -> float:
    """Mean L2 norm of the last hidden state's [CLS] vector over ``sentences`` (eval mode, no truncation)."""
    was_training = encoder.training
    encoder.eval()
    batch = encoder.tokenize(list(sentences), None)
    hidden = encoder.backbone(**batch, return_dict=True).last_hidden_state[:, 0]
    encoder.train(was_training)
    return float(torch.linalg.vector_norm(hidden.float(), dim=-1).mean())


def layernorm_removal(model, sentences: Sequence[str], removed: Sequence[int], synthetic: bool = False) -> dict:
    """Figure 5's points for a one-encoder model: per k in ``removed`` (those the model has: the smoke profile's
    2-layer BERT has 4 LayerNorms), the mean [CLS] norm and STS-B dev Spearman."""
    if not isinstance(model, SentenceEncoder):
        raise ConfigError("LayerNorm removal is defined on one encoder (Figure 5 uses SimCSE-BERT)")
    dev = load_task("STSBenchmark", synthetic=synthetic).parts["dev"]
    unique = list(dict.fromkeys(dev.sentences()))
    rows, available = [], len(encoder_layernorms(model.backbone))
    for k in [k for k in removed if k <= available]:
        modified = without_last_layernorms(model, k)
        lookup = dict(zip(unique, modified.encode(unique, batch_size=64)))
        scores = pair_scores(dev, lookup)
        spearman = correlations(scores, dev.scores)["spearman"] if np.all(np.isfinite(scores)) else float("nan")
        rows.append(
            {
                "removed_layernorms": int(k),
                "mean_cls_norm": mean_cls_norm(modified, sentences),
                "stsb_dev_spearman": spearman,
            }
        )
    return {"n_sentences": len(sentences), "n_layernorms": available, "rows": rows}
