"""Grids on a cluster: each run of a paper's grid as one job, through submitit (``--launcher slurm``).

``sentemb run --paper P --profile full --launcher slurm`` submits one job per run without a record, with the
profile's :class:`sentemb.profiles.JobResources` (``--partition``, ``--gpus``, ``--cpus``, ``--mem-gb``, ``--time``
override them), and waits for the jobs; ``--launcher local`` runs them as local processes (the tests),
``--dry-run`` prints them and submits nothing.
- A job is a run: :class:`RunJob` calls :func:`sentemb.runs.execute.ensure`, with one task per GPU joining the
  torch.distributed group (submitit's ``TorchDistributedEnvironment``).
- Preemption: :meth:`RunJob.checkpoint` requeues the job (up to ``MAX_REQUEUES`` time-outs) and training resumes from
  the run's last ``state.pt`` (every ``SENTEMB_STATE_EVERY_S`` seconds), giving the record an uninterrupted run gives.
- Waves: runs with ``init_runs`` wait for those records, and a grid that depends on its records (the SMAC scan) is
  asked again after each wave until it proposes nothing new (:mod:`sentemb.runs.fixed_point`); a dry run shows the
  first wave only, and says so.
Logs: ``$SENTEMB_CACHE/jobs/<profile>/``. The launcher in full: docs/derivations.md#sentemblaunchpy
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Callable, Iterable

from sentemb import settings
from sentemb.errors import SentembError
from sentemb.profiles import JobResources
from sentemb.runs import store
from sentemb.spec import RunSpec

LAUNCHERS = ("slurm", "local")
MAX_REQUEUES = 3
#: environment variables a job takes from the shell that submits it (where the data, results and caches are)
FORWARDED_ENV = ("SENTEMB_", "HF_", "TRANSFORMERS_", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def forwarded_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_ENV)}


class RunJob:
    """One run as a submitit job: its spec (as a dict) and the submitting shell's SENTEMB_/HF_ environment."""

    def __init__(self, spec: dict, environment: dict[str, str]) -> None:
        self.spec, self.environment = spec, environment

    def __call__(self) -> str:
        os.environ.update(self.environment)
        import submitit

        from sentemb import distributed
        from sentemb.runs.execute import ensure

        spec = RunSpec.from_dict(self.spec)
        if submitit.JobEnvironment().num_tasks > 1:  # one task per GPU: a torch.distributed group
            submitit.helpers.TorchDistributedEnvironment().export(set_cuda_visible_devices=False)
            distributed.init_from_environment()
            return distributed.as_rank_entry(ensure, spec, progress=True)["run_id"]  # an error names the task's rank
        return ensure(spec, progress=True)["run_id"]

    def checkpoint(self, *args, **kwargs):
        """Requeue this very job; training resumes from the run's last state.pt."""
        import submitit

        return submitit.helpers.DelayedSubmission(RunJob(self.spec, self.environment), *args, **kwargs)


def resources_with(base: JobResources, **overrides) -> JobResources:
    """``base`` with the options that were given (None: keep the profile's)."""
    return dataclasses.replace(base, **{k: v for k, v in overrides.items() if v is not None})


def executor(launcher: str, profile: str, resources: JobResources):
    import submitit

    if launcher not in LAUNCHERS:
        raise SentembError(f"unknown launcher {launcher!r}; choose from {', '.join(LAUNCHERS)}")
    folder = settings.cache_root() / "jobs" / profile / "%j"
    out = submitit.AutoExecutor(folder=folder, cluster=launcher)
    tasks = max(1, resources.gpus)
    params = dict(
        timeout_min=resources.timeout_min,
        mem_gb=resources.mem_gb,
        cpus_per_task=resources.cpus,
        gpus_per_node=resources.gpus,
        tasks_per_node=tasks,
        nodes=1,
        name=f"sentemb-{profile}",
    )
    if launcher == "slurm":
        params.update(slurm_max_num_timeout=MAX_REQUEUES, slurm_signal_delay_s=120)
        if resources.partition:
            params["slurm_partition"] = resources.partition
    out.update_parameters(**params)  # the local executor requeues a preempted job too (its own limit: 3)
    return out


def describe(resources: JobResources) -> str:
    return (
        f"partition={resources.partition or '(default)'} gpus={resources.gpus} cpus={resources.cpus} "
        f"mem={resources.mem_gb}G time={resources.timeout_min}min"
    )


def _waiting_for(spec: RunSpec) -> list[str]:
    """The ``init_runs`` of ``spec`` that have no record yet."""
    return [r for r in spec.init_runs if store.load(spec.profile, r) is None]


def launch_grid(
    ask: Callable[[], dict],
    names: Iterable[str] | None,
    profile: str,
    launcher: str,
    resources: JobResources,
    dry_run: bool = False,
    loaded: Callable[[str, RunSpec], None] | None = None,
    print_fn: Callable[[str], None] = print,
) -> dict[str, str]:
    """Submit every run of the grid that has no record, wave after wave, and wait for them; returns {run_id: status}
    with status "loaded" (had a record), "done", "failed: <why>" or, in a dry run, "would submit"/"would wait".
    ``loaded(name, spec)`` is called for each run that already has a record (the CLI loads it, noting the event)."""
    wanted = None if names is None else list(names)
    status: dict[str, str] = {}
    wave = 0
    while True:
        grid = ask()
        todo = [
            (name, spec)
            for name in (wanted if wanted is not None else grid)
            if name in grid
            for spec in grid[name]
            if spec.run_id not in status
        ]
        ready, waiting = [], []
        for name, spec in todo:
            if store.load(profile, spec.run_id) is not None:
                status[spec.run_id] = "loaded"
                if loaded is not None:
                    loaded(name, spec)
            elif _waiting_for(spec):
                waiting.append((name, spec))
            else:
                ready.append((name, spec))
        if dry_run:
            wave += 1
            print_fn(f"[dry run] {launcher} jobs of the first wave ({describe(resources)} each):")
            for name, spec in ready:
                print_fn(f"  submit  {name:28s} seed {spec.seed}  run {spec.run_id}")
                status[spec.run_id] = "would submit"
            for name, spec in waiting:
                print_fn(
                    f"  later   {name:28s} seed {spec.seed}  run {spec.run_id}  (after runs "
                    f"{', '.join(_waiting_for(spec))})"
                )
                status[spec.run_id] = "would wait"
            print_fn(
                f"[dry run] {len(ready)} job(s) to submit now, {len(waiting)} after the runs they start from, "
                f"{sum(s == 'loaded' for s in status.values())} recorded; a grid that proposes runs from its "
                "records (the non-contrastive scan) adds more after each wave. Nothing was submitted."
            )
            return status
        if not ready:
            for name, spec in waiting:  # what they start from failed, or is not in this grid
                status[spec.run_id] = f"not run: runs {', '.join(_waiting_for(spec))} have no record"
                print_fn(f"[launch] {name} seed {spec.seed} ({spec.run_id}): {status[spec.run_id]}")
            return status
        wave += 1
        pool = executor(launcher, profile, resources)
        jobs = [(name, spec, pool.submit(RunJob(spec.as_dict(), forwarded_environment()))) for name, spec in ready]
        print_fn(
            f"[launch] wave {wave}: {len(jobs)} {launcher} job(s) submitted ({describe(resources)} each); "
            f"logs in {Path(pool.folder).parent}"
        )
        for name, spec, job in jobs:
            try:
                job.results()  # one result per task (a task per GPU); raises the first task's error
                status[spec.run_id] = "done"
                print_fn(f"[launch] {name} seed {spec.seed} ({spec.run_id}): recorded by job {job.job_id}")
            except Exception as exc:  # noqa: BLE001 - submitit re-raises the job's error; the others go on
                status[spec.run_id] = f"failed: {str(exc).strip().splitlines()[-1] if str(exc).strip() else exc!r}"
                print_fn(
                    f"[launch] {name} seed {spec.seed} ({spec.run_id}): job {job.job_id} FAILED; "
                    f"its log: {job.paths.stderr}"
                )
