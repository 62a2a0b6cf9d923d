"""STS evaluation of post-processed embeddings: whitening or BERT-flow fitted on a corpus (SimCSE++ Table 4,
SimCSE Tables 5 and C.1).

The encoder's embeddings of the STS sentences (SimCSE's protocol, as a run's final evaluation) are mapped through
a :class:`~sentemb.evaluate.whitening.Whitening` or a :class:`~sentemb.evaluate.flow.BertFlow` fitted on the
embeddings of ``fit_sentences`` (Wikipedia, NLI or the target sentences), then scored as usual. The STS embeddings of
a model are cached under its ``identity`` (e.g. its run id and precision), so that several fits of one model encode
the 26k STS sentences once; the flows, fitted with several seeds, also share their fit sentences' embeddings.
"""

from __future__ import annotations

import random
from typing import Callable, Sequence

import numpy as np

from sentemb.evaluate.embedding_cache import cached_encode
from sentemb.evaluate.flow import BertFlow, FlowConfig
from sentemb.evaluate.suite import evaluate_model
from sentemb.evaluate.whitening import Whitening
from sentemb.models.encoder import SentenceEncoder

ENCODE_BATCH = 64


def sample_sentences(sentences: Sequence[str], n: int, seed: int = 0) -> list[str]:
    """``n`` distinct sentences drawn without replacement (all of them when there are fewer), in corpus order."""
    unique = list(dict.fromkeys(sentences))
    if len(unique) <= n:
        return unique
    keep = set(random.Random(seed).sample(range(len(unique)), n))
    return [s for i, s in enumerate(unique) if i in keep]


def fit_embeddings(encoder: SentenceEncoder, fit_sentences: Sequence[str], identity: dict) -> np.ndarray:
    """The embeddings a post-processing is fitted on, cached under the model's ``identity``: a whitening and the
    flows of every fit seed encode the same sentences once."""
    return cached_encode(
        {**identity, "purpose": "post-processing fit"},
        list(fit_sentences),
        lambda s: encoder.encode(s, batch_size=ENCODE_BATCH),
    )


def _sts_mapped(
    encoder: SentenceEncoder,
    identity: dict,
    transform: Callable[[np.ndarray], np.ndarray],
    splits: Sequence[str],
    synthetic: bool,
    pairs: int | None = None,
) -> dict:
    """SimCSE-protocol STS results of ``transform`` applied to the encoder's (cached) embeddings, on at most ``pairs``
    pairs of each STS subset or split (:mod:`sentemb.evaluate.subsets`; None: all)."""

    def encode(sentences: list[str]) -> np.ndarray:
        raw = cached_encode(
            {**identity, "purpose": "sts evaluation"}, sentences, lambda s: encoder.encode(s, batch_size=ENCODE_BATCH)
        )
        return transform(raw)

    results, _ = evaluate_model(
        encode, ["sts"], sts_splits=splits, synthetic=synthetic, batch_size=ENCODE_BATCH, sts_pairs=pairs
    )
    sts = results["sts_simcse"]
    return {"summary": sts["summary"], "tasks": sts["tasks"], "protocol": sts["protocol"]}


def sts_whitened(
    encoder: SentenceEncoder,
    fit_sentences: Sequence[str],
    identity: dict,
    dim: int | None = None,
    splits: Sequence[str] = ("dev", "test"),
    synthetic: bool = False,
    pairs: int | None = None,
) -> dict:
    """SimCSE-protocol STS results of the whitened embeddings (on at most ``pairs`` pairs of each STS subset or
    split), with the fit's size."""
    fit = fit_embeddings(encoder, fit_sentences, identity)
    whitening = Whitening.fit(fit, dim=dim)
    return {
        **_sts_mapped(encoder, identity, whitening.transform, splits, synthetic, pairs),
        "n_fit_sentences": len(fit),
        "whitening_dim": whitening.kernel.shape[1],
    }


def sts_flowed(
    encoder: SentenceEncoder,
    fit_sentences: Sequence[str],
    identity: dict,
    seed: int,
    config: FlowConfig = FlowConfig(),
    splits: Sequence[str] = ("dev", "test"),
    synthetic: bool = False,
    pairs: int | None = None,
) -> dict:
    """SimCSE-protocol STS results of the BERT-flow latents (the flow fitted on ``fit_sentences`` with ``seed``; on at
    most ``pairs`` pairs of each STS subset or split), with the fit's size, its number of steps and its loss (bits per
    dimension) over the first and last 10 steps."""
    fit = fit_embeddings(encoder, fit_sentences, identity)
    flow = BertFlow.fit(fit, seed=seed, config=config)
    return {
        **_sts_mapped(encoder, identity, flow.transform, splits, synthetic, pairs),
        "n_fit_sentences": len(fit),
        "flow_steps": len(flow.losses),
        "flow_loss_bits_per_dim": {
            "first_10": float(np.mean(flow.losses[:10])),
            "last_10": float(np.mean(flow.losses[-10:])),
        },
    }
