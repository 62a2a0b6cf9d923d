"""``sentemb run --jobs N``: the runs of a pass side by side in fresh processes (sentemb.runs.side_by_side)."""

import json
import signal
import time
from pathlib import Path

import pytest

from sentemb.runs import side_by_side
from sentemb.spec import RunSpec


def _spec(seed: int, init_runs: tuple[str, ...] = ()) -> RunSpec:
    return RunSpec(
        profile="smoke", backbone="tiny-random-bert", pooler="avg", objective="none", seed=seed, init_runs=init_runs
    )


def _timed_work(log: str, spec: dict, run_missing: bool):
    """A worker's stand-in for ensure(): logs when it ran and returns a record-like dict (or an error)."""
    import torch

    started = time.time()
    time.sleep(0.6)
    with open(log, "a") as out:
        out.write(
            json.dumps(
                {
                    "run_id": RunSpec.from_dict(spec).run_id,
                    "start": started,
                    "end": time.time(),
                    "threads": torch.get_num_threads(),
                }
            )
            + "\n"
        )
    if spec["seed"] == 99:
        return None, "out of memory"
    return {"run_id": RunSpec.from_dict(spec).run_id}, None


def test_a_pass_runs_side_by_side_and_a_dependent_run_waits_for_its_init_runs(tmp_path, monkeypatch):
    log = tmp_path / "log.jsonl"
    first, second, failing = _spec(1), _spec(2), _spec(99)
    dependent = _spec(3, init_runs=(first.run_id, second.run_id))  # an ensemble of the two
    todo = [("dependent", dependent), ("a", first), ("b", second), ("c", failing)]
    reports = []
    monkeypatch.setattr(side_by_side, "_ensure", _BoundWork(str(log)))
    handler = signal.getsignal(signal.SIGTERM)
    side_by_side.run_pass(
        todo,
        jobs=2,
        threads=1,
        run_missing=True,
        report=lambda name, spec, record, error, seconds: reports.append((name, record, error)),
    )
    assert signal.getsignal(signal.SIGTERM) is handler  # the pass's own SIGTERM handler is gone with it
    ran = {r["run_id"]: r for r in map(json.loads, log.read_text().splitlines())}
    assert set(ran) == {s.run_id for _, s in todo} and {r["threads"] for r in ran.values()} == {1}
    assert ran[dependent.run_id]["start"] >= max(ran[first.run_id]["end"], ran[second.run_id]["end"])  # their records
    events = sorted([(r["start"], 1) for r in ran.values()] + [(r["end"], -1) for r in ran.values()])
    running = [sum(step for _, step in events[: i + 1]) for i in range(len(events))]
    assert max(running) == 2  # two at a time, never more
    assert sorted(name for name, _, _ in reports) == ["a", "b", "c", "dependent"]
    assert [(record, error) for name, record, error in reports if name == "c"] == [(None, "out of memory")]


class _BoundWork:
    """Picklable: the worker function with the log path bound (the pool sends it to the spawned processes)."""

    def __init__(self, log: str) -> None:
        self.log = log

    def __call__(self, spec: dict, run_missing: bool):
        return _timed_work(self.log, spec, run_missing)


@pytest.mark.slow
def test_two_smoke_runs_side_by_side_give_the_records_of_one_at_a_time_with_one_thread(
    isolated_outputs, monkeypatch, capsys
):
    """The real path (cli: run --jobs 2 -> spawned workers -> ensure -> records) on the smoke profile's two unsup.
    seeds, against the same runs one at a time with one thread in another store: a neighbour changes nothing."""
    import torch

    from sentemb import cli
    from sentemb.runs import store

    monkeypatch.delenv("SENTEMB_DATA", raising=False)  # generated rows: seconds per run
    threads, scores = torch.get_num_threads(), {}
    try:
        for command in (["run", "--jobs", "2"], ["--threads", "1", "run", "--jobs", "1"]):
            monkeypatch.setenv("SENTEMB_RESULTS", str(isolated_outputs / f"results_{len(scores)}"))
            monkeypatch.setenv("SENTEMB_CACHE", str(isolated_outputs / f"cache_{len(scores)}"))
            assert cli.main(command + ["--paper", "simcse", "--profile", "smoke", "--only", "unsup"]) == 0
            records = store.all_records("smoke")
            assert len(records) == 2 and {r["provenance"]["torch_threads"] for r in records} == {1}
            scores[len(scores)] = {
                r["run_id"]: (r["metrics"]["stsb_dev_spearman"], r["metrics"]["summary"]) for r in records
            }
    finally:
        torch.set_num_threads(threads)
    assert "2 runs to train, up to 2 side by side with 1 torch thread(s) each" in capsys.readouterr().out
    assert scores[0] == scores[1]


def test_a_lost_checkpoint_is_trained_again_with_the_threads_its_record_names(monkeypatch):
    """Training rounds differently with another thread count, so the re-training of a lost checkpoint (a derived
    analysis, a TNCSE stage-1 run) gets the record's ``provenance.torch_threads``; this process's count comes back."""
    import torch

    from sentemb.runs import execute

    spec = RunSpec(
        profile="smoke",
        backbone="tiny-random-bert",
        pooler="avg",
        objective="simcse_unsup",
        steps=2,
        train_data="wiki_sentences_combined",
        synthetic_data=True,
        seed=5,
    )
    record = {"spec": spec.as_dict(), "metrics": {"stsb_dev_spearman": 0.5}, "provenance": {"torch_threads": 1}}
    seen = []

    class Stop(Exception):
        pass

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        raise Stop

    monkeypatch.setattr(execute, "_train", spy)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with pytest.raises(Stop):
            execute.run_checkpoint(record, torch.device("cpu"))
        assert seen == [1] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


class _SleepingWork:
    """Picklable: a worker that writes its pid, then 'trains' for two minutes."""

    def __init__(self, log: str) -> None:
        self.log = log

    def __call__(self, spec: dict, run_missing: bool):
        import os

        with open(self.log, "a") as out:
            out.write(f"{os.getpid()}\n")
        time.sleep(120)
        return {"run_id": RunSpec.from_dict(spec).run_id}, None


def _gone(pid: int) -> bool:
    """The process has exited (a zombie waiting to be reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return any(line.split()[1] in ("Z", "X") for line in status if line.startswith("State:"))
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to see whether the workers still run")
def test_a_pass_stopped_with_sigterm_stops_its_workers(tmp_path):
    """`kill` of `sentemb run --jobs 2` used to leave both workers training on, orphaned, for hours."""
    import os
    import subprocess
    import sys

    log = tmp_path / "pids"
    script = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
import test_side_by_side as t
from sentemb.runs import side_by_side
side_by_side._ensure = t._SleepingWork({str(log)!r})
side_by_side.run_pass([("a", t._spec(1)), ("b", t._spec(2))], jobs=2, threads=1, run_missing=True,
                      report=lambda *args: None)
"""
    errors = tmp_path / "stderr"  # a file, not a pipe: orphaned workers would hold a pipe open
    parent = subprocess.Popen([sys.executable, "-c", script], stderr=errors.open("w"))
    try:
        deadline = time.time() + 120
        while time.time() < deadline and (not log.is_file() or len(log.read_text().split()) < 2):
            time.sleep(0.2)
        workers = [int(pid) for pid in log.read_text().split()]
        assert len(workers) == 2 and not any(_gone(pid) for pid in workers)
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=60) != 0 and "stopped by signal" in errors.read_text()
        deadline = time.time() + 30
        while time.time() < deadline and not all(_gone(pid) for pid in workers):
            time.sleep(0.2)
        assert all(_gone(pid) for pid in workers)
    finally:
        parent.kill()
        for pid in [int(p) for p in log.read_text().split()] if log.is_file() else []:
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)
