"""The README's "full profile" paragraph of a paper: what its GPU run costs, what the rehearsal covered of it, and what
only a real run can check.

Generated into each paper's summary (so into its README's generated block), from:

- the cost: ``benchmarks/results/gpu_plan.csv`` (``benchmarks/gpu_plan.py``: every training run of the full grid x
  the step time measured on one H100, STS evaluations as forward passes; transfer tasks, MTEB and downloads excluded);
- the rehearsal: the paper's grid on the rehearsal profile against its full grid (``--extended``), facet by facet
  (:mod:`sentemb.grid_reach`), as ``scripts/rehearse.sh`` runs it in CI;
- what a real run alone can check: the same for every paper, plus the paper's ``Paper.full_profile_unrehearsed``.
"""

from __future__ import annotations

import csv

from sentemb import settings
from sentemb.grid_reach import FACETS, facet_values

GPU_PLAN = settings.REPO_ROOT / "benchmarks" / "results" / "gpu_plan.csv"
ONLY_A_REAL_RUN = (
    "every number (the rehearsal trains tiny random models for 4 steps: they measure nothing)",
    "memory and speed at the papers' batches and lengths, fp16 on CUDA and NCCL across GPUs (the rehearsal runs fp32 "
    "on CPUs, its torchrun on gloo)",
    "the real downloads: their sizes and, where no published sha256 was found offline, the hashes the first download "
    "records",
)


LABELS = {
    "objective": "objectives",
    "augmentation": "augmentations",
    "train_data": "training data",
    "final_eval": "final evaluations",
    "pooler": "poolers",
}


def gpu_plan_row(paper: str) -> dict[str, str] | None:
    """The paper's row of the committed GPU plan, or None when it has none (the overview trains nothing of its own)."""
    if not GPU_PLAN.is_file():
        return None
    with GPU_PLAN.open(newline="") as rows:
        return next((row for row in csv.DictReader(rows) if row["paper"] == paper), None)


def full_profile_markdown(paper) -> str:
    """The paragraph for ``paper`` (a :class:`sentemb.paper.Paper`), "" for one without a GPU plan row."""
    plan = gpu_plan_row(paper.name)
    if plan is None:
        return ""
    full = paper.grid("full", extended=True)
    rehearsed = paper.grid("rehearsal", extended=False)
    reached = set().union(*(facet_values(spec) for specs in rehearsed.values() for spec in specs))
    values = {facet: sorted(v for f, v in reached if f == facet and v != "None") for facet in FACETS}
    everything = set().union(*(facet_values(spec) for specs in full.values() for spec in specs))
    left = sorted(f"{facet} {value}" for facet, value in everything - reached)
    only = [*ONLY_A_REAL_RUN, *paper.full_profile_unrehearsed]
    lines = [
        "",
        "### The full profile (GPUs, the hub)",
        "",
        f"- **Cost** (`benchmarks/results/gpu_plan.csv`): {plan['runs']} runs ({plan['training_runs']} trained), "
        f"{int(plan['steps']):,} steps, about **{plan['gpu_h']} H100 GPU-hours** (training {plan['train_gpu_h']}, "
        f"STS evaluations {plan['sts_eval_gpu_h']}; transfer tasks, MTEB and downloads not included), about "
        f"{plan['a100_gpu_h']} on A100-class GPUs (range {plan['a100_gpu_h_range']}, an assumed ratio).",
        f"- **Rehearsed** (`scripts/rehearse.sh`, in CI, against a stand-in hub): {len(rehearsed)} of the full grid's "
        f"{len(full)} rows, through notebook and site, reaching "
        + "; ".join(f"{LABELS[facet]} {', '.join(f'`{v}`' for v in vals)}" for facet, vals in values.items())
        + (f". Not reached: {', '.join(left)}." if left else "; every value of the full grid's."),
        "- **Only a real run checks** " + "; ".join(only) + ".",
    ]
    return "\n".join(lines)
