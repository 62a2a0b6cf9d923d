"""MTEB through the ``mteb`` package (2.26.24), not a re-implementation.

- :class:`MtebEncoder` exposes a :class:`~sentemb.models.encoder.SentenceEncoder` as mteb's ``AbsEncoder``, reusing
  the run's STS/transfer embeddings and encoding only new texts; ``normalize`` L2-normalises (``auto``: when the
  model directory's modules.json has a Normalize module).
- Tasks are the official task objects of ``MTEB(eng, v1)`` (English subsets, the benchmark's splits), else
  ``mteb.get_task``; with SENTEMB_DATA their data comes from :mod:`sentemb.data.mteb_mirror` and mteb never touches
  the hub; a task whose data cannot be had is reported as not run, with the reason.
- Memory is bounded by one task: its data is unloaded once scored, and new texts are encoded without being kept.
- The full list is the non-contrastive paper's 56 English tasks (Table 4); :func:`category_averages` gives Table 6's
  category means over the tasks that ran.
Records per task: main score (x100), metric, split and subset, mteb's version, dataset revision, seconds.
The encoder's interface, the task list and memory: docs/derivations.md#sentembevaluatemteb_adapterpy
"""

from __future__ import annotations

import os
import time
from typing import Mapping, Sequence

import numpy as np

from sentemb import settings
from sentemb.data.mteb_mirror import MIRROR_TASKS, load_mirror_task
from sentemb.errors import SentembError
from sentemb.evaluate.subsets import sample_positions

# Non-contrastive paper, Table 4 (task -> Table 6 category).
TABLE4_TASKS = {
    **dict.fromkeys(
        [
            "AmazonCounterfactualClassification",
            "AmazonPolarityClassification",
            "AmazonReviewsClassification",
            "Banking77Classification",
            "EmotionClassification",
            "ImdbClassification",
            "MTOPDomainClassification",
            "MTOPIntentClassification",
            "MassiveIntentClassification",
            "MassiveScenarioClassification",
            "ToxicConversationsClassification",
            "TweetSentimentExtractionClassification",
        ],
        "Class.",
    ),
    **dict.fromkeys(
        [
            "ArxivClusteringP2P",
            "ArxivClusteringS2S",
            "BiorxivClusteringP2P",
            "BiorxivClusteringS2S",
            "MedrxivClusteringP2P",
            "MedrxivClusteringS2S",
            "RedditClustering",
            "RedditClusteringP2P",
            "StackExchangeClustering",
            "StackExchangeClusteringP2P",
            "TwentyNewsgroupsClustering",
        ],
        "Clust.",
    ),
    **dict.fromkeys(["SprintDuplicateQuestions", "TwitterSemEval2015", "TwitterURLCorpus"], "PairClass."),
    **dict.fromkeys(
        ["AskUbuntuDupQuestions", "MindSmallReranking", "SciDocsRR", "StackOverflowDupQuestions"], "Rerank."
    ),
    **dict.fromkeys(
        [
            "ArguAna",
            "CQADupstackRetrieval",
            "ClimateFEVER",
            "DBPedia",
            "FEVER",
            "FiQA2018",
            "HotpotQA",
            "MSMARCO",
            "NFCorpus",
            "NQ",
            "QuoraRetrieval",
            "SCIDOCS",
            "SciFact",
            "TRECCOVID",
            "Touche2020",
        ],
        "Retr.",
    ),
    **dict.fromkeys(
        ["BIOSSES", "SICK-R", "STS12", "STS13", "STS14", "STS15", "STS16", "STS17", "STS22", "STSBenchmark"], "STS"
    ),
    "SummEval": "Summ.",
}
BENCHMARK = "MTEB(eng, v1)"


def _offline() -> bool:
    return settings.data_root() is not None


def _prepare_environment() -> None:
    """Before mteb is imported: its result cache under ours, and no hub access in offline mode."""
    os.environ.setdefault("MTEB_CACHE", str(settings.cache_root() / "mteb"))
    if _offline():
        for key in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
            os.environ[key] = "1"


def make_mteb_encoder(
    encoder,
    lookup: Mapping[str, np.ndarray] | None = None,
    normalize: str | bool = "auto",
    name: str | None = None,
    revision: str = "local",
    batch_size: int = 64,
    precision: str = "fp32",
):
    _prepare_environment()
    from mteb.models import ModelMeta
    from mteb.models.abs_encoder import AbsEncoder

    class MtebEncoder(AbsEncoder):
        def __init__(self) -> None:
            self.encoder, self.lookup, self.batch_size = encoder, lookup or {}, batch_size  # the lookup is only read
            self.normalize = encoder.packaged_with_normalize if normalize == "auto" else bool(normalize)
            slug = (name or encoder.name or "model").strip("/").replace("/", "__")
            self.mteb_model_meta = ModelMeta(
                loader=None,
                name=f"sentemb/{slug}-{encoder.pooler}",
                revision=revision,
                release_date=None,
                languages=["eng-Latn"],
                n_parameters=sum(p.numel() for p in encoder.parameters()),
                memory_usage_mb=None,
                max_tokens=encoder.max_positions,
                embed_dim=encoder.dim,
                license=None,
                open_weights=True,
                public_training_code=None,
                public_training_data=None,
                framework=["PyTorch"],
                similarity_fn_name="cosine",
                use_instructions=False,
                training_datasets=None,
            )

        def encode(self, inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None, **kwargs) -> np.ndarray:
            texts = [text for batch in inputs for text in batch["text"]]
            missing = [t for t in dict.fromkeys(texts) if t not in self.lookup]
            new = (
                dict(zip(missing, self.encoder.encode(missing, batch_size=self.batch_size, precision=precision)))
                if missing
                else {}
            )
            vectors = np.stack([self.lookup[t] if t in self.lookup else new[t] for t in texts]).astype(np.float32)
            if self.normalize:
                vectors /= np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
            return vectors

    return MtebEncoder()


def benchmark_task(name: str):
    """A fresh, unloaded mteb task object: the ``MTEB(eng, v1)`` one (English subsets, the benchmark's split) when
    the benchmark has the task, else ``mteb.get_task``'s."""
    import copy

    import mteb

    for task in mteb.get_benchmark(BENCHMARK).tasks:
        if task.metadata.name == name:
            return copy.deepcopy(task)  # mteb caches the benchmark's objects: never load data into those
    return mteb.get_task(name)


def labels_converted_once(task) -> None:
    """Make a classification task score its predictions against its labels as one array.

    mteb 2.26's ``AbsTaskClassification._run_experiment`` hands the eval split's label column, a lazy ``datasets``
    ``Column``, to ``_calculate_scores``, whose dozen scikit-learn metrics each convert it with ``np.asarray``: row
    by row through ``Column.__iter__``, for every one of the task's experiments. Converting it once, before the
    metrics, gives the same labels and the same scores (``tests/test_mteb_adapter.py``) and saved 6.7 s of 36.7 s on
    EmotionClassification + MassiveIntentClassification (all-MiniLM-L6-v2, 2 idle cores;
    ``benchmarks/bench_mteb_classification.py``). Other task types are left as they are."""
    calculate = getattr(task, "_calculate_scores", None)
    if calculate is None or not hasattr(task, "label_column_name"):
        return

    def calculate_scores(y_test, y_pred, *args, **kwargs):
        return calculate(np.asarray(y_test), y_pred, *args, **kwargs)

    task._calculate_scores = calculate_scores


def sample_sts_pairs(task, pairs: int | None) -> None:
    """Keep at most ``pairs`` rows of each evaluation split of a loaded STS task (of each subset, for a multilingual
    one), at the positions :func:`sentemb.evaluate.subsets.sample_positions` draws, as a run whose spec sets
    ``eval_pairs`` evaluates SentEval's STS tasks; a task of another type, or ``pairs`` None, is left whole."""
    from mteb.abstasks import AbsTaskSTS

    if pairs is None or not isinstance(task, AbsTaskSTS):
        return
    for splits in task.dataset.values() if task.metadata.is_multilingual else [task.dataset]:
        for split in task.eval_splits:
            keep = sample_positions(len(splits[split]), pairs) if split in splits else None
            if keep is not None:
                splits[split] = splits[split].select(keep)


def _task(name: str):
    task = benchmark_task(name)
    if _offline():
        task.dataset = load_mirror_task(name)
        task.dataset_transform()
        task.data_loaded = True
    labels_converted_once(task)
    return task


def _not_offline(name: str) -> dict | None:
    """Why task ``name`` cannot run offline (None: it can, or the hub is reachable)."""
    if not _offline() or name in MIRROR_TASKS:
        return None
    in_mirror = (settings.data_root() / "mteb" / name).is_dir()
    reason = (
        "the offline mirror has its files, but the archive has no loader for them"
        if in_mirror
        else "data unavailable: not in the offline mirror"
    )
    return {"status": "not run", "reason": reason, "category": TABLE4_TASKS.get(name)}


def _evaluate_task(model, name: str, batch_size: int, sts_pairs: int | None) -> dict:
    """One task's result: its main score and where it came from, or *not run* with mteb's reason."""
    import mteb

    started, task = time.perf_counter(), None
    try:
        task = _task(name)
        sample_sts_pairs(task, sts_pairs)
        outcome = mteb.evaluate(
            model,
            task,
            cache=None,
            overwrite_strategy="always",
            show_progress_bar=False,
            encode_kwargs={"batch_size": batch_size},
            co2_tracker=False,
        )
    except Exception as exc:  # noqa: BLE001 - mteb raises many kinds; the task is reported, not dropped
        return {"status": "not run", "reason": f"{type(exc).__name__}: {exc}", "category": TABLE4_TASKS.get(name)}
    finally:
        if task is not None and task.data_loaded:
            task.unload_data()
    if outcome.exceptions:
        return {"status": "not run", "reason": str(outcome.exceptions), "category": TABLE4_TASKS.get(name)}
    result = outcome.task_results[0]
    split = task.eval_splits[0]
    first = result.scores[split][0]
    return {
        "status": "ok",
        "main_score": 100 * float(result.main_score),
        "main_metric": task.metadata.main_score,
        "split": split,
        "hf_subset": first.get("hf_subset"),
        "category": TABLE4_TASKS.get(name),
        "mteb_version": result.mteb_version,
        "dataset_revision": result.dataset_revision,
        "data": "offline mirror (injected)" if _offline() else "hub",
        "seconds": time.perf_counter() - started,
    }


def run_mteb(
    model,
    lookup: Mapping[str, np.ndarray] | None = None,
    tasks: Sequence[str] | None = None,
    batch_size: int = 64,
    precision: str = "fp32",
    sts_pairs: int | None = None,
) -> dict:
    """Evaluate ``model`` (a SentenceEncoder, or an mteb encoder from :func:`make_mteb_encoder`); the texts the
    lookup does not hold are encoded in ``batch_size`` batches at ``precision`` (fp32, or bf16/fp16 autocast).
    ``sts_pairs``: the STS tasks on at most that many pairs of each evaluation split (:func:`sample_sts_pairs`);
    the result then says so (``sts_pairs``)."""
    _prepare_environment()
    import mteb

    if model is None:
        raise SentembError("MTEB needs the model itself (pass mteb_model=...)")
    if not hasattr(model, "mteb_model_meta"):
        model = make_mteb_encoder(model, lookup, batch_size=batch_size, precision=precision)
    started_all = time.perf_counter()
    results = {
        name: _not_offline(name) or _evaluate_task(model, name, batch_size, sts_pairs)
        for name in list(tasks or TABLE4_TASKS)
    }
    out = {
        "mteb_version": mteb.__version__,
        "normalize": bool(getattr(model, "normalize", False)),
        "precision": precision,
        "tasks": results,
        "category_averages": category_averages(results),
        "seconds": time.perf_counter() - started_all,
    }
    return {**out, "sts_pairs": sts_pairs} if sts_pairs is not None else out


def category_averages(results: Mapping[str, dict]) -> dict:
    """Table 6 style means per category over the tasks that ran, with how many tasks each mean covers."""
    out = {}
    for category in dict.fromkeys(TABLE4_TASKS.values()):
        members = [n for n, c in TABLE4_TASKS.items() if c == category]
        ran = [results[n]["main_score"] for n in members if results.get(n, {}).get("status") == "ok"]
        out[category] = {"mean": float(np.mean(ran)) if ran else None, "n_tasks": len(ran), "of": len(members)}
    ran = [r["main_score"] for n, r in results.items() if r.get("status") == "ok" and n in TABLE4_TASKS]
    out["Avg."] = {"mean": float(np.mean(ran)) if ran else None, "n_tasks": len(ran), "of": len(TABLE4_TASKS)}
    return out
