"""The README.md (model card) of an exported run, generated from its run record only.

It says which paper and objective trained the model, the spec, the scores with their protocol, the data files'
sha256, the commit and device that made the record, and how to load the directory. ``{max_abs_difference}`` and
``{n_probes}`` are left for :func:`sentemb.export.sentence_transformers.export` to fill in once it has checked the
export.
"""

from __future__ import annotations

import json

from sentemb.profiles import get_profile


def _table(rows: list[tuple[str, str]], header: tuple[str, str]) -> list[str]:
    lines = [f"| {header[0]} | {header[1]} |", "|---|---|"]
    return lines + [f"| {key} | {value} |" for key, value in rows]


def _scores(metrics: dict) -> list[str]:
    lines = ["## Scores (from the run record)", ""]
    dev = metrics.get("stsb_dev_spearman")
    if dev is not None:
        lines.append(f"- STS-B dev, Spearman x 100 (the checkpoint selection's metric): {100 * dev:.2f}")
    summary = metrics.get("summary") or {}
    if summary:
        lines += ["", f"STS test sets, Spearman x 100; protocol: {metrics.get('protocol', 'unknown')}", ""]
        lines += _table([(task, f"{value:.2f}") for task, value in summary.items()], ("task", "score"))
    transfer = (metrics.get("transfer") or {}).get("summary") or {}
    if transfer:
        lines += ["", f"SentEval transfer, test accuracy; parameters: {metrics['transfer'].get('mode', 'unknown')}", ""]
        lines += _table([(task, f"{value:.2f}") for task, value in transfer.items()], ("task", "accuracy"))
    averages = (metrics.get("mteb") or {}).get("category_averages") or {}
    ran = [(c, a) for c, a in averages.items() if a.get("n_tasks")]
    if ran:
        lines += [
            "",
            f"MTEB (mteb {metrics['mteb'].get('mteb_version')}), main score x 100, over the tasks that ran",
            "",
        ]
        lines += _table(
            [(c, f"{a['mean']:.2f} ({a['n_tasks']} of {a['of']} tasks)") for c, a in ran], ("category", "mean")
        )
    if len(lines) == 2:
        lines.append("The record holds no scores beyond the training curve.")
    return lines


def _reference(objective: str) -> str:
    """The paper (and part) an objective comes from (its class's ``reference``)."""
    from sentemb.objectives.registry import NO_TRAINING, TRAINING_OBJECTIVES

    if objective == NO_TRAINING:
        return "no training: the backbone as it is"
    cls = TRAINING_OBJECTIVES.get(objective)
    return cls.reference if cls is not None and cls.reference else f"objective {objective}"


def model_card(record: dict, trust_remote_code: bool) -> str:
    spec, prov = record["spec"], record["provenance"]
    objective = spec["objective"]
    paper = _reference(objective)
    if objective == "tncse_single" and spec.get("objective_params", {}).get("tn_weight") == 0:
        paper = "TNCSE (Zong et al., AAAI 2025), Table 5's SimCSE matched to TNCSE-Single (no L_TN)"
    load = (
        "SentenceTransformer(path, trust_remote_code=True)  # the second encoder's module is st_added_encoder.py, "
        "in this directory"
        if trust_remote_code
        else "SentenceTransformer(path)"
    )
    lines = [
        "---",
        "library_name: sentence-transformers",
        "pipeline_tag: sentence-similarity",
        "tags: [sentence-transformers, sentence-similarity, sentemb-archive]",
        "---",
        "",
        f"# {objective}, run {record['run_id']} ({record['profile']} profile)",
        "",
        f"Trained by the sentence-embedding reproducibility archive for **{paper}**, from backbone "
        f"`{spec['backbone']}` (revision {prov.get('backbone_revision') or 'unknown'}).",
    ]
    if record.get("notes"):
        lines += ["", f"Run notes: {record['notes']}"]
    caveat = get_profile(record["profile"]).caveat
    if caveat:
        lines += ["", caveat]
    lines += [
        "",
        "## Use",
        "",
        "```python",
        "from sentence_transformers import SentenceTransformer",
        "",
        f"model = {load}",
        'embeddings = model.encode(["A man is playing a guitar."])',
        "```",
        "",
        f"The embeddings are the archive's evaluation path (pooler `{spec['pooler']}`, no normalisation; compare them "
        "by cosine similarity). At export they equalled the archive's within {max_abs_difference} (largest absolute "
        "difference over {n_probes} sentences).",
        "",
        *_scores(record.get("metrics") or {}),
        "",
        "## Spec",
        "",
        *_table([(key, f"`{json.dumps(value)}`") for key, value in spec.items()], ("field", "value")),
        "",
        "## Provenance",
        "",
        *_table(
            [
                ("commit", f"{prov.get('commit')}" + (" (uncommitted changes)" if prov.get("dirty") else "")),
                ("device", str(prov.get("device"))),
                ("started (UTC)", str(prov.get("started_utc"))),
                ("seed", str(prov.get("seed"))),
                *[(name, str(version)) for name, version in (prov.get("packages") or {}).items()],
            ],
            ("field", "value"),
        ),
        "",
        "Data files read by the run (sha256):",
        "",
        *_table(
            [(f"`{path}`", f"`{digest}`") for path, digest in (prov.get("data_sha256") or {}).items()],
            ("file", "sha256"),
        ),
        "",
    ]
    return "\n".join(lines)
