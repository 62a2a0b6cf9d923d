"""Several processes, one global batch (``torchrun``; DDP): what each rank trains on and how its gradients scale.

Launch: ``torchrun --nproc-per-node N -m sentemb run --paper ... --profile full``. :func:`init_from_environment`
joins the process group that torchrun describes (NCCL on GPUs, gloo on CPUs); without torchrun nothing changes.
The objectives (their in-batch negatives) and the training loop both use it, so it sits below both.

- **Data.** ``batch_size`` is the global batch; every rank draws the same one and encodes its share (:func:`shard`).
- **In-batch negatives and batch statistics** come from the global batch: :func:`global_batch` all-gathers the local
  embeddings in rank order and keeps the local slot's gradient (the official SimCSE code's trick). Losses over a
  rank's own rows only (the MLM terms) stay local, and DDP averages them.
- **Gradient scale** (the spec's ``ddp_gradients``). With that trick the DDP-averaged gradient is 1/N of the
  single-process one (``official``: SimCSE's and DeCLUTR's released code). ``global`` (the default) multiplies the
  local slot's gradient by N in the gather's backward, so it equals one process's on the global batch (DeCLUTR's
  ``scale_fix``, on the gathered terms only). Under AdamW the two differ through eps and gradient clipping only;
  ``tests/test_distributed.py`` checks both against one process.
- **Randomness.** Rank 0 keeps the run's seed; rank r > 0 draws from streams seeded by (seed, r); ``state.pt``
  holds every rank's random states.
- **Who writes.** Rank 0 evaluates, keeps the best weights and writes ``state.pt``, ``best/`` and the record.

Two timeouts. Every collective of the process group (the training steps' gathers and DDP's all-reduces, the STS-B dev
evaluations' and the state writes' waits, :func:`barrier`) gives up after :func:`collective_timeout` (10 minutes;
``SENTEMB_DDP_TIMEOUT_MIN``), so that a rank that stopped or hangs stops the others within minutes. The one long
single-rank phase, rank 0's final evaluation and record (hours with MTEB at full scale; it was why this timeout used
to be a day), is waited for in :func:`wait_for_main` on a gloo group of its own with :func:`main_wait_timeout` (a day;
``SENTEMB_DDP_WAIT_MIN``); gloo notices a peer that exited at once, so only a live rank 0 is waited for that long.
Data preparation is no such phase: every rank loads, downloads or tokenises for itself, serialised by file locks
(:mod:`sentemb.data.download`, :mod:`sentemb.data.token_store`), outside any collective.

A rank that fails (:func:`failures_named`): its error goes to stderr as ``rank R of W failed: ...`` and into the
process group's store, and a rank whose collective then fails or times out raises :class:`PeerFailed`, naming that
rank and where its traceback is. Under torchrun, :func:`as_rank_entry` also writes the error to torchrun's error file
(torch's ``@record``), so that torchrun's closing summary names the first rank that failed, with its traceback.
"""

from __future__ import annotations

import datetime
import math
import os
import sys
from contextlib import contextmanager

import torch
import torch.distributed as dist

from sentemb.errors import ConfigError, SentembError

GRADIENT_SCALES = ("global", "official")
TIMEOUT_MIN, WAIT_MIN = 10.0, 1440.0  # the defaults of SENTEMB_DDP_TIMEOUT_MIN and SENTEMB_DDP_WAIT_MIN
_FAILURES = "sentemb/failures"  # store keys: <this>/<waits so far> counts the failed ranks' notes, each at .../<n>


def active() -> bool:
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def rank() -> int:
    return dist.get_rank() if active() else 0


def world_size() -> int:
    return dist.get_world_size() if active() else 1


def is_main() -> bool:
    return rank() == 0


def barrier() -> None:
    """Every rank waits here for the others, at most :func:`collective_timeout`."""
    if active():
        dist.barrier()


def _minutes(variable: str, default: float) -> datetime.timedelta:
    value = os.environ.get(variable, "").strip()
    try:
        minutes = float(value) if value else default
    except ValueError:
        minutes = math.nan
    if not (math.isfinite(minutes) and minutes > 0):
        raise ConfigError(
            f"{variable}={value!r} is not a positive number of minutes: set it to one, e.g. {variable}={default:g} "
            f"(the default), or 0.5 for 30 seconds"
        )
    return datetime.timedelta(minutes=minutes)


def collective_timeout() -> datetime.timedelta:
    """How long a rank waits in a collective of the process group before it fails (the training steps, the STS-B
    dev evaluations' and state writes' waits): ``SENTEMB_DDP_TIMEOUT_MIN``, default 10. A ConfigError when it is not
    a positive number."""
    return _minutes("SENTEMB_DDP_TIMEOUT_MIN", TIMEOUT_MIN)


def main_wait_timeout() -> datetime.timedelta:
    """How long the other ranks wait for rank 0's final evaluation and record (:func:`wait_for_main`):
    ``SENTEMB_DDP_WAIT_MIN``, default 1440 (a day: hours with MTEB at full scale)."""
    return _minutes("SENTEMB_DDP_WAIT_MIN", WAIT_MIN)


_waiting: dict = {}  # the long-timeout gloo group, for the default group it was made in


def _waiting_group():
    """The gloo group :func:`wait_for_main` waits in, made once per process group (every rank makes it: at
    :func:`init_from_environment`, else at its first wait)."""
    world = dist.group.WORLD
    if _waiting.get("world") is not world:
        _waiting.update(world=world, group=dist.new_group(backend="gloo", timeout=main_wait_timeout()), waits=0)
    return _waiting["group"]


def wait_for_main() -> None:
    """Every rank waits here while rank 0 runs a long phase alone (its final evaluation, the record), at most
    :func:`main_wait_timeout`. Each wait starts a new list of failures (:func:`failures_named`): every rank waits as
    often."""
    if active():
        dist.barrier(group=_waiting_group())
        _waiting["waits"] += 1


def local_device_index(local_rank: int, visible: int) -> int:
    """The GPU a rank uses among the ``visible`` ones: ``LOCAL_RANK`` when the node's GPUs are all visible (torchrun,
    or Slurm without binding), 0 when the scheduler shows each task its own GPU only (``--gpus-per-task``, or
    submitit's exports with ``CUDA_VISIBLE_DEVICES`` set per task), so that ranks above 0 do not ask for a GPU they
    cannot see."""
    if visible < 1:
        raise RuntimeError("no GPU is visible to this rank")
    if visible == 1:
        return 0
    if local_rank >= visible:
        raise RuntimeError(
            f"LOCAL_RANK {local_rank} but only {visible} GPUs are visible: start at most {visible} processes a node, "
            "or let the scheduler show each task one GPU"
        )
    return local_rank


def init_from_environment() -> bool:
    """Join the process group torchrun describes (WORLD_SIZE > 1 in the environment); True when distributed.
    Each rank uses the GPU :func:`local_device_index` names when there are GPUs. Its collectives time out after
    :func:`collective_timeout`; the gloo group of :func:`wait_for_main` is made here too."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1 or (dist.is_available() and dist.is_initialized()):
        return active()
    timeout, _ = collective_timeout(), main_wait_timeout()  # an invalid value stops every rank before it joins
    if torch.cuda.is_available():
        torch.cuda.set_device(local_device_index(int(os.environ.get("LOCAL_RANK", "0")), torch.cuda.device_count()))
        dist.init_process_group("nccl", timeout=timeout)
    else:
        dist.init_process_group("gloo", timeout=timeout)
    if active():
        _waiting_group()
    return active()


def shard(rows: list, world: int | None = None, index: int | None = None) -> list:
    """This rank's contiguous share of a global batch (the batch must divide evenly)."""
    world = world_size() if world is None else world
    index = rank() if index is None else index
    if len(rows) % world:
        raise ValueError(
            f"a global batch of {len(rows)} rows does not divide over {world} processes: choose a "
            f"batch_size that is a multiple of the number of processes"
        )
    size = len(rows) // world
    return list(rows[index * size : (index + 1) * size])


class _GatherKeepLocal(torch.autograd.Function):
    """All-gather along dim 0; the backward returns the local slot's gradient times ``scale``."""

    @staticmethod
    def forward(ctx, local: torch.Tensor, scale: float) -> torch.Tensor:
        parts = [torch.empty_like(local) for _ in range(dist.get_world_size())]
        dist.all_gather(parts, local.contiguous())
        ctx.rank, ctx.n, ctx.scale = dist.get_rank(), local.shape[0], scale
        return torch.cat(parts)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return grad[ctx.rank * ctx.n : (ctx.rank + 1) * ctx.n] * ctx.scale, None


def global_batch(*local: torch.Tensor, gradients: str = "global") -> tuple[torch.Tensor, ...] | torch.Tensor:
    """The global batch of each local tensor (rank order); unchanged in a single process. Every rank must gather
    tensors with the same number of rows. ``gradients``: ``global`` or ``official`` (see the module)."""
    if gradients not in GRADIENT_SCALES:
        raise ValueError(f"gradients is one of {GRADIENT_SCALES}, got {gradients!r}")
    if not active():
        out = local
    else:
        scale = float(world_size()) if gradients == "global" else 1.0
        out = tuple(_GatherKeepLocal.apply(t, scale) for t in local)
    return out[0] if len(out) == 1 else out


def mean_over_ranks(value: torch.Tensor) -> torch.Tensor:
    """The mean of a scalar over the ranks (the logged loss: local terms differ between ranks); itself in one
    process."""
    if not active():
        return value
    total = value.detach().to(torch.float64).clone()
    dist.all_reduce(total)
    return total / world_size()


def all_gather_objects(value) -> list:
    """Every rank's ``value`` (picklable), in rank order; [value] in a single process."""
    if not active():
        return [value]
    out = [None] * world_size()
    dist.all_gather_object(out, value)
    return out


def broadcast_object(value):
    """Rank 0's ``value`` on every rank."""
    if not active():
        return value
    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]


class PeerFailed(RuntimeError):
    """A collective of this rank failed or timed out because another rank stopped: fatal for the process (not a
    SentembError, which a grid survives), since its process group is out of step."""


def _store():
    """The process group's key-value store (torchrun's agent holds it, else rank 0), or None."""
    try:
        return dist.distributed_c10d._get_default_store()
    except Exception:  # noqa: BLE001 - naming a rank must not hide the error it is about
        return None


def _failures_key() -> str:
    """Where this stretch between two :func:`wait_for_main` keeps its notes in the store."""
    return f"{_FAILURES}/{_waiting.get('waits', 0)}"


def _first_failure(store) -> str | None:
    """The first rank's note since the last :func:`wait_for_main`, when the store still answers."""
    key = f"{_failures_key()}/1"
    try:
        return store.get(key).decode() if store is not None and store.check([key]) else None  # get waits for a key
    except Exception:  # noqa: BLE001 - the store may be gone with the rank that held it
        return None


def _note(store, note: str) -> None:
    print(note, file=sys.stderr, flush=True)
    try:
        if store is not None:
            store.set(f"{_failures_key()}/{store.add(_failures_key(), 1)}", note)
    except Exception:  # noqa: BLE001 - as above
        pass


def _collective_error(exc: BaseException) -> bool:
    text = str(exc)
    return isinstance(exc, getattr(dist, "DistError", ())) or any(
        word in text for word in ("gloo", "NCCL", "Timed out", "timed out", "Connection closed", "Connection reset")
    )


def _peer_failed(exc: Exception, peer: str | None) -> PeerFailed:
    """The error of a rank whose collective failed after ``peer`` (another rank's note; None: no rank left one)."""
    if peer:
        who = peer.split()[1]  # a note starts "rank R of W"
        cause = f"{peer}\n  Rank {who}'s error is in its own output (under torchrun: its lines, marked [rank{who}]"
    else:
        cause = (
            "another rank stopped or hangs without a note (killed? out of memory?)\n  See the other ranks' output "
            "(under torchrun: their lines"
        )
    first_line = (str(exc).splitlines() or [""])[0]
    return PeerFailed(
        f"rank {rank()} of {world_size()} stopped: {type(exc).__name__}: {first_line}\n  Cause: {cause}, and "
        "torchrun's closing summary of the failed ranks; a Slurm job: the task's log). Collectives wait "
        f"{collective_timeout().total_seconds() / 60:g} min for a rank (SENTEMB_DDP_TIMEOUT_MIN)."
    )


@contextmanager
def failures_named():
    """Name this rank in an error raised inside (several processes only): ``rank R of W failed: <error>`` to stderr
    and into the process group's store, once per error. A collective that fails or times out after another rank
    noted a failure (or, without notes, one that looks like a dead peer) raises :class:`PeerFailed` instead, naming
    that rank. Errors are re-raised; KeyboardInterrupt passes untouched."""
    try:
        yield
    except Exception as exc:
        if not active() or getattr(exc, "_sentemb_rank_noted", False):
            raise
        exc._sentemb_rank_noted = True
        store = _store()
        first = None if isinstance(exc, SentembError) else _first_failure(store)
        peer = first if first and not first.startswith(f"rank {rank()} of ") else None
        if peer is None and (first is not None or isinstance(exc, SentembError) or not _collective_error(exc)):
            _note(store, f"rank {rank()} of {world_size()} failed: {type(exc).__name__}: {exc}")
            raise
        failed = _peer_failed(exc, peer)
        failed._sentemb_rank_noted = True
        _note(store, str(failed))
        raise failed from exc


def as_rank_entry(function, *args, **kwargs):
    """``function(*args, **kwargs)`` as a rank's entry point: its errors named (:func:`failures_named`) and, under
    torchrun, written to the rank's error file (torch's ``@record``), from which torchrun's summary names the first
    rank that failed, with its traceback."""
    from torch.distributed.elastic.multiprocessing.errors import record

    @record
    def entry():
        with failures_named():
            return function(*args, **kwargs)

    return entry()
