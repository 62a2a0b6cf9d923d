"""``sentemb run``: every run of a paper's grid on a profile recorded (or loaded), then, when asked, its notebook.

A grid may depend on the records already there (the non-contrastive paper's SMAC scan proposes its next trial from
the earlier ones, and its headline rows follow the scan's best trials), so it is asked again after each pass until it
has nothing new (:mod:`sentemb.runs.fixed_point`). The runs go one of three ways:

- here, one after the other (the default), each reported as it ends;
- here, side by side (``jobs`` > 1): a pass's runs without a record train in a pool of processes
  (:mod:`sentemb.runs.side_by_side`);
- as jobs (``launcher``: slurm or local), one submitit job per run without a record (:mod:`sentemb.launch`).

One failed run does not stop the others: the failures are listed at the end (a :class:`SentembError`) and the notebook
is not executed. Under torchrun every rank runs the grid; rank 0 writes and reports.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from sentemb import distributed
from sentemb.errors import SentembError
from sentemb.paper import get_paper
from sentemb.runs import events, store
from sentemb.runs.fixed_point import run_to_fixed_point
from sentemb.runs.side_by_side import record_or_error, run_pass
from sentemb.spec import RunSpec


@dataclass(frozen=True)
class GridRun:
    """What ``sentemb run`` is asked to do: a paper's grid on a profile, and how to run it."""

    paper: str
    profile: str
    extended: bool = False  # also the rows a paper keeps outside its small-profile budget
    only: tuple[str, ...] | None = None  # run names of the grid; None: every row
    run_missing: bool = True  # False (--no-run): load the records, run nothing
    jobs: int = 1  # runs of a pass side by side on this machine
    launcher: str | None = None  # slurm or local: one submitit job per run without a record
    resources: dict = field(default_factory=dict)  # overrides of the profile's JobResources (None: the profile's)
    dry_run: bool = False  # with a launcher: print the jobs, submit nothing
    notebook: bool = False  # then execute the paper's notebook in this process

    def grid(self) -> dict[str, tuple[RunSpec, ...]]:
        return paper_grid(self.paper, self.profile, self.extended)


def paper_grid(paper: str, profile: str, extended: bool) -> dict[str, tuple[RunSpec, ...]]:
    """The registered paper's grid on ``profile`` (with ``extended``, also the rows outside its budget)."""
    return get_paper(paper).grid(profile, extended=extended)


def run_grid(run: GridRun) -> None:
    """Record (or load) every run of ``run``'s grid, then execute the notebook when asked. Under torchrun each rank
    runs it as its entry point (:func:`sentemb.distributed.as_rank_entry`: an error names the rank)."""
    if distributed.init_from_environment():
        print(f"[run] rank {distributed.rank()} of {distributed.world_size()} processes", flush=True)
        distributed.as_rank_entry(_run_grid, run)
    else:
        _run_grid(run)


def _run_grid(run: GridRun) -> None:
    """:func:`run_grid` in this process, once it has joined the process group (if any)."""
    # A record that cannot be read is named, moved aside and computed again (with --no-run: an error naming it).
    store.all_records(run.profile, on_broken="recompute" if run.run_missing else "raise")
    if run.run_missing and not run.dry_run:
        check_backbone(run.profile)
    if run.only:
        check_run_names(run)
    if run.launcher:
        run_as_jobs(run)
    else:
        run_here(run)
    if run.notebook and not run.dry_run and distributed.is_main():
        from sentemb.notebooks import execute_notebook

        execute_notebook(run.paper, run.profile, run_missing=run.run_missing, extended=run.extended)


def check_backbone(profile: str) -> None:
    """The profile's backbone resolves (an archive backbone published in ``shared/models``, a model directory that
    exists): checked once here, so that a missing one stops the grid with one error instead of one per run."""
    from sentemb.models.backbone import resolve_backbone
    from sentemb.profiles import get_profile

    backbone = get_profile(profile).backbone
    if backbone:
        resolve_backbone(backbone)


def check_run_names(run: GridRun) -> None:
    specs = run.grid()
    unknown = [name for name in run.only if name not in specs]
    if unknown:
        raise SentembError(f"unknown run(s) {unknown}; the {run.paper} grid has: {', '.join(specs)}")


def run_here(run: GridRun) -> None:
    """The grid's runs in this process, or a pass's runs side by side with ``jobs`` > 1."""
    runs = RunsHere(run)
    side_by_side = run.jobs > 1 and distributed.world_size() == 1
    done = len(run_to_fixed_point(run.grid, runs.one, run.only, runs.many if side_by_side else None))
    if runs.failed:
        raise SentembError(f"{len(runs.failed)} of {done} runs failed:\n  " + "\n  ".join(runs.failed))


class RunsHere:
    """Runs one after the other (:meth:`one`) or a pass side by side (:meth:`many`), each reported as it ends."""

    def __init__(self, run: GridRun) -> None:
        self.run = run
        self.failed: list[str] = []
        self.reported = 0

    def one(self, name: str, spec: RunSpec) -> None:
        started = time.perf_counter()
        record, error = record_or_error(spec, self.run.run_missing, progress=True)
        self.report(name, spec, record, error, time.perf_counter() - started)

    def many(self, todo: list[tuple[str, RunSpec]]) -> None:
        """A pass of several runs: those with a record load here; the others train side by side."""
        import torch

        to_train = [(name, spec) for name, spec in todo if not store.record_path(spec.profile, spec.run_id).is_file()]
        for name, spec in todo:
            if (name, spec) not in to_train:
                self.one(name, spec)
        if len(to_train) < 2 or not self.run.run_missing:
            for name, spec in to_train:
                self.one(name, spec)
            return
        threads = max(1, torch.get_num_threads() // self.run.jobs)
        print(
            f"[run] {len(to_train)} runs to train, up to {self.run.jobs} side by side with {threads} torch "
            "thread(s) each",
            flush=True,
        )
        run_pass(to_train, self.run.jobs, threads, self.run.run_missing, self.report)

    def report(self, name: str, spec: RunSpec, record: dict | None, error: str | None, seconds: float) -> None:
        """One line per run as it ends; a failed run is noted (its checkpoints are kept) and the others go on."""
        self.reported += 1
        if error is not None:
            self.failed.append(f"{name} seed {spec.seed} ({spec.run_id}): {error}")
            events.note("failed", spec.run_id, reason=f"{name} seed {spec.seed}: {error.splitlines()[0]}")
            print(f"[{self.reported}] {name:16s} seed {spec.seed}  {spec.run_id}  FAILED: {error}", flush=True)
        elif distributed.is_main():
            print(
                f"[{self.reported}] {name:16s} seed {spec.seed}  {record['run_id']}  "
                f"dev {100 * record['metrics']['stsb_dev_spearman']:.2f}  record wall "
                f"{record['timing']['total_seconds']:.0f} s  (this call {seconds:.1f} s)",
                flush=True,
            )


def run_as_jobs(run: GridRun) -> None:
    """One submitit job per run without a record (:mod:`sentemb.launch`), waiting for all of them."""
    from sentemb.launch import launch_grid, resources_with
    from sentemb.profiles import get_profile
    from sentemb.runs.execute import ensure

    resources = resources_with(get_profile(run.profile).job, **run.resources)
    status = launch_grid(
        run.grid,
        run.only,
        run.profile,
        run.launcher,
        resources,
        dry_run=run.dry_run,
        loaded=lambda name, spec: ensure(spec, run_missing=False, progress=False),
    )
    failed = {run_id: s for run_id, s in status.items() if s.startswith(("failed", "not run"))}
    if not run.dry_run:
        print(
            f"[launch] {run.paper}: {sum(s == 'done' for s in status.values())} run(s) recorded by jobs, "
            f"{sum(s == 'loaded' for s in status.values())} loaded, {len(failed)} failed or not run"
        )
    if failed:
        raise SentembError(
            f"{len(failed)} run(s) have no record:\n  " + "\n  ".join(f"{run_id}: {s}" for run_id, s in failed.items())
        )
