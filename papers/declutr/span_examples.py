"""DeCLUTR's Table S2 as a derived record: the spans its sampler draws from the training documents.

Table S2 shows, for two documents, an anchor with one positive of each view (overlapping-or-any, adjacent, subsumed),
the same document's second anchor (a hard negative) and another document's anchor (an easy negative). The spans
depend on the headline run's sampler settings, its tokenizer and its documents, not on a model, so they are drawn once
per run (:func:`sentemb.runs.derived.ensure_data_derived`) and stored: the table is then read from the record, and
building it reads no data.
"""

from __future__ import annotations

import random

from sentemb.augment.span_sampler import sample_anchor_positive_spans
from sentemb.data.documents import kept_documents, load_documents
from sentemb.runs.derived import ensure_data_derived
from sentemb.spec import RunSpec

#: Table S2's positive views (``positive_views`` -> label): subsumed with the official code's length, as Figure 2c runs.
TABLE_S2_VIEWS = {"any": "overlapping/adjacent/subsumed", "adjacent": "adjacent", "subsumed_official": "subsumed"}
N_DOCUMENTS = 2
SEED = 0
WORDS_SHOWN = 64  # the paper's table cuts each span at 64 words


def sampled_spans(spec: RunSpec, n_documents: int = N_DOCUMENTS, seed: int = SEED) -> list[dict]:
    """Table S2's rows (example, span, document, text) drawn with ``spec``'s sampler settings from its documents;
    word pieces are decoded back to text and cut at ``WORDS_SHOWN`` words."""
    from sentemb.models.backbone import load_tokenizer

    params = spec.objective_params
    lengths = {"min_span_len": params["min_span_len"], "max_span_len": params["max_span_len"]}
    tokenizer = load_tokenizer(spec.backbone)
    documents = load_documents("synthetic" if spec.synthetic_data else spec.train_data)
    kept = kept_documents(documents, tokenizer, 2 * 2 * params["max_span_len"])
    rng = random.Random(seed)
    chosen = rng.sample(kept, n_documents + 1)
    cut = lambda ids: " ".join(tokenizer.decode(list(ids)).split()[:WORDS_SHOWN])  # noqa: E731
    rows = []
    for number, (document, other) in enumerate(zip(chosen[:-1], chosen[1:]), start=1):
        spans = {
            view: sample_anchor_positive_spans(
                document.token_ids,
                random.Random(seed + number),
                num_anchors=2,
                num_positives=1,
                positive_views=view,
                **lengths,
            )
            for view in TABLE_S2_VIEWS
        }
        easy = sample_anchor_positive_spans(other.token_ids, rng, num_anchors=1, num_positives=1, **lengths)
        shown = [
            ("anchor", document, spans["any"].anchor_tokens[0]),
            *(
                (f"positive ({TABLE_S2_VIEWS[view]})", document, sampled.positive_tokens[0][0])
                for view, sampled in spans.items()
            ),
            ("hard negative (anchor 2, same document)", document, spans["any"].anchor_tokens[1]),
            ("easy negative (another document)", other, easy.anchor_tokens[0]),
        ]
        rows += [{"example": number, "span": span, "document": doc.id, "text": cut(ids)} for span, doc, ids in shown]
    return rows


def span_examples(record: dict, run_missing: bool = True) -> dict:
    """The derived record of Table S2 for the run of ``record`` (or a grid spec's stand-in): ``result["rows"]``."""
    return ensure_data_derived(
        record,
        "span_examples",
        {"n_documents": N_DOCUMENTS, "seed": SEED, "views": list(TABLE_S2_VIEWS), "words": WORDS_SHOWN},
        lambda spec: {"rows": sampled_spans(spec)},
        run_missing=run_missing,
    )
