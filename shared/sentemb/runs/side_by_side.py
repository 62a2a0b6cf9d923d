"""Several runs of one grid pass side by side, one process each (``sentemb run --jobs N``, ``./run_all.sh``).

A run does not use a small CPU's cores fully, so the runs of a pass go to a pool of ``jobs`` fresh (spawned)
processes with ``threads`` torch threads each, each writing its own record through
:func:`sentemb.runs.execute.ensure` as it would alone. What stays in order:
- a run whose ``init_runs`` are runs of the same pass starts once their records exist, and loads their checkpoints;
- a pass with a single run (the non-contrastive scan's trials) runs in this process with every thread.
A neighbour changes nothing in a run's record (``tests/test_side_by_side.py``), but the thread count can move the
numbers in float rounding; each record's ``provenance.torch_threads`` says what it had. ``--jobs`` is opt-in: it
reproduced the committed records of SimCSE and SimCSE++, but gained too little to bring them under the time budget.
Measurements (throughput, rounding, wall times): docs/derivations.md#sentembrunsside_by_sidepy
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from typing import Callable

from sentemb.errors import SentembError
from sentemb.runs.recorded import recorded
from sentemb.spec import RunSpec

# (name, spec, record or None, error message or None, seconds this call took)
Report = Callable[[str, RunSpec, "dict | None", "str | None", float], None]


def _start_worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


def record_or_error(spec: RunSpec, run_missing: bool, progress: bool = False) -> tuple[dict | None, str | None]:
    """(the run's record, None), or (None, the message of the SentembError that stopped it): one failed run does not
    stop the others (a bug still raises). ``sentemb run`` reports either, one at a time or side by side."""
    try:
        record = recorded(spec, run_missing)
        if record is None:  # the training and evaluation code is imported only when a run needs it
            from sentemb.runs.execute import ensure

            record = ensure(spec, run_missing=run_missing, progress=progress)
        return record, None
    except SentembError as exc:
        return None, str(exc)


def _ensure(spec: dict, run_missing: bool) -> tuple[dict | None, str | None]:
    """In a worker: :func:`record_or_error` of the spec (sent as a dict), without progress bars."""
    return record_or_error(RunSpec.from_dict(spec), run_missing)


def _waits(spec: RunSpec, unfinished: set[str]) -> bool:
    return any(run_id in unfinished for run_id in spec.init_runs)


def run_pass(todo: list[tuple[str, RunSpec]], jobs: int, threads: int, run_missing: bool, report: Report) -> None:
    """Every (name, spec) of ``todo``, at most ``jobs`` at a time; ``report`` is called in this process as each one
    ends, in the order they end."""
    pending = list(todo)
    unfinished = {spec.run_id for _, spec in todo}
    running: dict[Future, tuple[str, RunSpec, float]] = {}
    context = multiprocessing.get_context("spawn")
    with (
        ProcessPoolExecutor(
            max_workers=jobs, mp_context=context, initializer=_start_worker, initargs=(threads,)
        ) as pool,
        _workers_stop_with_this_process(pool),
    ):
        while pending or running:
            ready = [(name, spec) for name, spec in pending if not _waits(spec, unfinished)]
            if not ready and not running:  # runs waiting on each other (a cycle): the first starts, as it would
                ready = pending[:1]  # one at a time
            for name, spec in ready[: jobs - len(running)]:
                pending.remove((name, spec))
                running[pool.submit(_ensure, spec.as_dict(), run_missing)] = (name, spec, time.perf_counter())
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                name, spec, started = running.pop(future)
                record, error = future.result()
                unfinished.discard(spec.run_id)
                report(name, spec, record, error, time.perf_counter() - started)


@contextmanager
def _workers_stop_with_this_process(pool: ProcessPoolExecutor):
    """When this process is stopped (Ctrl-C, or ``kill``: SIGTERM is turned into SystemExit for the pass), its
    workers stop too instead of training on as orphans; a run stopped halfway resumes from its last saved state next
    time, and the records already written stay. Leaving the pool normally waits for its workers, as before."""
    handles_signals = threading.current_thread() is threading.main_thread()  # Python sets handlers there only
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm) if handles_signals else None
    try:
        yield
    except BaseException:
        _terminate_workers(pool)
        raise
    finally:
        if handles_signals:  # None: a handler not set from Python, i.e. the default
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _exit_on_sigterm(signum, frame):
    raise SystemExit(f"stopped by signal {signum}")


def _terminate_workers(pool: ProcessPoolExecutor) -> None:
    """SIGTERM to every worker of ``pool``. ProcessPoolExecutor has a public way only from Python 3.14
    (``terminate_workers``); before it, its process table (``_processes``) is the only handle on the workers."""
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        if process.is_alive():
            process.terminate()
