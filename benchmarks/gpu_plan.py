"""The full profile's GPU plan, per paper: runs, steps, sentences, and estimated GPU-hours.

    python benchmarks/gpu_plan.py configs   # the step configurations of the five full grids -> gpu_plan_configs.json
    python benchmarks/bench_gpu_full_steps.py benchmarks/results/gpu_plan_configs.json --out ...  # on a GPU
    python benchmarks/gpu_plan.py table     # the plan from the measured seconds per step -> gpu_plan.csv + markdown
    python benchmarks/gpu_plan.py table --scale-by benchmarks/results/vs_sentence_transformers_<gpu>.json
        # the plan with the speed-ups -> gpu_plan_speedups.csv (each step scaled as the closest measured kind's)

How the hours are derived (no number here is a paper's):
- **Training**: every training run of a paper's full grid (``--extended`` rows included: the full profile runs every
  row) costs its ``steps`` x the measured seconds per step of its configuration (``bench_gpu_full_steps.py``: the
  spec's backbone shape, objective, batch, maximum length and precision, on one GPU; results in
  ``benchmarks/results/gpu_full_steps_<gpu>.json``).
- **STS-B dev evaluations** during training (every ``eval_every`` steps, 1,500 pairs, about 3,000 sentences) and the
  **final STS evaluation** (the 7 tasks, about 37,000 sentences): forward passes only, counted as a third of a
  training step's cost per sequence (a forward pass is about a third of forward + backward), at the run's own
  sequences per step.
- **Not in the hours**: the transfer tasks and MTEB (the non-contrastive paper's 56 English tasks; their retrieval
  corpora hold about 28M passages, far more than every training run together), and the data download.
- **A100-class**: the measured GPU's hours x ``A100_FACTOR`` (2.0), within the range between the ratio of memory
  bandwidth (H100 SXM / A100: 1.6) and of dense fp16 tensor throughput (3.2); it is an assumption, not a
  measurement.
- **DeCLUTR**: its spans change length every step, and in one process the configurations measured first ran up to
  2.3x slower than the same step measured last (allocator and kernel choices settling); its times were re-measured
  with 10 warm-up steps (``gpu_full_steps_h100_declutr.json``) and are still an upper bound.
- **With the speed-ups** (``--scale-by``, issue 49): each configuration's measured seconds times the ratio
  ``bench_vs_sentence_transformers.py`` measured for the closest kind of step, with speed-ups (``--variant``, default
  ``+all``) over without: ``simcse_sup`` as ``sup``, ``simcse_pp`` as ``simcsepp``, ``declutr`` as ``declutr``, every
  other objective (one or two sentence views, Barlow Twins, VICReg, TNCSE) as ``unsup``. A scaled estimate, not a
  re-measurement of every configuration; the CSV names the kind each paper's hours were scaled by.
- **Check**: SimCSE++ Table 6 reports 1 h 50 min for one epoch of SimCSE (BERT-base) and 1 h 59 min for SimCSE++,
  hardware not stated; the plan's ratio of the two is compared with the paper's (1.08).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
CONFIGS = RESULTS / "gpu_plan_configs.json"
PAPERS = ("simcse", "simcse_pp", "noncontrastive", "tncse", "declutr")
A100_FACTOR, A100_RANGE = 2.0, (1.6, 3.2)
DEV_SENTENCES, FINAL_STS_SENTENCES = 3_000, 37_000
# objective parameters that change what a step computes (the others change numbers, not cost)
COST_PARAMS = (
    "negatives",
    "positive_noise",
    "negative_noise",
    "noise_samples",
    "bt_weight",
    "dcl_weight",
    "projector_width",
    "mlm_weight",
    "num_anchors",
    "num_positives",
    "max_span_len",
    "min_span_len",
    "memory_size",
    "two_encoders",
    "contrastive",
    "context",
)
ON_OFF = ("bt_weight", "dcl_weight", "mlm_weight", "memory_size")  # only whether they are used matters


def cost_key(spec) -> str:
    params = []
    for name in COST_PARAMS:
        if name in spec.objective_params:
            value = spec.objective_params[name]
            params.append(f"{name}={'on' if value else 'off'}" if name in ON_OFF else f"{name}={value}")
    return f"{spec.backbone} {spec.objective} b{spec.batch_size} len{spec.max_len} {spec.precision} " + " ".join(params)


def full_grid(paper: str) -> list:
    from sentemb.paper import get_paper

    grid = get_paper(paper).grid("full", extended=True)
    return list({s.run_id: s for specs in grid.values() for s in specs}.values())


def cmd_configs(args) -> int:
    configs = {}
    for paper in PAPERS:
        for spec in full_grid(paper):
            if spec.trains:
                configs.setdefault(
                    cost_key(spec),
                    {
                        "backbone": spec.backbone,
                        "objective": spec.objective,
                        "pooler": spec.pooler,
                        "objective_params": dict(spec.objective_params),
                        "batch_size": spec.batch_size,
                        "max_len": spec.max_len,
                        "precision": spec.precision,
                    },
                )
    CONFIGS.parent.mkdir(exist_ok=True)
    CONFIGS.write_text(json.dumps({"configs": configs}, indent=1) + "\n")
    print(f"{len(configs)} step configurations -> {CONFIGS}")
    return 0


SCALED_AS = {"simcse_sup": "sup", "simcse_pp": "simcsepp", "declutr": "declutr"}  # objective -> kind; else unsup


def speedup_ratios(path: str, variant: str) -> tuple[dict[str, float], dict]:
    """{kind: ms with the speed-ups / ms without} from a bench_vs_sentence_transformers.py summary, and the
    archive/sentence-transformers ratios of its unsupervised step (before, after)."""
    summary = json.loads(Path(path).read_text())
    variants, ratios = summary["variants"], {}
    for kind in ("unsup", "sup", "simcsepp", "declutr"):
        plain, fast = variants.get(f"archive_{kind}", {}), variants.get(f"archive_{kind}{variant}", {})
        if "ms_per_step" in plain and "ms_per_step" in fast:
            ratios[kind] = fast["ms_per_step"] / plain["ms_per_step"]
    if "unsup" not in ratios:
        raise SystemExit(f"{path} has no archive_unsup and archive_unsup{variant} step times to scale by")
    st = variants.get("st_unsup", {}).get("ms_per_step")
    against_st = {
        "st_unsup_ms": st,
        "archive_over_st_before": round(variants["archive_unsup"]["ms_per_step"] / st, 3) if st else None,
        "archive_over_st_after": round(variants[f"archive_unsup{variant}"]["ms_per_step"] / st, 3) if st else None,
        "device": summary["device"],
    }
    return ratios, against_st


def cmd_table(args) -> int:
    from sentemb.objectives.registry import objective_class

    ratios, against_st = speedup_ratios(args.scale_by, args.variant) if args.scale_by else ({}, {})
    per_step, devices = {}, set()
    for path in args.steps:  # a later file's measurement of a configuration replaces an earlier one's
        measured = json.loads(Path(path).read_text())
        devices.add(measured["device"])
        per_step.update(measured["seconds_per_step"])
    if len(devices) != 1:
        raise SystemExit(f"the step times come from different GPUs ({sorted(devices)}): give one GPU's files")
    rows, missing = [], set()
    ratio_check = {}
    for paper in PAPERS:
        specs = full_grid(paper)
        total = defaultdict(float)
        for spec in specs:
            total["runs"] += 1
            if not spec.trains:
                continue
            seconds = per_step.get(cost_key(spec))
            if not isinstance(seconds, (int, float)):
                missing.add(f"{cost_key(spec)}: {seconds or 'not measured'}")
                continue
            if ratios:
                kind = SCALED_AS.get(spec.objective, "unsup")
                seconds *= ratios.get(kind, ratios["unsup"])
                total[f"scaled as {kind if kind in ratios else 'unsup'}"] += 1
            cls = objective_class(spec.objective)
            sequences = spec.batch_size * cls.sequences_per_row
            per_sequence_forward = seconds / sequences / 3
            evaluations = spec.steps // spec.eval_every + 1
            total["training runs"] += 1
            total["steps"] += spec.steps
            total["sentences"] += spec.steps * spec.batch_size
            total["train_h"] += spec.steps * seconds / 3600
            total["eval_h"] += (evaluations * DEV_SENTENCES + FINAL_STS_SENTENCES) * per_sequence_forward / 3600
            if paper == "simcse_pp" and spec.seed == 42 and spec.steps == 15_625:
                ratio_check.setdefault(cost_key(spec), spec.steps * seconds / 60)
        gpu_h = total["train_h"] + total["eval_h"]
        rows.append(
            {
                "paper": paper,
                "runs": int(total["runs"]),
                "training_runs": int(total["training runs"]),
                "steps": int(total["steps"]),
                "sentences_seen": int(total["sentences"]),
                "train_gpu_h": round(total["train_h"], 1),
                "sts_eval_gpu_h": round(total["eval_h"], 1),
                "gpu_h": round(gpu_h, 1),
                "a100_gpu_h": round(gpu_h * A100_FACTOR, 1),
                "a100_gpu_h_range": f"{gpu_h * A100_RANGE[0]:.0f}-{gpu_h * A100_RANGE[1]:.0f}",
            }
        )
        if ratios:
            scaled = sorted(key.removeprefix("scaled as ") for key in total if key.startswith("scaled as "))
            rows[-1]["scaled_as"] = "+".join(scaled)
            rows[-1]["scale"] = "; ".join(f"{kind} x{ratios.get(kind, ratios['unsup']):.3f}" for kind in scaled)
            rows[-1]["archive_over_st_unsup_before"] = against_st["archive_over_st_before"]
            rows[-1]["archive_over_st_unsup_after"] = against_st["archive_over_st_after"]
    out = RESULTS / ("gpu_plan_speedups.csv" if ratios else "gpu_plan.csv")
    with out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    device = devices.pop()
    print(f"GPU plan of the full profile (every row, 5 seeds for headline rows), from step times measured on {device}:")
    print(
        f"| paper | runs (training) | steps | sentences seen | GPU-h on {device} (training + STS evaluations) | "
        f"A100-class GPU-h (x{A100_FACTOR}, range x{A100_RANGE[0]}-{A100_RANGE[1]}) |"
    )
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['paper']} | {r['runs']} ({r['training_runs']}) | {r['steps']:,} | {r['sentences_seen']:,} | "
            f"{r['gpu_h']} ({r['train_gpu_h']} + {r['sts_eval_gpu_h']}) | {r['a100_gpu_h']} ({r['a100_gpu_h_range']}) |"
        )
    all_h = sum(r["gpu_h"] for r in rows)
    print(
        f"| all | {sum(r['runs'] for r in rows)} | {sum(r['steps'] for r in rows):,} | "
        f"{sum(r['sentences_seen'] for r in rows):,} | {all_h:.1f} | {all_h * A100_FACTOR:.0f} |"
    )
    if ratios:
        print(
            f"\nWith the speed-ups ({args.variant}), each step scaled by its kind's measured ratio on "
            f"{against_st['device']}: "
            + ", ".join(f"{kind} x{ratio:.3f}" for kind, ratio in ratios.items())
            + f". The unsupervised SimCSE step against sentence-transformers' (archive ms / theirs): "
            f"{against_st['archive_over_st_before']} before, {against_st['archive_over_st_after']} after."
        )
    simcse = [m for k, m in ratio_check.items() if " simcse_unsup " in k]
    pp = [m for k, m in ratio_check.items() if "negatives=off_dropout" in k and "dcl_weight=on" in k]
    if simcse and pp:
        print(
            f"\nCheck against SimCSE++ Table 6 (one epoch of BERT-base, training only): SimCSE {simcse[0]:.0f} min, "
            f"SimCSE++ {pp[0]:.0f} min on {device}, ratio {pp[0] / simcse[0]:.2f}; the paper: 110 and 119 min "
            "(hardware not stated), ratio 1.08."
        )
    for line in sorted(missing):
        print(f"not in the hours (no measured step): {line}", file=sys.stderr)
    print(f"\n-> {out}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("configs", help="write the step configurations of the full grids").set_defaults(func=cmd_configs)
    p = sub.add_parser("table", help="the plan from measured seconds per step")
    p.add_argument(
        "--steps",
        nargs="+",
        default=[str(RESULTS / "gpu_full_steps_h100.json"), str(RESULTS / "gpu_full_steps_h100_declutr.json")],
        help="bench_gpu_full_steps.py's JSON files, later ones replacing earlier ones' configurations "
        "(default: the committed H100 measurements; DeCLUTR's were re-measured with 10 warm-up steps)",
    )
    p.add_argument(
        "--scale-by",
        default=None,
        help="a bench_vs_sentence_transformers.py summary: the plan with its speed-ups (gpu_plan_speedups.csv)",
    )
    p.add_argument("--variant", default="+all", help="the speed-ups' variant suffix in that summary (default +all)")
    p.set_defaults(func=cmd_table)
    args = parser.parse_args()
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
