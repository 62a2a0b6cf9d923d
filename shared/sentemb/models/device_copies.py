"""Copies from the host to a GPU that do not make the host wait for the GPU.

A copy from pageable host memory (``tensor.to("cuda")``) returns only once every kernel already queued on the stream
has run, so a training step that copies its batch cannot be prepared while the previous one runs. Through pinned
memory with ``non_blocking=True`` the copy is queued like a kernel, in stream order, and the host goes on; torch's
caching host allocator does not reuse the pinned block before the copy is done. Used under ``sync_free``
(:mod:`sentemb.train.speedups`) and by the MLM loss's selected positions.
"""

from __future__ import annotations

import torch


def to_device_without_waiting(tensor: torch.Tensor, device: torch.device) -> torch.Tensor:
    """A CPU tensor on ``device``: to a GPU through pinned memory without blocking the host; elsewhere ``.to``."""
    if device.type != "cuda":
        return tensor.to(device)
    return tensor.pin_memory().to(device, non_blocking=True)
