"""--launcher: a grid's runs as submitit jobs (the local executor here; Slurm takes the same jobs)."""

import os
import signal
import threading
import time
from pathlib import Path

import pytest
import torch
from conftest import TINY_SPEC

from sentemb import cli, launch, settings
from sentemb.profiles import JobResources, get_profile
from sentemb.runs import execute, store
from sentemb.spec import RunSpec

TINY = dict(TINY_SPEC, steps=40, eval_every=5, max_len=16)
RESOURCES = JobResources(gpus=0, cpus=1, mem_gb=2, timeout_min=10)


def _grid():
    """Two SimCSE runs, then a TNCSE run that starts from both (a second wave)."""
    first = [RunSpec(**TINY, seed=seed) for seed in (42, 43)]
    tncse = RunSpec(
        **{
            **TINY,
            "objective": "tncse",
            "steps": 10,
            "lr_schedule": "constant",
            "objective_params": {"clamp_negative_cosine": True},
        },
        init_runs=tuple(s.run_id for s in first),
    )
    return {"unsup": tuple(first), "tncse": (tncse,)}


def _preempt(job) -> None:
    """What Slurm does to a preempted job: the job's task gets the preemption signal (USR2), submitit checkpoints
    the job and requeues it. (The local executor's own ``_interrupt`` signals its controller process, not the task.)"""
    controller = job._process.pid
    tasks = Path(f"/proc/{controller}/task/{controller}/children").read_text().split()
    assert tasks, "the job's task is not running"
    for pid in tasks:
        os.kill(int(pid), signal.SIGUSR2)


def _comparable(record: dict) -> dict:
    training = record["training"]
    metrics = {k: v for k, v in record["metrics"].items() if k != "seconds"}  # wall time differs, of course
    return {
        "metrics": metrics,
        "curve": training["dev_curve"],
        "best_step": training["best_step"],
        "final_loss": training["final_loss"],
        "spec": record["spec"],
    }


@pytest.mark.slow
def test_jobs_with_one_preempted_give_the_records_of_a_sequential_run(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the jobs compute with one thread, as the reference below
    monkeypatch.setenv("SENTEMB_STATE_EVERY_S", "0")  # a state at every evaluation: something to resume from
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        reference = {
            name: [_comparable(execute.ensure(s, progress=False)) for s in specs] for name, specs in _grid().items()
        }
    finally:
        torch.set_num_threads(threads)

    monkeypatch.setenv("SENTEMB_RESULTS", str(tmp_path / "jobs_results"))
    monkeypatch.setenv("SENTEMB_CACHE", str(tmp_path / "jobs_cache"))
    submitted, real_executor = [], launch.executor

    def recording_executor(*args, **kwargs):
        pool = real_executor(*args, **kwargs)
        submit = pool.submit
        pool.submit = lambda job: submitted.append((job, submit(job))) or submitted[-1][1]
        return pool

    monkeypatch.setattr(launch, "executor", recording_executor)
    lines, result = [], {}
    worker = threading.Thread(
        target=lambda: result.update(
            launch.launch_grid(_grid, None, "smoke", "local", RESOURCES, print_fn=lines.append)
        )
    )
    worker.start()
    target = _grid()["unsup"][0].run_id
    state = settings.checkpoints_root() / target / "state.pt"
    deadline = time.monotonic() + 240
    while not (state.is_file() and submitted) and worker.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert state.is_file(), "the job never wrote a state to resume from"
    job = next(j for run_job, j in submitted if run_job.spec["seed"] == 42)
    _preempt(job)
    worker.join(timeout=400)
    assert not worker.is_alive()

    assert set(result.values()) == {"done"} and len(result) == 3, (result, lines)
    assert sum("wave 1" in line for line in lines) == 1 and sum("wave 2" in line for line in lines) == 1
    records = {name: [store.load("smoke", s.run_id) for s in specs] for name, specs in _grid().items()}
    assert records["unsup"][0]["training"]["resumed_from_step"] > 0  # it was interrupted, and resumed
    for name, rs in records.items():
        for got, want in zip([_comparable(r) for r in rs], reference[name]):
            for key in want:
                assert got[key] == want[key], (name, key, got[key], want[key])

    # everything recorded: a second launch submits nothing
    again = launch.launch_grid(_grid, None, "smoke", "local", RESOURCES, print_fn=lines.append)
    assert set(again.values()) == {"loaded"} and len(submitted) == 3


def test_a_dry_run_lists_the_jobs_and_their_waves_and_submits_nothing(monkeypatch):
    monkeypatch.setattr(launch, "executor", lambda *a, **k: pytest.fail("a dry run submitted"))
    lines = []
    status = launch.launch_grid(_grid, None, "smoke", "slurm", RESOURCES, dry_run=True, print_fn=lines.append)
    assert sorted(status.values()) == ["would submit", "would submit", "would wait"]
    text = "\n".join(lines)
    assert "gpus=0 cpus=1 mem=2G time=10min" in text and "Nothing was submitted" in text
    assert "after runs" in text


def test_resources_come_from_the_profile_and_the_options_override_them():
    full = get_profile("full").job
    assert full.gpus == 1 and full.timeout_min > 0
    changed = launch.resources_with(full, gpus=4, partition="gpu", mem_gb=None)
    assert (changed.gpus, changed.partition, changed.mem_gb) == (4, "gpu", full.mem_gb)


def test_the_launcher_options_are_checked(capsys):
    assert cli.main(["run", "--paper", "simcse", "--profile", "smoke", "--dry-run"]) == 2
    assert "go with --launcher" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["run", "--paper", "simcse", "--launcher", "kubernetes"])
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.slow
def test_a_job_with_two_tasks_trains_one_run_with_ddp(tmp_path, monkeypatch):
    """More than one GPU per job starts one task per GPU, and the tasks form a torch.distributed group (here: 2 CPU
    tasks, gloo) that trains the one run and writes one record. (That 2 processes compute one process's gradients is
    test_distributed's; in float32, after a few steps of Adam at lr 1e-3, rounding differences move a tiny random
    BERT's dev score by a few thousandths.)"""
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    spec = RunSpec(**{**TINY, "steps": 6, "eval_every": 3, "dropout": 0.0})
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        reference = execute.ensure(spec, progress=False)
    finally:
        torch.set_num_threads(threads)
    monkeypatch.setenv("SENTEMB_RESULTS", str(tmp_path / "jobs_results"))
    monkeypatch.setenv("SENTEMB_CACHE", str(tmp_path / "jobs_cache"))
    two = JobResources(gpus=2, cpus=1, mem_gb=2, timeout_min=10)  # 2 tasks; no GPU here, so CUDA stays unused
    status = launch.launch_grid(lambda: {"unsup": (spec,)}, None, "smoke", "local", two, print_fn=lambda line: None)
    assert status == {spec.run_id: "done"}
    record = store.load("smoke", spec.run_id)
    assert record["provenance"]["processes"] == 2 and reference["provenance"]["processes"] == 1
    first, first_reference = record["training"]["dev_curve"][0], reference["training"]["dev_curve"][0]
    assert first["stsb_dev_spearman"] == pytest.approx(first_reference["stsb_dev_spearman"], abs=1e-9)  # same start
    assert record["training"]["rows_seen"] == reference["training"]["rows_seen"]  # the global batch, not twice it
    # the mean loss of the first 3 steps is the one process's (the gathered global batch), up to float32 rounding
    assert record["training"]["dev_curve"][1]["loss"] == pytest.approx(
        reference["training"]["dev_curve"][1]["loss"], rel=1e-4
    )
    assert record["metrics"]["stsb_dev_spearman"] == pytest.approx(reference["metrics"]["stsb_dev_spearman"], abs=0.02)
    assert len(list((tmp_path / "jobs_results" / "runs" / "smoke").glob("*.json"))) == 1
