"""torchrun semantics on CPUs: 2 gloo processes train on one global batch exactly as one process does.

The objectives gather their embeddings across the ranks (sentemb.distributed.global_batch). With dropout off
(a rank cannot draw a single process's masks), the loss of 2 processes equals one process's on the same global batch,
and the DDP-averaged gradients equal its gradients (``ddp_gradients="global"``) or half of them (``"official"``: the
released SimCSE/DeCLUTR code's 1/N). With dropout on, the training loop resumes every rank's random streams exactly.
A rank that fails stops the others within the collectives' timeout, with an error naming it, while rank 0's long
final evaluation is waited for.
"""

import json
import os
import pickle
import socket
import time
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from sentemb import distributed
from sentemb.data.sts import load_task
from sentemb.errors import ConfigError, SentembError
from sentemb.runs import execute
from sentemb.spec import RunSpec
from sentemb.train.loop import prepare_objective, step_rng, train

pytestmark = pytest.mark.slow

BASE = dict(
    profile="smoke",
    backbone="tiny-random-bert",
    pooler="cls_before_pooler",
    steps=6,
    batch_size=8,
    eval_every=3,
    lr=1e-3,
    max_len=16,
    final_eval="stsb_dev",
    synthetic_data=True,
    dropout=0.0,
)
SPECS = {
    "simcse_unsup": dict(objective="simcse_unsup", train_data="wiki_sentences_combined"),
    "simcse_sup": dict(objective="simcse_sup", train_data="snli_devtest_for_simcse", pooler="cls"),
    "barlow_twins": dict(
        objective="barlow_twins", train_data="wiki_sentences_combined", objective_params={"projector_width": 32}
    ),
    "vicreg": dict(objective="vicreg", train_data="wiki_sentences_combined", objective_params={"projector_width": 32}),
    "tncse": dict(objective="tncse", train_data="wiki_sentences_combined"),
    "simcse_pp": dict(
        objective="simcse_pp",
        train_data="wiki_sentences_combined",
        objective_params={"negatives": "off_dropout", "dcl_weight": 0.1},
    ),
}


def _spec(name: str, **change) -> RunSpec:
    return RunSpec(**{**BASE, **SPECS[name], **change})


def _loss_and_gradients(spec: RunSpec) -> tuple[float, dict]:
    """One step on the first global batch of the spec's data: the logged loss and every parameter's gradient after
    DDP's averaging (one process: plain backward). In float64, so that a shard's own padding (its longest row, not
    the global batch's) moves nothing beyond rounding and the comparison can be tight."""
    objective = prepare_objective(spec, *execute.initial_encoders(spec, torch.device("cpu"))).double().train()
    model = objective
    if distributed.active():
        model = torch.nn.parallel.DistributedDataParallel(objective, static_graph=True)
    rows = execute._training_rows(spec)[: spec.batch_size]
    loss = model(distributed.shard(rows), step_rng(spec.seed, 0))
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in objective.named_parameters() if p.grad is not None}
    return float(distributed.mean_over_ranks(loss.detach())), grads


def _join(rank: int, world: int, folder: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{folder}/rendezvous", rank=rank, world_size=world)


def _gradient_worker(rank: int, world: int, folder: str, cases: list) -> None:
    _join(rank, world, folder)
    out = {}
    for name, mode in cases:
        out[(name, mode)] = _loss_and_gradients(_spec(name, ddp_gradients=mode))
    if rank == 0:
        with open(os.path.join(folder, "gradients.pkl"), "wb") as handle:
            pickle.dump(out, handle)
    dist.destroy_process_group()


def _spawn(worker, folder, *args, world: int = 2) -> None:
    mp.spawn(worker, args=(world, str(folder), *args), nprocs=world, join=True)


def test_two_processes_give_one_process_loss_and_gradients(tmp_path):
    cases = [(name, mode) for name in SPECS for mode in ("global", "official")]
    _spawn(_gradient_worker, tmp_path, cases)
    with open(tmp_path / "gradients.pkl", "rb") as handle:
        two = pickle.load(handle)
    torch.set_num_threads(1)
    for name in SPECS:
        loss, grads = _loss_and_gradients(_spec(name))
        assert len(grads) > 10
        for mode, factor in (("global", 1.0), ("official", 0.5)):
            loss_2, grads_2 = two[(name, mode)]
            assert loss_2 == pytest.approx(loss, rel=1e-12), (name, mode)
            assert grads_2.keys() == grads.keys(), (name, mode)
            floor = 1e-12 * max(float(g.norm()) for g in grads.values())  # e.g. key biases: zero up to rounding
            for key, g in grads.items():
                # BT's and VICReg's projector runs on the gathered global batch on every rank: downstream of the gather
                # its gradient is whole in either mode
                f = 1.0 if key.startswith("projector.") else factor
                difference = float((grads_2[key] - f * g).norm())
                assert difference <= 1e-9 * float(f * g.norm()) + floor, (name, mode, key, difference)
    # the check can fail: the official form is not the global one
    g = next(iter(grads.values()))
    assert not torch.allclose(two[(name, "official")][1][next(iter(grads))], g)


def _training_worker(rank: int, world: int, folder: str, interrupt_at: int | None) -> None:
    """6 steps of unsupervised SimCSE with dropout on; optionally interrupted (every rank, in its forward) at step
    ``interrupt_at`` + 1 and resumed from the state written at step ``interrupt_at``."""
    _join(rank, world, folder)
    spec = _spec("simcse_unsup", dropout=0.1)
    stsb = load_task("STSBenchmark", synthetic=True)
    rows = execute._training_rows(spec)

    def run(stop_at):
        objective = prepare_objective(spec, *execute.initial_encoders(spec, torch.device("cpu")))
        if stop_at is not None:
            forward, calls = objective.forward, []

            def interrupted(*args, **kwargs):
                calls.append(1)
                if len(calls) > stop_at:
                    raise KeyboardInterrupt
                return forward(*args, **kwargs)

            objective.forward = interrupted
        return train(
            objective,
            spec,
            rows,
            execute._dev_evaluator(spec, stsb, progress=False),
            Path(folder) / "checkpoint",
            progress=False,
            save_state_every_s=0.0,
        )

    if interrupt_at is not None:
        try:
            run(interrupt_at)
        except KeyboardInterrupt:
            pass
    outcome = run(None)
    if rank == 0:
        with open(os.path.join(folder, "outcome.pkl"), "wb") as handle:
            pickle.dump(
                {
                    "losses": outcome.losses,
                    "resumed": outcome.resumed_from_step,
                    "dev": [p["stsb_dev_spearman"] for p in outcome.dev_curve],
                },
                handle,
            )
    dist.destroy_process_group()


def test_every_rank_resumes_its_random_streams_exactly(tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    _spawn(_training_worker, tmp_path / "a", None)
    _spawn(_training_worker, tmp_path / "b", 3)
    reference = pickle.load(open(tmp_path / "a" / "outcome.pkl", "rb"))
    resumed = pickle.load(open(tmp_path / "b" / "outcome.pkl", "rb"))
    assert reference["resumed"] is None and resumed["resumed"] == 3
    assert resumed["losses"] == reference["losses"]  # bit for bit, both ranks' dropout masks included
    assert resumed["dev"] == reference["dev"]
    # the comparison can fail: with dropout on, rank 1 draws its own masks, so 2 processes do not give 1's losses
    spec = _spec("simcse_unsup", dropout=0.1)
    one = train(
        prepare_objective(spec, *execute.initial_encoders(spec, torch.device("cpu"))),
        spec,
        execute._training_rows(spec),
        lambda encoder, step: {"stsb_dev_spearman": 0.0},
        tmp_path / "one",
        progress=False,
    )
    assert one.losses[0] != reference["losses"][0]


def test_a_rank_uses_its_local_gpu_or_the_one_the_scheduler_shows_it():
    from sentemb.distributed import local_device_index

    assert [local_device_index(r, 4) for r in range(4)] == [0, 1, 2, 3]  # torchrun: the node's GPUs all visible
    assert [local_device_index(r, 1) for r in range(4)] == [0, 0, 0, 0]  # one GPU shown to each task
    with pytest.raises(RuntimeError, match="only 2 GPUs are visible"):
        local_device_index(3, 2)
    with pytest.raises(RuntimeError, match="no GPU"):
        local_device_index(0, 0)


TIMEOUT_S = 3.0  # SENTEMB_DDP_TIMEOUT_MIN in the failure test


def _phases(spec: RunSpec, case: str):
    """(rank 0's phase, rank 1's phase) of ``execute._run`` in ``case``, in place of evaluating and training."""

    def slow_record():  # rank 0 alone, longer than a collective may wait
        time.sleep(1.5 * TIMEOUT_S)
        return execute.store.save({"profile": spec.profile, "run_id": spec.run_id, "spec": spec.as_dict()}) and {}

    def diverged():
        raise SentembError("training diverged")

    def step():  # a training step's collective
        distributed.mean_over_ranks(torch.ones(()))

    def boom():
        raise SentembError("boom on rank 1")

    cases = {"slow rank 0": (slow_record, lambda: None), "both fail": (diverged,) * 2, "rank 1 fails": (step, boom)}
    return cases[case]


def _failing_worker(rank: int, world: int, folder: str, port: int) -> None:
    """``execute._run`` on two ranks joined as torchrun joins them, in three cases (:func:`_phases`); each rank writes
    what each case raised and how long it took."""
    os.environ.update(
        WORLD_SIZE=str(world),
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        SENTEMB_DDP_TIMEOUT_MIN=str(TIMEOUT_S / 60),
        SENTEMB_DDP_WAIT_MIN="0.5",
    )
    torch.set_num_threads(1)
    assert distributed.init_from_environment()
    spec = _spec("simcse_unsup")
    execute._training_rows = execute._stsb = lambda spec: None
    outcomes = {}
    for case in ("slow rank 0", "both fail", "rank 1 fails"):
        main, other = _phases(spec, case)
        execute._run_main, execute._train = (lambda *a: main()), (lambda *a, **k: other())
        started = time.perf_counter()
        try:
            execute._run(spec, False, torch.device("cpu"))
            outcomes[case] = ["ok", time.perf_counter() - started]
        except Exception as exc:  # noqa: BLE001 - the test reads what each rank raised
            outcomes[case] = [f"{type(exc).__name__}: {exc}", time.perf_counter() - started]
    Path(folder, f"rank{rank}.json").write_text(json.dumps(outcomes))


def test_a_failed_rank_stops_the_others_within_the_timeout_and_is_named(tmp_path, capfd):
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    started = time.perf_counter()
    _spawn(_failing_worker, tmp_path, port)
    assert time.perf_counter() - started < 60
    zero, one = (json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1))
    # rank 0's final evaluation outlasts the collectives' timeout: rank 1 waits for it on the long-timeout group
    assert zero["slow rank 0"][0] == one["slow rank 0"][0] == "ok"
    assert one["slow rank 0"][1] >= 1.5 * TIMEOUT_S
    # a failure on every rank: each raises it, and the grid could go on with its next run
    assert zero["both fail"][0] == one["both fail"][0] == "SentembError: training diverged"
    # rank 1 fails while rank 0 waits in a training step's collective: rank 0 stops within the timeout, naming rank 1
    error, seconds = zero["rank 1 fails"]
    assert error.startswith("PeerFailed: rank 0 of 2 stopped: ") and seconds < TIMEOUT_S + 10
    assert "Cause: rank 1 of 2 failed: SentembError: boom on rank 1" in error
    assert one["rank 1 fails"][0] != "ok"
    assert "rank 1 of 2 failed: SentembError: boom on rank 1" in capfd.readouterr().err


@pytest.mark.parametrize("value", ["ten", "0", "-5", "nan", "inf"])
def test_the_ddp_timeouts_must_be_positive_numbers_of_minutes(monkeypatch, value):
    monkeypatch.setenv("SENTEMB_DDP_TIMEOUT_MIN", value)
    with pytest.raises(ConfigError, match=r"SENTEMB_DDP_TIMEOUT_MIN=.* is not a positive number of minutes.*e\.g\."):
        distributed.collective_timeout()
    monkeypatch.setenv("SENTEMB_DDP_WAIT_MIN", value)
    with pytest.raises(ConfigError, match="SENTEMB_DDP_WAIT_MIN"):
        distributed.main_wait_timeout()


def test_the_ddp_timeouts_are_minutes_by_default_and_overridable(monkeypatch):
    monkeypatch.delenv("SENTEMB_DDP_TIMEOUT_MIN", raising=False)
    monkeypatch.delenv("SENTEMB_DDP_WAIT_MIN", raising=False)
    assert distributed.collective_timeout().total_seconds() == 600
    assert distributed.main_wait_timeout().total_seconds() == 86400
    monkeypatch.setenv("SENTEMB_DDP_TIMEOUT_MIN", " 0.5 ")
    assert distributed.collective_timeout().total_seconds() == 30
