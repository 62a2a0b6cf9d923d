"""The raw backbone's pretraining on a GPU machine, and its import here (issue: a backbone of our own).

``run`` (on the GPU machine, one command inside its 10-minute limit):
  1. probes the step time of each ``--probe-sizes`` model with a short real run (``sentemb.pretrain``);
  2. sizes the run to the budget: steps = budget / (learning rates x the probed step time of ``--size``), rounded down
     to a multiple of 500 and clipped to [--min-steps, --max-steps] (the learning rates run side by side on the one
     GPU, each at least 1/n of it, so the estimate is conservative);
  3. pretrains ``--size`` once per ``--lrs`` value, side by side, each ``python -m sentemb pretrain``;
  4. keeps the learning rate whose kept weights have the lowest held-out MLM loss (WikiText-2 valid, no paper's
     evaluation text), and writes to ``OUT``: ``summary.json`` (probe, steps rule, every run's record), the winner's
     ``config.json`` and its weights in parts of at most 15 MiB (the device tool brings back files of 16 MiB at most).
``import`` (here): rebuilds the winner's run folder from ``OUT`` (the parts joined and checked against the record's
sha256; the tokenizer saved from all-MiniLM-L6-v2 after checking its vocabulary's sha256), then publishes it as
``shared/models/<name>`` and copies ``summary.json`` to ``benchmarks/results/``.

  python benchmarks/gpu_pretrain.py run OUT --tokenizer .cache/device/tokenizer      # on the GPU machine
  python benchmarks/gpu_pretrain.py import FILES_AT --name sentemb-bert-mini-mlm     # here
``prepare`` (here, before ``run``) copies what the GPU machine lacks into ``.cache/device/`` (ignored by git): the five
text files of the pretraining in the mirror's layout and all-MiniLM-L6-v2's tokenizer files.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "shared"), str(REPO)]

from sentemb.data.files import sha256_of  # noqa: E402
from sentemb.pretrain.configs import PretrainConfig  # noqa: E402

PART_BYTES = 15 * 2**20
DEVICE_DIR = REPO / ".cache" / "device"


def pretrain_command(config: PretrainConfig, tokenizer: str) -> list[str]:
    return [sys.executable, "-m", "sentemb", *config.command().split()[3:], "--tokenizer", tokenizer]


def probe(size: str, args, tokenizer: str) -> dict:
    """Seconds a step of ``size`` at the run's batch, from a short real run (evaluations on a few sequences)."""
    from sentemb.pretrain.run import pretrain

    steps = args.probe_steps
    config = PretrainConfig(
        size=size, steps=steps, batch_size=args.batch_size, warmup=1, eval_every=steps, heldout_sequences=8
    )
    with tempfile.TemporaryDirectory() as tmp:
        record = pretrain(config, Path(tmp) / size, tokenizer_source=tokenizer)
    return {"size": size, "steps": steps, "batch_size": args.batch_size, "s_per_step": record["wall_seconds"] / steps}


def choose_steps(budget_s: float, s_per_step: float, runs: int, lo: int, hi: int) -> int:
    steps = int(budget_s / (runs * s_per_step)) // 500 * 500
    return max(lo, min(hi, steps))


def run(args) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = str(Path(args.tokenizer).resolve()) if Path(args.tokenizer).exists() else args.tokenizer
    started = time.perf_counter()
    probes = [probe(size, args, tokenizer) for size in args.probe_sizes]
    step_s = next(p["s_per_step"] for p in probes if p["size"] == args.size)
    steps = choose_steps(args.budget_s, step_s, len(args.lrs), args.min_steps, args.max_steps)
    configs = [
        PretrainConfig(
            size=args.size,
            steps=steps,
            batch_size=args.batch_size,
            lr=lr,
            warmup=min(args.warmup, steps // 10),
            eval_every=args.eval_every,
            heldout_sequences=args.heldout_sequences,
        )
        for lr in args.lrs
    ]
    print(f"[gpu_pretrain] probes {probes}; {len(configs)} runs of {steps} steps side by side", flush=True)
    from sentemb.pretrain.run import output_dir, pretrain

    if args.same_process:  # one after another in this process (the CPU test); on a GPU they share it side by side
        for config in configs:
            pretrain(config, tokenizer_source=tokenizer)
    else:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "shared"), str(REPO)])}
        processes = [subprocess.Popen(pretrain_command(c, tokenizer), cwd=REPO, env=env) for c in configs]
        codes = [p.wait() for p in processes]
        if any(codes):
            print(f"[gpu_pretrain] a run failed: exit codes {codes}", file=sys.stderr)
            return 1

    records = [json.loads((output_dir(c) / "record.json").read_text()) for c in configs]
    best = min(range(len(records)), key=lambda i: records[i]["kept"]["heldout_loss"])
    summary = {
        "probes": probes,
        "steps_rule": {"budget_s": args.budget_s, "runs_side_by_side": len(configs), "steps": steps},
        "chosen": {"lr": configs[best].lr, "run_id": records[best]["run_id"], "rule": "the lowest kept held-out loss"},
        "records": records,
        "wall_seconds": time.perf_counter() - started,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    model = output_dir(configs[best]) / "model"
    shutil.copy2(model / "config.json", out / "config.json")
    data = (model / "model.safetensors").read_bytes()
    for i in range(0, len(data), PART_BYTES):
        (out / f"weights.part{i // PART_BYTES}").write_bytes(data[i : i + PART_BYTES])
    print(f"[gpu_pretrain] chose lr {configs[best].lr:g} ({records[best]['kept']['heldout_loss']:.3f}); {out}")
    return 0


def import_run(args) -> int:
    from sentemb.models.backbone import load_tokenizer
    from sentemb.pretrain.publish import publish
    from sentemb.pretrain.run import output_dir, vocabulary_sha256

    files = Path(args.files)
    summary = json.loads((files / "summary.json").read_text())
    record = next(r for r in summary["records"] if r["run_id"] == summary["chosen"]["run_id"])
    directory = output_dir(PretrainConfig(**record["config"]))
    if not (directory / "record.json").is_file():
        directory.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=directory.parent))
        (staging / "model").mkdir(parents=True)
        parts = sorted(files.glob("weights.part*"), key=lambda p: int(p.name.removeprefix("weights.part")))
        with open(staging / "model" / "model.safetensors", "wb") as weights:
            for part in parts:
                weights.write(part.read_bytes())
        if sha256_of(staging / "model" / "model.safetensors") != record["weights_sha256"]:
            raise SystemExit(f"the joined weights from {files} are not the record's (sha256 differs)")
        shutil.copy2(files / "config.json", staging / "model" / "config.json")
        tokenizer = load_tokenizer(args.tokenizer)
        if vocabulary_sha256(tokenizer) != record["tokenizer"]["vocabulary_sha256"]:
            raise SystemExit(f"{args.tokenizer}'s vocabulary is not the one the run used (sha256 differs)")
        tokenizer.save_pretrained(staging / "model")
        (staging / "record.json").write_text(json.dumps(record, indent=1) + "\n")
        staging.rename(directory)
    folder = publish(directory, args.name)
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    stamp = record["provenance"]["started_utc"][:10]
    shutil.copy2(files / "summary.json", results / f"gpu_pretrain_{args.name}_{stamp}.json")
    print(f"[gpu_pretrain] published {folder}")
    return 0


def prepare(args) -> int:
    """The pretraining's text files (mirror layout) and MiniLM's tokenizer into .cache/device/ for ``carry``."""
    from sentemb import settings
    from sentemb.models.backbone import minilm_dir
    from sentemb.pretrain.corpus import HELDOUT, TRAINING_FILES, WIKITEXT2_TEST

    root = settings.data_root()
    if root is None:
        raise SystemExit("set SENTEMB_DATA to the mirror (../shared/datasets)")
    for relpath in (*TRAINING_FILES, HELDOUT, WIKITEXT2_TEST):
        target = DEVICE_DIR / "datasets" / relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / relpath, target)
    tokenizer_dir = DEVICE_DIR / "tokenizer"
    tokenizer_dir.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
        shutil.copy2(minilm_dir() / name, tokenizer_dir / name)
    size = sum(p.stat().st_size for p in DEVICE_DIR.rglob("*") if p.is_file())
    print(f"[gpu_pretrain] {DEVICE_DIR}: {size / 2**20:.1f} MiB to carry")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True)
    p = verbs.add_parser("run", help="on the GPU machine: probe, pretrain side by side, write OUT")
    p.add_argument("out")
    p.add_argument("--tokenizer", default=str(DEVICE_DIR / "tokenizer"))
    p.add_argument("--size", default="mini")
    p.add_argument("--probe-sizes", nargs="+", default=["mini", "small"])
    p.add_argument("--probe-steps", type=int, default=60)
    p.add_argument("--lrs", nargs="+", type=float, default=[2.5e-4, 5e-4, 1e-3])
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--budget-s", type=float, default=360.0, help="seconds of pretraining, all runs together")
    p.add_argument("--min-steps", type=int, default=1000)
    p.add_argument("--max-steps", type=int, default=30000)
    p.add_argument("--warmup", type=int, default=500, help="at most a tenth of the steps")
    p.add_argument("--eval-every", type=int, default=500)
    p.add_argument("--heldout-sequences", type=int, default=1024)
    p.add_argument("--same-process", action="store_true", help="the runs one after another in this process (tests)")
    p = verbs.add_parser("import", help="here: join the parts, check them, publish as shared/models/NAME")
    p.add_argument("files")
    p.add_argument("--name", required=True)
    p.add_argument("--tokenizer", default="all-MiniLM-L6-v2")
    p.add_argument("--results", default=str(REPO / "benchmarks" / "results"), help="where summary.json is copied")
    verbs.add_parser("prepare", help="here: copy the text and the tokenizer into .cache/device/ for the GPU machine")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return {"run": run, "import": import_run, "prepare": prepare}[args.verb](args)


if __name__ == "__main__":
    sys.exit(main())
