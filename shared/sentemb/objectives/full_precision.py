"""Losses in float32 while the encoder runs under bf16/fp16 autocast.

Under ``torch.autocast`` a matrix product returns the low precision: bf16 keeps 8 bits of mantissa, so a cosine
divided by tau = 0.05 is off by up to ~0.06 and a softmax over it, its log-sum-exp and its gradient inherit the
error (on a real all-MiniLM-L6-v2 batch, SimCSE's loss came out -0.000000 against 1.8e-5 in fp32, with a 40 %
gradient error). Correlation and covariance statistics (Barlow Twins' C, VICReg's Cov) suffer the same way.

:func:`fp32_loss` wraps a loss module's ``forward``: autocast is switched off inside it and every tensor argument
in half precision is cast to float32 first (float32 and float64 stay as they are), so similarities, logits, statistics
and the loss are float32 whatever the encoder ran in.
The gradient flows back through the cast to the encoder's own precision. This is what mixed precision means in the
papers' code (the official SimCSE code runs fp16 autocast, whose mantissa is 8 times finer than bf16's, and
computes its loss on the autocast outputs; here the loss is exact at either precision).
"""

from __future__ import annotations

import functools
from typing import Callable

import torch


def fp32_loss(forward: Callable) -> Callable:
    """Decorate a loss module's ``forward(self, *tensors, **options)`` to run in float32 with autocast off."""

    @functools.wraps(forward)
    def in_fp32(self, *args, **kwargs):
        tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
        device_type = tensors[0].device.type if tensors else "cpu"
        low = (torch.float16, torch.bfloat16)  # float64 inputs (tests of the equations) stay float64
        cast = lambda a: a.float() if isinstance(a, torch.Tensor) and a.dtype in low else a  # noqa: E731
        with torch.autocast(device_type=device_type, enabled=False):
            return forward(self, *map(cast, args), **{k: cast(v) for k, v in kwargs.items()})

    return in_fp32
