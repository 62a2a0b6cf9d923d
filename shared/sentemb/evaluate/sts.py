"""STS evaluation with SentEval's protocol, as run by SimCSE (``SentEval/senteval/sts.py`` of its fork).

For every pair the system score is the cosine similarity of the two embeddings (NaNs mapped to 0
as in SentEval's ``np.nan_to_num``); it is correlated with the gold scores by Pearson's r and
Spearman's rho (scipy).

- STS12-16: one correlation per subset, then three aggregations, all stored:
  ``all`` (one correlation over the concatenation of every subset; SimCSE's headline),
  ``mean`` (plain average of the subset correlations) and ``wmean`` (average weighted by subset size).
- STS-B and SICK-R: a plain cosine correlation per split (SimCSE's fork; the original SentEval trains
  a regressor instead). ``test`` is the headline, ``dev`` is used for model selection.

``protocol="senteval"`` is the original SentEval's variant that DeCLUTR reports: the STS12-16 headline is
the per-subset "mean" aggregation, and STS-B and SICK-R are scored by a regressor trained on their train split
(``evaluate/relatedness.py``), so DeCLUTR's tables are compared on their own protocol.

Embeddings are looked up by sentence, so the caller encodes each unique sentence exactly once.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from scipy.stats import pearsonr, spearmanr

from sentemb.data.sts import ALL_TASKS, STS_SUBSETS, STSPairs, STSTask, load_task
from sentemb.errors import ConfigError

PROTOCOLS = {
    "simcse": "senteval-simcse: cosine, no regressor; STS12-16 all/mean/wmean (headline all); STS-B & SICK-R per split",
    "senteval": "senteval-original (DeCLUTR): STS12-16 cosine, headline mean; STS-B & SICK-R trained regressor",
}
PROTOCOL = PROTOCOLS["simcse"]
HEADLINE_TASKS = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness")
SHORT_NAMES = {"STSBenchmark": "STS-B", "SICKRelatedness": "SICK-R"}


def cosine_scores(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity, in float64, NaN (zero vectors) mapped to 0 as SentEval does."""
    a = np.nan_to_num(a.astype(np.float64))
    b = np.nan_to_num(b.astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return np.nan_to_num(cos)


def correlations(system: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    return {
        "spearman": float(spearmanr(system, gold)[0]),
        "pearson": float(pearsonr(system, gold)[0]),
        "n": int(len(gold)),
    }


def pair_scores(pairs: STSPairs, embeddings: Mapping[str, np.ndarray]) -> np.ndarray:
    a = np.stack([embeddings[s] for s in pairs.sent1])
    b = np.stack([embeddings[s] for s in pairs.sent2])
    return cosine_scores(a, b)


def aggregate(subsets: Mapping[str, dict], system: Sequence[np.ndarray], gold: Sequence[np.ndarray]) -> dict:
    """SentEval's three aggregations of per-subset results (``all`` needs the raw scores)."""
    weights = [subsets[name]["n"] for name in subsets]
    out = {}
    for metric in ("spearman", "pearson"):
        values = np.array([subsets[name][metric] for name in subsets])
        pooled = correlations(np.concatenate(system), np.concatenate(gold))[metric]
        out[metric] = {
            "all": float(pooled),
            "mean": float(np.average(values)),
            "wmean": float(np.average(values, weights=weights)),
        }
    return out


def evaluate_task(
    task: STSTask, embeddings: Mapping[str, np.ndarray], splits: Sequence[str] = ("test",), protocol: str = "simcse"
) -> dict:
    if protocol == "senteval" and task.name not in STS_SUBSETS:
        from sentemb.evaluate.relatedness import evaluate_task as regressor

        result = regressor(task, embeddings)
        return {**result, "headline": result["spearman"], "headline_metric": "spearman/test (regressor)"}
    if task.name in STS_SUBSETS:
        subsets, system, gold = {}, [], []
        for name, pairs in task.parts.items():
            scores = pair_scores(pairs, embeddings)
            subsets[name] = correlations(scores, pairs.scores)
            system.append(scores)
            gold.append(pairs.scores)
        agg = aggregate(subsets, system, gold)
        aggregation = "mean" if protocol == "senteval" else "all"
        return {
            "task": task.name,
            "subsets": subsets,
            "aggregate": agg,
            "headline": agg["spearman"][aggregation],
            "headline_metric": f"spearman/{aggregation}",
        }
    results = {
        split: correlations(pair_scores(task.parts[split], embeddings), task.parts[split].scores) for split in splits
    }
    headline = results["test"]["spearman"] if "test" in results else None
    return {"task": task.name, "splits": results, "headline": headline, "headline_metric": "spearman/test"}


def needed_sentences(tasks: Sequence[STSTask], splits: Sequence[str], protocol: str = "simcse") -> list[str]:
    out: dict[str, None] = {}
    for task in tasks:
        for name, pairs in task.parts.items():
            if task.name in STS_SUBSETS or name in splits or protocol == "senteval":
                out.update(dict.fromkeys(pairs.sentences()))
    return list(out)


def summarise(results: Mapping[str, dict]) -> dict:
    """Headline per task (Spearman x 100, SimCSE's table) and the average over the tasks present."""
    row = {
        SHORT_NAMES.get(t, t): 100 * results[t]["headline"]
        for t in HEADLINE_TASKS
        if t in results and results[t]["headline"] is not None
    }
    if len(row) == len(HEADLINE_TASKS):
        row["Avg."] = float(np.mean(list(row.values())))
    return row


def run_sts(
    encode,
    tasks: Sequence[str] = ALL_TASKS,
    splits: Sequence[str] = ("test",),
    synthetic: bool = False,
    protocol: str = "simcse",
) -> dict:
    """Load ``tasks``, encode every unique sentence once with ``encode(list[str]) -> ndarray``, score."""
    task_objs = [load_task(t, synthetic=synthetic) for t in tasks]
    sentences = needed_sentences(task_objs, splits, protocol)
    lookup = dict(zip(sentences, encode(sentences)))
    return {**score(task_objs, lookup, splits, protocol), "n_sentences": len(sentences)}


def score(
    tasks: Sequence[STSTask], lookup: Mapping[str, np.ndarray], splits: Sequence[str], protocol: str = "simcse"
) -> dict:
    """Every task scored from embeddings looked up by sentence, with the protocol and the summary row."""
    if protocol not in PROTOCOLS:
        raise ConfigError(f"unknown STS protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}")
    results = {task.name: evaluate_task(task, lookup, splits, protocol) for task in tasks}
    return {
        "protocol": PROTOCOLS[protocol],
        "protocol_name": protocol,
        "splits": list(splits),
        "tasks": results,
        "summary": summarise(results),
    }


def format_table(summary: Mapping[str, float]) -> str:
    """SimCSE-style one-row table: task names and Spearman x 100."""
    names = list(summary)
    widths = [max(len(n), 6) for n in names]
    head = " | ".join(n.rjust(w) for n, w in zip(names, widths))
    vals = " | ".join(f"{summary[n]:.2f}".rjust(w) for n, w in zip(names, widths))
    return f"{head}\n{'-' * len(head)}\n{vals}"


def format_aggregations(results: Mapping[str, dict]) -> str:
    """STS12-16 under SentEval's three aggregations (Spearman x 100), one line each."""
    years = [t for t in STS_SUBSETS if t in results]
    lines = ["aggr.  " + " ".join(t.rjust(6) for t in years)]
    for aggregation in ("all", "mean", "wmean"):
        values = [100 * results[t]["aggregate"]["spearman"][aggregation] for t in years]
        lines.append(f"{aggregation:6s} " + " ".join(f"{v:6.2f}" for v in values))
    return "\n".join(lines)
