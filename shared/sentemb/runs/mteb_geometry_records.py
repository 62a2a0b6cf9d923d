"""MTEB-and-geometry derived records: one per run, shared by every paper that asks for it (the non-contrastive
paper's Tables 4 and 6 and Figure 4, TNCSE's MTEB rows, the overview's comparison), computed once from the run's best
checkpoint (:mod:`sentemb.runs.derived`).

``mteb_and_geometry`` (one derived record per run):

- MTEB through the archive's adapter (:mod:`sentemb.evaluate.mteb_adapter`, the official ``mteb`` task objects of
  ``MTEB(eng, v1)``): offline, the tasks the archive reads from the mirror (``sentemb.data.mteb_mirror.MIRROR_TASKS``:
  9 STS, 6 classification and 2 retrieval tasks); the other tasks of Table 4's 56 are reported as not run, with why.
- Alignment and uniformity (Wang & Isola, 2020; Table 6's last two columns) on STS-B test: alignment over the pairs
  rated above 4, uniformity over all its sentences (:func:`sentemb.analysis.stsb.align_uniform`).
- The cosine similarity of every STS-B test pair (Figure 4 bins them by gold rating).

Every embedding is computed at one precision, ``MTEB_PRECISION``, fp32 on every profile (under bf16 autocast the
untrained all-MiniLM-L6-v2's ([CLS]) 11-task average was 70.228, against 70.230 in fp32). A profile that only
exercises the paths (smoke) runs the STS tasks only, and a run whose spec sets ``eval_pairs`` (smoke) is scored on that
many pairs of STS-B test and of each MTEB STS task's split (:mod:`sentemb.evaluate.subsets`). Time per record on 2 CPU
cores: see the non-contrastive paper's README.
"""

from __future__ import annotations

import warnings

import numpy as np

from sentemb.analysis.stsb import align_uniform
from sentemb.data.mteb_mirror import MIRROR_TASKS
from sentemb.evaluate.mteb_adapter import TABLE4_TASKS, run_mteb
from sentemb.evaluate.sts import cosine_scores
from sentemb.evaluate.subsets import load_sts_task
from sentemb.profiles import get_profile
from sentemb.runs.derived import ensure_derived, sample_param
from sentemb.runs.execute import ENCODE_BATCH
from sentemb.spec import RunSpec

ANALYSIS = "mteb_and_geometry"
MTEB_PRECISION = "fp32"
# smoke: the STS tasks only (the classification tasks' logistic regressions take ~25 s per model even for the tiny
# random BERT); the adapter's classification path has its own tests
STS_TASKS = tuple(t for t, category in TABLE4_TASKS.items() if category == "STS")


def compute(encoder, spec: RunSpec, precision: str, tasks: tuple[str, ...]) -> dict:
    test = load_sts_task("STSBenchmark", spec.synthetic_data, spec.eval_pairs).parts["test"]
    sentences = list(dict.fromkeys(test.sentences()))
    lookup = dict(zip(sentences, encoder.encode(sentences, batch_size=ENCODE_BATCH, precision=precision)))
    cosines = cosine_scores(np.stack([lookup[s] for s in test.sent1]), np.stack([lookup[s] for s in test.sent2]))
    geometry = align_uniform([test], lookup)
    mteb = None
    if not spec.synthetic_data:  # generated STS data has no MTEB counterpart
        with warnings.catch_warnings():  # mteb's protocol as it is: no notes on superseded task versions, and
            warnings.simplefilter("ignore")  # scikit-learn's convergence/undefined-metric notes on its regressions
            mteb = run_mteb(
                encoder,
                lookup=None,
                tasks=list(tasks),
                batch_size=ENCODE_BATCH,
                precision=precision,
                sts_pairs=spec.eval_pairs,
            )
    return {
        "precision": precision,
        "mteb": mteb,
        "stsb_test": {
            **geometry,
            "cosines": [round(float(c), 6) for c in cosines],
            "gold": [float(g) for g in test.scores],
        },
    }


def mteb_and_geometry(record: dict, run_missing: bool = True, progress: bool = False) -> dict:
    """The derived record of one run (computed when missing and ``run_missing``)."""
    tasks = STS_TASKS if get_profile(record["profile"]).exercises_only else tuple(TABLE4_TASKS)
    offline = sum(t in MIRROR_TASKS for t in TABLE4_TASKS)
    shown = f"Table 4 (56; offline: the mirror's {offline})" if tasks == tuple(TABLE4_TASKS) else list(tasks)
    params = {"precision": MTEB_PRECISION, "tasks": shown, "stsb_split": "test", **sample_param(record, "eval_pairs")}
    return ensure_derived(
        record,
        ANALYSIS,
        params,
        lambda encoder, spec: compute(encoder, spec, MTEB_PRECISION, tasks),
        run_missing=run_missing,
        progress=progress,
    )
