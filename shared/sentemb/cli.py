"""Command line: ``python -m sentemb <command> --help``.

evaluate   evaluate any model directory or hub id: STS, SentEval transfer/probing, MTEB (JSON + tables)
run        run (or load) the records of a paper's experiment grid for a profile
notebook   execute a paper's notebook with papermill (tables -> results/, figures -> figures/)
papers     the registered papers, in the order they are run (the overview, which compares them, last)
data       verify the registered data files, or fetch the evaluation sets (and the full profile's corpora)
runs       list the run records of a profile
site       the executed notebooks as a static HTML site, its index every paper's coverage
summary    run_all.sh's closing table (runs trained, loaded, not run; wall time per paper)
export     a recorded run's model as a sentence-transformers directory, with a model card from its record
reported   numbers a paper prints in more than one table, and whether its copies agree
pretrain   MLM-pretrain a small BERT from the mirror's training text (a safetensors checkpoint and a JSON record)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sentemb.atomic import atomic_write_text
from sentemb.errors import SentembError


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def _use_speedups(text: str) -> None:
    """``--speedups``: checked, then set as ``$SENTEMB_SPEEDUPS``, which every run of this process reads and the
    processes and jobs it starts inherit."""
    import os

    from sentemb.train import speedups

    if text.strip() != "default":
        speedups.Speedups.parse(text)  # a ConfigError saying what it accepts
    os.environ[speedups.ENVIRONMENT_VARIABLE] = text


def _threads(n: int | None) -> None:
    import torch

    if n:
        torch.set_num_threads(n)


@contextmanager
def _profile_threads(profile: str, chosen: int | None):
    """Torch's CPU threads for a command on ``profile``: its ``torch_threads`` (smoke: 1), unless ``--threads``
    (``chosen``) or ``OMP_NUM_THREADS`` chose them; the earlier count comes back afterwards. Side-by-side workers
    share them out (``--jobs``)."""
    import os

    import torch

    from sentemb.profiles import get_profile

    wanted = get_profile(profile).torch_threads
    if wanted is None or chosen or os.environ.get("OMP_NUM_THREADS", "").strip():
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(wanted)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _jobs(args) -> int:
    """Runs of a pass side by side: ``--jobs``, else one per job with a launcher, else the profile's ``jobs``."""
    from sentemb.profiles import get_profile

    if args.jobs is not None:
        return args.jobs
    return 1 if args.launcher else get_profile(args.profile).jobs


def default_evaluation_path(model: str, pooler: str) -> Path:
    from sentemb import settings

    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in model.strip("/").replace("/", "__"))
    return settings.results_root() / "evaluations" / f"{slug}__{pooler}.json"


def cmd_evaluate(args) -> int:
    from sentemb.data.files import track_reads
    from sentemb.evaluate.suite import evaluate_model, parse_groups
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.runs import provenance

    groups = parse_groups(args.tasks)
    splits = tuple(s.strip() for s in args.splits.split(","))
    bad = [s for s in splits if s not in ("train", "dev", "test")]
    if bad:
        raise SentembError(f"unknown split(s) {bad} for STS-B/SICK-R; choose from train, dev, test")
    protocols = tuple(p.strip() for p in args.sts_protocol.split(","))
    encoder = SentenceEncoder.from_name(args.model, args.pooler)
    if args.device:
        encoder.to(args.device)
    started = time.perf_counter()
    with track_reads() as hashes:
        result, _ = evaluate_model(
            lambda s: encoder.encode(s, batch_size=args.batch_size, progress=True),
            groups,
            sts_protocols=protocols,
            sts_splits=splits,
            transfer_mode=args.transfer_mode,
            mteb_model=encoder,
            batch_size=args.batch_size,
        )
    result.update(model=args.model, pooler=args.pooler, total_seconds=time.perf_counter() - started)
    result["provenance"] = {
        **provenance.collect(encoder.device),
        "data_sha256": hashes,
        "truncated_eval_sentences": encoder.truncated_sentences,
    }
    for protocol in protocols if "sts" in groups else ():
        _print_sts(result[f"sts_{protocol}"], f"{args.model} ({args.pooler})", protocol)
    if "transfer" in result:
        _print_transfer(result["transfer"])
    if "mteb" in result:
        _print_mteb(result["mteb"])
    print(f"\n{result['n_sentences']} unique sentences encoded once; total {result['total_seconds']:.1f} s")
    out = atomic_write_text(
        Path(args.output) if args.output else default_evaluation_path(args.model, args.pooler),
        json.dumps(result, indent=1, default=float) + "\n",
    )
    print(f"wrote {out}")
    return 0


def _print_sts(sts: dict, model: str, protocol: str) -> None:
    from sentemb.evaluate.sts import format_aggregations, format_table

    print(f"\n{model}, STS, Spearman x 100, protocol {protocol}: {sts['protocol']}")
    print(format_table(sts["summary"]))
    print(format_aggregations(sts["tasks"]))


def _print_transfer(t: dict) -> None:
    print(f"\nSentEval transfer/probing, accuracy (test), parameters '{t.get('mode')}':")
    for name, r in t["tasks"].items():
        extra = f"  (dev {r['devacc']:.2f}" + (f", F1 {r['f1']:.2f})" if "f1" in r else ")") if "acc" in r else ""
        print(f"  {name:22s} {r['acc']:6.2f}{extra}" if "acc" in r else f"  {name:22s} {r['status']}: {r['reason']}")
    if "Avg." in t.get("summary", {}):
        print(f"  {'Avg. (SimCSE 7 tasks)':22s} {t['summary']['Avg.']:6.2f}")


def _print_mteb(m: dict) -> None:
    ran = {n: r for n, r in m["tasks"].items() if r["status"] == "ok"}
    print(f"\nMTEB (mteb {m['mteb_version']}), main score x 100; {len(ran)} of {len(m['tasks'])} tasks ran:")
    for name, r in ran.items():
        print(f"  {name:30s} {r['main_score']:6.2f}  {r['main_metric']}  ({r['seconds']:.0f} s)")
    for category, avg in m["category_averages"].items():
        if avg["n_tasks"]:
            print(f"  {category:30s} {avg['mean']:6.2f}  (over {avg['n_tasks']} of {avg['of']} tasks)")


def cmd_run(args) -> int:
    """Run (or load) every spec of the grid (:mod:`sentemb.grid_run`), then the notebook with --notebook."""
    from sentemb.grid_run import GridRun, run_grid
    from sentemb.paper import get_paper

    get_paper(args.paper)  # an unknown name is an error that lists the registry's
    resources = {
        "partition": args.partition,
        "gpus": args.gpus,
        "cpus": args.cpus,
        "mem_gb": args.mem_gb,
        "timeout_min": args.time,
    }
    if not args.launcher and (args.dry_run or any(v is not None for v in resources.values())):
        raise SentembError(
            "--dry-run, --partition, --gpus, --cpus, --mem-gb and --time go with --launcher (slurm or local)"
        )
    if args.launcher and (args.jobs or 1) > 1:
        raise SentembError(
            "--jobs runs side by side on this machine; with --launcher the scheduler runs the jobs: "
            "leave out one of them"
        )
    if args.launcher and args.no_run:
        raise SentembError("--no-run loads records and submits nothing: leave out --launcher")
    if args.speedups is not None:
        _use_speedups(args.speedups)
    run = GridRun(
        paper=args.paper,
        profile=args.profile,
        extended=args.extended,
        only=tuple(args.only.split(",")) if args.only else None,
        run_missing=not args.no_run,
        jobs=_jobs(args),
        launcher=args.launcher,
        resources=resources,
        dry_run=args.dry_run,
        notebook=args.notebook,
    )
    with _profile_threads(args.profile, args.threads):
        run_grid(run)
    return 0


def cmd_notebook(args) -> int:
    from sentemb.notebooks import execute_notebook
    from sentemb.paper import registry

    for paper in _selected(args.paper, list(registry())):
        execute_notebook(paper, args.profile, run_missing=not args.no_run, extended=args.extended)
    return 0


def cmd_papers(args) -> int:
    from sentemb.paper import registry

    print("\n".join(registry()))
    return 0


def cmd_summary(args) -> int:
    """run_all.sh's closing table, from the run events and wall times it collected in one folder."""
    from sentemb.runs.events import summary

    folder = Path(args.folder)
    walls_file = folder / "walls.tsv"
    if not walls_file.is_file():
        raise SentembError(
            f"{walls_file} is missing: 'summary' reads the folder run_all.sh fills "
            "(SENTEMB_RUN_EVENTS files and walls.tsv)"
        )
    walls = {}
    for line in walls_file.read_text().splitlines():
        paper, seconds = line.split("\t")
        walls[paper] = float(seconds)
    table = summary(folder, walls)
    import pandas as pd

    with pd.option_context("display.width", 200, "display.max_colwidth", 80):
        print(table.to_string(index=False))
    return 0


def cmd_site(args) -> int:
    from sentemb.site import build_site

    print(f"[site] {build_site(args.profile)}")
    return 0


def cmd_data(args) -> int:
    from sentemb.data.files import verified_path
    from sentemb.data.registry import files_of

    if args.action == "fetch":
        from sentemb.data.download import downloadable, fetch

        for name in args.datasets or downloadable():
            for path in fetch(name):
                print(path)
        return 0
    from sentemb.data.registry import datasets

    failures = 0
    for name in args.datasets or datasets():
        for entry in files_of(name):
            try:
                verified_path(entry.relpath, download=False)  # verify checks, fetch downloads
                print(f"ok       {entry.relpath}")
            except SentembError as exc:
                failures += 1
                print(f"PROBLEM  {exc}")
    return 1 if failures else 0


def _find_record(run_id: str, profile: str | None) -> dict:
    """The record of ``run_id``: in ``profile``, or (None) in the one profile that has it."""
    from sentemb import settings
    from sentemb.profiles import PROFILES
    from sentemb.runs import store

    profiles = [profile] if profile else list(PROFILES)
    found = [p for p in profiles if store.record_path(p, run_id).is_file()]
    if not found:
        where = settings.results_root() / "runs" / (profile or "<profile>")
        raise SentembError(
            f"no run record {run_id}.json in {where}.\n  Fix: 'python -m sentemb runs --profile "
            f"{profile or 'small'}' lists the recorded run ids."
        )
    if len(found) > 1:
        raise SentembError(f"run {run_id} is recorded in the profiles {found}; choose one with --profile")
    return store.load(found[0], run_id)


def cmd_export(args) -> int:
    """A recorded run's evaluated model as a sentence-transformers directory (checked against the archive's
    embeddings before it is kept); a run whose checkpoint this machine lacks is trained again from its spec."""
    import torch

    from sentemb import settings
    from sentemb.export.model_card import model_card
    from sentemb.export.sentence_transformers import export
    from sentemb.models.summed_encoders import SummedEncoders
    from sentemb.runs.execute import run_model

    record = _find_record(args.run, args.profile)
    out = (
        Path(args.out)
        if args.out
        else (settings.cache_root() / "exports" / record["profile"] / f"{record['run_id']}-{args.format}")
    )
    if out.exists():  # before any re-training
        raise SentembError(
            f"{out} already exists; the export never overwrites.\n  Fix: choose another --out, or delete it first."
        )
    model, origin = run_model(record, torch.device("cpu"), progress=True)
    print(
        f"[export] run {record['run_id']} ({record['spec']['objective']}, pooler {record['spec']['pooler']}): "
        f"model from {origin['source']}"
    )
    try:  # the probes of the check: the STS-B dev sentences the record was selected on, when the data is here
        from sentemb.data.sts import load_task

        probes = load_task("STSBenchmark", synthetic=record["spec"]["synthetic_data"]).parts["dev"].sentences()
    except SentembError:
        probes = None  # the exporter's built-in sentences
    result = export(model, out, model_card(record, trust_remote_code=isinstance(model, SummedEncoders)), probes)
    load = (
        "SentenceTransformer(path, trust_remote_code=True)"
        if result["trust_remote_code"]
        else "SentenceTransformer(path)"
    )
    print(
        f"[export] {result['directory']}: loads with {load}; equal to the archive's embeddings within "
        f"{result['max_abs_difference']:.1e} on {result['n_probes']} sentences"
    )
    return 0


def _run_line(record: dict) -> str:
    """One line of ``runs``: id, objective and parameters, pooler, seed, dropout, dev Spearman, wall time, commit."""
    spec = record["spec"]
    params = ",".join(f"{k}={v}" for k, v in spec["objective_params"].items())
    return (
        f"{record['run_id']}  {spec['objective']:13s} {params:50s} {spec['pooler']:17s} seed={spec['seed']} "
        f"dropout={spec['dropout']} "
        f"dev={100 * record['metrics']['stsb_dev_spearman']:.2f} wall={record['timing']['total_seconds']:.0f}s "
        f"commit={(record['provenance']['commit'] or '?')[:10]}"
    )


def cmd_runs(args) -> int:
    """List every readable record; name each broken one on stderr (after the list) and then exit 1."""
    from sentemb import settings
    from sentemb.runs.store import BrokenRecord, read, record_files

    broken = []
    for path in record_files(settings.results_root() / "runs" / args.profile):
        try:
            print(_run_line(read(path, expected_id=path.stem)))
        except BrokenRecord as exc:
            broken.append(str(exc))
        except (KeyError, TypeError, ValueError) as exc:  # JSON, but not a record's fields
            broken.append(
                f"run record {path} is not a complete record ({type(exc).__name__}: {exc}).\n"
                "  Fix: inspect it, then delete it; the next run computes it again."
            )
    for message in broken:
        print(f"error: {message}", file=sys.stderr)
    return 1 if broken else 0


def cmd_reported(args) -> int:
    """Every number a paper prints in more than one table: its copies, whether they agree, whether flagged."""
    from sentemb.paper import reproduced_papers
    from sentemb.report.reported_consistency import IDENTITY, repeated_cells

    unflagged = 0
    for paper in _selected(args.paper, list(reproduced_papers())):
        repeated = repeated_cells(paper)
        shown = repeated if args.all else repeated[~repeated["agree"].astype(bool)]
        print(
            f"{paper}: {repeated.groupby(IDENTITY).ngroups} numbers printed in more than one table, "
            f"{shown.groupby(IDENTITY).ngroups if len(shown) else 0} {'shown' if args.all else 'disagree'}"
        )
        for identity, copies in shown.groupby(IDENTITY, sort=True):
            model, column, split = identity[:3]
            flags = copies["note"].str.startswith("inconsistent:")
            agree = bool(copies["agree"].iloc[0])
            unflagged += 0 if agree else int((~flags).sum())
            state = "agree" if agree else ("flagged" if flags.all() else "NOT FLAGGED")
            where = "; ".join(
                f"{t} [{g + ' / ' if g else ''}{r} / {c}] {v}"
                for t, g, r, c, v in zip(
                    copies["table"], copies["group"], copies["row"], copies["column"], copies["printed"]
                )
            )
            print(f"  {model} | {column} | {split or '-'}: {state}: {where}")
    return 1 if unflagged else 0


def _selected(value: str, papers: list[str]) -> list[str]:
    """The papers a --paper value names (comma-separated, or all: every one of ``papers``, in their order)."""
    selected = list(papers) if value == "all" else [p.strip() for p in value.split(",") if p.strip()]
    unknown = [p for p in selected if p not in papers]
    if unknown:
        raise SentembError(f"unknown paper(s) {unknown}: choose from {', '.join(papers)} or all")
    return selected


def _profile_argument(p: argparse.ArgumentParser, default: str | None = "small", help_text: str | None = None) -> None:
    from sentemb.profiles import PROFILES

    p.add_argument("--profile", default=default, choices=list(PROFILES), help=help_text)


def _extended_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--extended",
        action="store_true",
        help="also the rows a paper keeps outside its small-profile "
        "time budget (each paper's README lists them; smoke and full run them anyway)",
    )


def add_evaluate_arguments(p: argparse.ArgumentParser) -> None:
    from sentemb.models.poolers import POOLERS

    p.add_argument("--model", required=True, help="model directory, hub id, all-MiniLM-L6-v2 or tiny-random-bert")
    p.add_argument("--pooler", required=True, choices=POOLERS)
    p.add_argument(
        "--tasks",
        default="sts",
        help="task groups, comma-separated: sts, transfer (SimCSE's 7), "
        "declutr (the 7 + SST5, SICK-E), probing (10 tasks), mteb",
    )
    p.add_argument(
        "--sts-protocol",
        default="simcse",
        help="simcse (cosine, 'all'), senteval (DeCLUTR's: "
        "'mean' + trained regressor for STS-B/SICK-R), or both: simcse,senteval",
    )
    p.add_argument(
        "--transfer-mode",
        default="fasttest",
        choices=("fasttest", "test"),
        help="SimCSE's SentEval parameter sets: fasttest (kfold 5, rmsprop) or test (kfold 10, adam)",
    )
    p.add_argument("--splits", default="test", help="STS-B/SICK-R splits to score, e.g. dev,test (default test)")
    p.add_argument("--batch-size", type=int, default=64, help="encoding batch size (every group, MTEB included)")
    p.add_argument("--device", default=None, help="e.g. cpu or cuda (default: the model's)")
    p.add_argument(
        "--output",
        default=None,
        help="JSON with the full result (all/mean/wmean, Pearson, provenance); "
        "default results/evaluations/<model>__<pooler>.json",
    )


PAPER_HELP = "a name of the registry (python -m sentemb papers lists them)"


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--paper", required=True, help=PAPER_HELP)
    _profile_argument(p)
    p.add_argument("--only", default=None, help="comma-separated run names of the grid")
    p.add_argument("--no-run", action="store_true", help="only load existing records; fail if one is missing")
    _extended_argument(p)
    p.add_argument(
        "--launcher",
        choices=("slurm", "local"),
        default=None,
        help="submit each run without a record as a job through submitit (slurm; local: processes on "
        "this machine) and wait for them; default: run them here, one after the other",
    )
    p.add_argument("--dry-run", action="store_true", help="with --launcher: print the jobs, submit nothing")
    p.add_argument(
        "--jobs",
        type=_positive_int,
        default=None,
        help="runs of a grid pass side by side, each in its own "
        "process with an equal share of the torch threads (default: the profile's, 2 on smoke, else 1). On 2 CPU "
        "cores, 2 train the small profile's runs about a quarter sooner (benchmarks/bench_thread_scaling.py); with "
        "fewer threads a run's numbers can differ from the committed records' in float rounding",
    )
    p.add_argument(
        "--notebook",
        action="store_true",
        help="then execute the paper's notebook (as the 'notebook' "
        "command does) in the same process, once every run has its record",
    )
    p.add_argument(
        "--speedups",
        default=None,
        help="speed-ups of the training step that change no result beyond float rounding "
        "(shared/sentemb/train/speedups.py): 'default' (the device's; none yet), 'none', or a comma list of "
        "fused_adamw, sync_free, compile, pad_multiple=N, eval_batch=N; sets $SENTEMB_SPEEDUPS for every run, "
        "job and process it starts; records list them",
    )
    p.add_argument("--partition", default=None, help="Slurm partition (default: the cluster's)")
    p.add_argument(
        "--gpus",
        type=int,
        default=None,
        help="GPUs per job (more than one: torchrun-style DDP inside the "
        "job); default: the profile's (full 1, small and smoke 0)",
    )
    p.add_argument("--cpus", type=int, default=None, help="CPU cores per job (default: the profile's)")
    p.add_argument("--mem-gb", type=int, default=None, help="memory per job in GB (default: the profile's)")
    p.add_argument(
        "--time",
        type=int,
        default=None,
        help="minutes per job before Slurm stops it; the job is then "
        "requeued and resumes from its last state (default: the profile's)",
    )


def add_notebook_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--paper", required=True, help=f"{PAPER_HELP}; several comma-separated, or all")
    _profile_argument(p)
    p.add_argument("--no-run", action="store_true", help="build tables/figures from existing records only")
    _extended_argument(p)


def add_summary_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("folder", help="the folder of run events (<paper>.jsonl) and walls.tsv that run_all.sh filled")


def add_export_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--run", required=True, help="the run id (python -m sentemb runs lists them)")
    _profile_argument(p, default=None, help_text="the profile of the record (default: the one profile that has it)")
    p.add_argument("--format", default="sentence-transformers", choices=("sentence-transformers",))
    p.add_argument(
        "--out",
        default=None,
        help="the directory to create (default $SENTEMB_CACHE/exports/<profile>/<run_id>-sentence-transformers)",
    )


def add_data_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("verify", "fetch"))
    p.add_argument(
        "datasets",
        nargs="*",
        help="dataset names of the registry. Default: for verify, all of them; for fetch, every dataset with a "
        "download source (the evaluation sets sts12-16, stsb, sickr, mr, cr, subj, mpqa, sst2, sst5, trec, mrpc from "
        "senteval.tar, SentEval's probing_* files; the full profile's wiki1m_for_simcse and nli_for_simcse only when "
        "named), skipping what the download cache already holds verified",
    )


def add_reported_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--paper", default="all", help=f"{PAPER_HELP} (not the overview); several comma-separated, or all")
    p.add_argument("--all", action="store_true", help="also the repeated numbers whose copies agree")


def cmd_pretrain(args) -> int:
    from sentemb.pretrain.configs import PretrainConfig
    from sentemb.pretrain.publish import publish
    from sentemb.pretrain.run import output_dir, pretrain

    config = PretrainConfig(
        size=args.config,
        steps=args.steps,
        batch_size=args.batch_size,
        lr=args.lr,
        warmup=args.warmup,
        weight_decay=args.weight_decay,
        seed=args.seed,
        eval_every=args.eval_every,
        heldout_sequences=args.heldout_sequences,
        max_len=args.max_len,
        dropout=args.dropout,
        precision=args.precision,
    )
    directory = output_dir(config, args.out)
    if not (args.publish and (directory / "record.json").is_file()):
        record = pretrain(config, args.out, tokenizer_source=args.tokenizer)
        print(
            f"[pretrain] {record['steps']} steps, {record['tokens_seen']:,} tokens ({record['epochs']:.2f} epochs) in "
            f"{record['wall_seconds']:.0f} s on {record['provenance']['device']}: MLM loss train "
            f"{record['final_train_loss']:.3f}, held-out {record['final_heldout_loss']:.3f} (kept: step "
            f"{record['kept']['step']}, {record['kept']['heldout_loss']:.3f})"
        )
        print(f"[pretrain] wrote {directory}/model and record.json")
    if args.publish:
        print(f"[pretrain] published as backbone {args.publish!r}: {publish(directory, args.publish)}")
    return 0


def add_pretrain_arguments(p: argparse.ArgumentParser) -> None:
    from sentemb.pretrain.configs import SIZES, PretrainConfig

    default = PretrainConfig()
    sizes = "; ".join(
        f"{name}: {s.layers} layers x {s.hidden} hidden, {s.bf16_mb:g} MB in bf16" for name, s in SIZES.items()
    )
    p.add_argument("--config", default=default.size, choices=list(SIZES), help=f"the model size ({sizes})")
    p.add_argument("--steps", type=_positive_int, default=default.steps, help="optimizer steps (default %(default)s)")
    p.add_argument(
        "--batch-size", type=_positive_int, default=default.batch_size, help="sequences a step (default %(default)s)"
    )
    p.add_argument("--lr", type=float, default=default.lr, help="AdamW's peak learning rate (default %(default)s)")
    p.add_argument(
        "--warmup",
        type=int,
        default=default.warmup,
        help="steps of linear warm-up, then linear decay to 0 at the last step (default %(default)s)",
    )
    p.add_argument(
        "--weight-decay",
        type=float,
        default=default.weight_decay,
        help="AdamW's, on the matrices only (default %(default)s)",
    )
    p.add_argument("--seed", type=int, default=default.seed, help="initialisation, order, masks, dropout")
    p.add_argument(
        "--eval-every",
        type=_positive_int,
        default=default.eval_every,
        help="steps between held-out evaluations, each also a resumable state (default %(default)s)",
    )
    p.add_argument(
        "--heldout-sequences",
        type=_positive_int,
        default=default.heldout_sequences,
        help="sequences of WikiText-2 valid for the held-out loss (default %(default)s; it has 1816 of 128 tokens)",
    )
    p.add_argument(
        "--max-len",
        type=int,
        default=default.max_len,
        help="tokens a sequence, [CLS] and [SEP] included (default %(default)s)",
    )
    p.add_argument(
        "--dropout",
        type=float,
        default=default.dropout,
        help="dropout of the hidden and attention layers while pretraining (default %(default)s, BERT's); the saved "
        "config has BERT's 0.1 for fine-tuning whatever this is",
    )
    p.add_argument(
        "--precision",
        default=default.precision,
        choices=["bf16", "fp32"],
        help="autocast of the encoder (default %(default)s: on a GPU, and on a CPU with avx512_bf16 or AMX, about "
        "1.5x faster there than fp32; emulated and slow on other CPUs); the MLM head and the loss are fp32 always",
    )
    p.add_argument(
        "--out",
        default=None,
        help="the run's directory (default $SENTEMB_CACHE/pretrain/<id>, id: the settings' hash); an unfinished "
        "run there continues, a finished one is never overwritten",
    )
    p.add_argument(
        "--tokenizer",
        default="all-MiniLM-L6-v2",
        help="a backbone name or model directory whose tokenizer to use (default %(default)s, the uncased BERT "
        "vocabulary; its sha256 is recorded)",
    )
    p.add_argument(
        "--publish",
        metavar="NAME",
        help="then copy the finished run to shared/models/NAME (NAME: sentemb-...), with MANIFEST.json and a model "
        "card, as a backbone every spec can name; a finished run in --out is published without training again",
    )


@dataclass(frozen=True)
class Command:
    """A subcommand: its name, its line in the top-level help, what runs it and what it takes."""

    name: str
    summary: str
    handler: Callable[[argparse.Namespace], int]
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None
    description: str | None = None  # the subcommand's own --help text


COMMANDS = (
    Command("evaluate", "evaluate a model: STS, SentEval transfer/probing, MTEB", cmd_evaluate, add_evaluate_arguments),
    Command(
        "run",
        "run or load a paper's experiment grid",
        cmd_run,
        add_run_arguments,
        "Run (or load) the records of a paper's grid. A record file of the profile that cannot be read (truncated, "
        "corrupt) is named on stderr, moved aside to <name>.broken (kept) and its run computed again; with "
        "--no-run it is an error naming the file (exit 2).",
    ),
    Command("notebook", "execute a paper's notebook with papermill", cmd_notebook, add_notebook_arguments),
    Command("papers", "the registered papers, one name a line, in the order they are run", cmd_papers),
    Command(
        "summary",
        "run_all.sh's table: runs trained / loaded / not run and wall time per paper",
        cmd_summary,
        add_summary_arguments,
    ),
    Command(
        "export",
        "a recorded run's model as a sentence-transformers directory",
        cmd_export,
        add_export_arguments,
        "Writes the evaluated model of a recorded run (one encoder, an encoder with its test-time MLP, or TNCSE's "
        "two encoders) as a directory that sentence_transformers.SentenceTransformer loads, with a model card "
        "(README.md) generated from the run record. The export is loaded back and must encode to the archive's "
        "embeddings within 1e-5, or nothing is written. An existing directory is never overwritten.",
    ),
    Command(
        "site",
        "the executed notebooks as a static HTML site (index: every paper's coverage)",
        cmd_site,
        _profile_argument,
        "Writes site/<profile>/index.html (SENTEMB_SITE moves it) and one page per executed notebook; the pages "
        "need no network.",
    ),
    Command(
        "data",
        "verify (sha256) or fetch the registered data files",
        cmd_data,
        add_data_arguments,
        "verify: check every registered file (or the named datasets') against registry.tsv. fetch: download datasets "
        "into $SENTEMB_CACHE/data, resumably (an interrupted download continues when the command is run again), and "
        "check each file's hash. A run that needs a missing file downloads its dataset itself unless "
        "SENTEMB_NO_DOWNLOAD=1.",
    ),
    Command(
        "runs",
        "list run records (a record that cannot be read is named on stderr, exit 1)",
        cmd_runs,
        _profile_argument,
        "List the run records of a profile, one line each. A record file that cannot be read (truncated, "
        "corrupt, not a complete record) is not listed: it is named on stderr with the fix (delete it; 'run' "
        "computes it again), and the exit status is 1. Exit 0: every record was read.",
    ),
    Command(
        "reported",
        "numbers a paper prints in more than one table, and whether they agree",
        cmd_reported,
        add_reported_arguments,
        "Cross-table self-check of the papers' reported numbers (papers/<paper>/reported/; which cells are "
        "copies: same_cells.csv). Lists the disagreeing copies (--all: every repeated number); exit 1 if a "
        "disagreeing copy carries no 'inconsistent:' note.",
    ),
    Command(
        "pretrain",
        "MLM-pretrain a small BERT from the mirror's training text",
        cmd_pretrain,
        add_pretrain_arguments,
        "Masked language modelling (15 %; 80/10/10) of a BERT-style encoder on the mirror's training text: WikiText-2"
        " train articles, the leads of Wikipedia's vital articles and the head of SimCSE's wiki1m, less every unit "
        "sharing a 13-word run with WikiText-2 valid or test; packed into sequences of --max-len tokens with MiniLM's"
        " uncased BERT vocabulary. AdamW, linear warm-up and decay, bf16 autocast (--precision; the MLM head and loss"
        " in fp32), seeded. The held-out MLM loss (WikiText-2 valid) is logged every --eval-every steps, when the "
        "state is also saved: the same command continues an interrupted run to the same result; the weights of the "
        "lowest held-out loss are kept. Writes <out>/model (bf16 safetensors, config, tokenizer) and "
        "<out>/record.json (settings, text sha256, curves, device, versions, commit, wall time, the command); "
        "--publish makes it a backbone under shared/models/. The raw profile's backbone is made on a GPU by "
        "benchmarks/gpu_pretrain.py or on CPUs by this command, continued across sessions (docs/raw-backbone.md); its"
        " model card has the exact command, and python -m sentemb.pretrain_check tests a run's checkpoint with "
        "SimCSE's STS-B dev curves.",
    ),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sentemb", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        p = sub.add_parser(command.name, help=command.summary, description=command.description)
        if command.add_arguments is not None:
            command.add_arguments(p)
        p.set_defaults(func=command.handler)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _threads(args.threads)
    try:
        return args.func(args)
    except SentembError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "interrupted: finished runs are saved; an unfinished training run resumes from its last "
            "evaluation when started again",
            file=sys.stderr,
        )
        return 130
