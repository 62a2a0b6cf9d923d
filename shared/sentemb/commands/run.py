"""``python -m sentemb run`` and ``notebook``: a paper's grid run or loaded (:mod:`sentemb.grid_run`), here or as
jobs, and its notebook executed; torch threads and side-by-side runs by profile."""

from __future__ import annotations

import argparse
from contextlib import contextmanager

from sentemb.commands.arguments import PAPER_HELP, extended_argument, positive_int, profile_argument, selected_papers
from sentemb.errors import SentembError


def _use_speedups(text: str) -> None:
    """``--speedups``: checked, then set as ``$SENTEMB_SPEEDUPS``, which every run of this process reads and the
    processes and jobs it starts inherit."""
    import os

    from sentemb.train import speedups

    if text.strip() != "default":
        speedups.Speedups.parse(text)  # a ConfigError saying what it accepts
    os.environ[speedups.ENVIRONMENT_VARIABLE] = text


@contextmanager
def _profile_threads(profile: str, chosen: int | None):
    """Torch's CPU threads for a command on ``profile``: its ``torch_threads`` (smoke: 1), unless ``--threads``
    (``chosen``) or ``OMP_NUM_THREADS`` chose them; the earlier count comes back afterwards. Side-by-side workers
    share them out (``--jobs``)."""
    import torch

    from sentemb.profiles import get_profile

    wanted = get_profile(profile).threads_to_set(chosen)
    if wanted is None:
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


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--paper", required=True, help=PAPER_HELP)
    profile_argument(p)
    p.add_argument("--only", default=None, help="comma-separated run names of the grid")
    p.add_argument("--no-run", action="store_true", help="only load existing records; fail if one is missing")
    extended_argument(p)
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
        type=positive_int,
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


def cmd_notebook(args) -> int:
    from sentemb.notebooks import execute_notebook
    from sentemb.paper import registry

    for paper in selected_papers(args.paper, list(registry())):
        execute_notebook(paper, args.profile, run_missing=not args.no_run, extended=args.extended)
    return 0


def add_notebook_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--paper", required=True, help=f"{PAPER_HELP}; several comma-separated, or all")
    profile_argument(p)
    p.add_argument("--no-run", action="store_true", help="build tables/figures from existing records only")
    extended_argument(p)
