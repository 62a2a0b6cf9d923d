"""The next VICReg trial of a scan cell, proposed by SMAC3 in a fresh interpreter with a fixed hash seed.

SMAC 2.x's proposals after its initial design depend on the process: two fresh interpreters told the same trials
proposed different next trials unless ``PYTHONHASHSEED`` was the same (configurations are hashed from their values,
and the order in which sets of them are visited follows Python's per-process string hash seed). A scan is
reproducible only if every process proposes the same trials, so :func:`propose` never runs SMAC in the calling
process: it asks a worker, ``python -m papers.noncontrastive.smac_proposal`` started once with ``PYTHONHASHSEED=0``
and one thread, passing the history as JSON. ``tests/test_noncontrastive_paper.py`` checks that callers with
different hash seeds get the same proposals.

Inside that process (:func:`propose_here`): SMAC's hyperparameter-optimisation facade over ``domain`` (log-uniform
floats), seeded, with an initial (Sobol) design of ``max(1, n // 2)`` configurations, is told every recorded trial
(its configuration and cost) in run order and asked for the next one; a proposal that repeats a recorded
configuration (the initial design does not know told trials) is told its cost and skipped. Values are rounded to 3
significant digits, as the run specs store them.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile

from sentemb import settings
from sentemb.errors import SentembError

MAX_ASKS = 100


def propose_here(
    domain: dict[str, tuple[float, float]], history: list[tuple[dict, float]], n_trials: int, seed: int
) -> dict[str, float]:
    """SMAC's next configuration after ``history`` ([(values, cost)], in run order), in this process."""
    from ConfigSpace import Configuration, ConfigurationSpace, Float
    from smac import HyperparameterOptimizationFacade, Scenario
    from smac.runhistory.dataclasses import TrialInfo, TrialValue

    space = ConfigurationSpace(seed=seed)
    space.add([Float(name, tuple(bounds), log=True) for name, bounds in domain.items()])
    costs = {}
    with tempfile.TemporaryDirectory() as tmp:
        scenario = Scenario(space, deterministic=True, n_trials=n_trials, seed=seed, output_directory=tmp)
        design = HyperparameterOptimizationFacade.get_initial_design(scenario, n_configs=max(1, n_trials // 2))
        smac = HyperparameterOptimizationFacade(
            scenario, lambda config, seed=0: 0.0, initial_design=design, overwrite=True, logging_level=40
        )
        for values, cost in history:
            costs[tuple(values[name] for name in domain)] = cost
            smac.tell(TrialInfo(config=Configuration(space, values=values), seed=0), TrialValue(cost=cost))
        for _ in range(MAX_ASKS):
            info = smac.ask()
            values = {name: float(f"{float(info.config[name]):.3g}") for name in domain}
            key = tuple(values.values())
            if key not in costs:
                return values
            smac.tell(info, TrialValue(cost=costs[key]))
    raise SentembError(f"SMAC proposed only configurations that already ran ({MAX_ASKS} asks)")


class _Worker:
    """One interpreter with ``PYTHONHASHSEED=0`` and one thread, started on first use and kept for the process's
    lifetime: a request is one JSON line on its stdin, the answer one JSON line on its stdout (starting SMAC costs
    ~3 s, a proposal ~0.1 s)."""

    process: subprocess.Popen | None = None

    @classmethod
    def ask(cls, request: str) -> str:
        if cls.process is None or cls.process.poll() is not None:
            path = os.pathsep.join(p for p in (str(settings.REPO_ROOT), os.environ.get("PYTHONPATH")) if p)
            env = {**os.environ, "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1", "PYTHONPATH": path}
            cls.process = subprocess.Popen(
                [sys.executable, "-m", "papers.noncontrastive.smac_proposal"],
                env=env,
                cwd=settings.REPO_ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        cls.process.stdin.write(request + "\n")
        cls.process.stdin.flush()
        answer = cls.process.stdout.readline()
        if not answer:
            error = cls.process.stderr.read()[-2000:]
            cls.process = None
            raise SentembError(f"the SMAC proposal process stopped:\n{error}")
        return answer


@functools.lru_cache(maxsize=None)
def _propose_json(request: str) -> str:
    return _Worker.ask(request)


def propose(
    domain: dict[str, tuple[float, float]], history: list[tuple[dict, float]], n_trials: int, seed: int
) -> dict[str, float]:
    """:func:`propose_here` run in the fixed-hash-seed interpreter (see above); the same request is answered once."""
    request = json.dumps({"domain": domain, "history": history, "n_trials": n_trials, "seed": seed})
    answer = json.loads(_propose_json(request))
    if "error" in answer:
        raise SentembError(answer["error"])
    return answer["values"]


def main() -> None:
    """The worker's loop: a JSON request per line in, a JSON answer per line out."""
    for line in sys.stdin:
        request = json.loads(line)
        history = [(values, cost) for values, cost in request["history"]]
        try:
            answer = {"values": propose_here(request["domain"], history, request["n_trials"], request["seed"])}
        except SentembError as exc:
            answer = {"error": str(exc)}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
