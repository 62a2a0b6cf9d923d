"""Numeric precision of a phase (training, dev evaluation, final evaluation): fp32, bf16 or fp16 autocast.

| precision | CPU                                                       | CUDA                                   |
|-----------|-----------------------------------------------------------|----------------------------------------|
| fp32      | plain float32                                             | plain float32                          |
| bf16      | ``torch.autocast("cpu", bfloat16)``; native with the       | ``torch.autocast("cuda", bfloat16)``   |
|           | avx512_bf16 / amx_bf16 instructions, emulated (slow) else  |                                        |
| fp16      | not supported (error)                                     | autocast float16 + a gradient scaler   |

Autocast keeps the weights and the optimizer in float32 and runs matrix products in the low precision
(mixed precision, as the papers' ``--fp16`` runs did on GPUs). Embeddings leave an encoder as float32
whatever the precision. Measured here (2 AMD EPYC cores with avx512_bf16, all-MiniLM-L6-v2): see
``benchmarks/bench_precision.py``.
"""

from __future__ import annotations

import contextlib
import warnings

import torch

from sentemb.errors import ConfigError

PRECISIONS = ("fp32", "bf16", "fp16")
_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def cpu_has_native_bf16() -> bool:
    try:
        flags = open("/proc/cpuinfo", encoding="utf-8").read()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def check(precision: str, device: torch.device) -> None:
    """Raise for a precision the device cannot run; warn when it runs emulated (slowly, same numbers)."""
    if precision not in PRECISIONS:
        raise ConfigError(f"unknown precision {precision!r}; choose from {', '.join(PRECISIONS)}")
    if precision == "fp16" and device.type != "cuda":
        raise ConfigError(
            "precision fp16 needs a CUDA device (autocast float16 with a gradient scaler); on a CPU use bf16 or fp32"
        )
    if precision == "bf16" and device.type == "cpu" and not cpu_has_native_bf16():
        warnings.warn(
            "this CPU has no native bf16 instructions (avx512_bf16/amx_bf16): bf16 autocast runs emulated "
            "and slower than fp32; the numbers are the same bf16 numbers",
            stacklevel=2,
        )


def autocast(precision: str, device: torch.device):
    """The context a forward pass of this precision runs in (a no-op for fp32)."""
    if precision == "fp32":
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=_DTYPES[precision])


def grad_scaler(precision: str, device: torch.device) -> torch.amp.GradScaler | None:
    """fp16 gradients need loss scaling; bf16 has fp32's exponent range and does not."""
    return torch.amp.GradScaler(device.type) if precision == "fp16" else None
