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
- **Who writes.** Rank 0 evaluates, keeps the best weights and writes ``state.pt``, ``best/`` and the record; the
  other ranks wait for it (:func:`barrier`, with a day's timeout: :func:`collective_timeout`).
"""

from __future__ import annotations

import datetime
import os

import torch
import torch.distributed as dist

GRADIENT_SCALES = ("global", "official")


def active() -> bool:
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def rank() -> int:
    return dist.get_rank() if active() else 0


def world_size() -> int:
    return dist.get_world_size() if active() else 1


def is_main() -> bool:
    return rank() == 0


def barrier() -> None:
    if active():
        dist.barrier()


def collective_timeout() -> datetime.timedelta:
    """How long a rank waits in a collective: the other ranks wait at a barrier while rank 0 runs the final
    evaluation (hours with MTEB at full scale), longer than torch's default (10 min for NCCL) would let them.
    ``SENTEMB_DDP_TIMEOUT_MIN``, default 1440 (a day)."""
    return datetime.timedelta(minutes=float(os.environ.get("SENTEMB_DDP_TIMEOUT_MIN", "1440")))


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
    Each rank uses the GPU :func:`local_device_index` names when there are GPUs."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1 or (dist.is_available() and dist.is_initialized()):
        return active()
    if torch.cuda.is_available():
        torch.cuda.set_device(local_device_index(int(os.environ.get("LOCAL_RANK", "0")), torch.cuda.device_count()))
        dist.init_process_group("nccl", timeout=collective_timeout())
    else:
        dist.init_process_group("gloo", timeout=collective_timeout())
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
