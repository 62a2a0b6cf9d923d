"""Ways to make a training step and an evaluation faster without changing what they compute: each a switch.

Switches, and how each compares with the plain path:
- ``fused_adamw``: torch's fused AdamW, one kernel over all parameters (with fp16's gradient scaler it also skips an
  inf step without a host synchronisation). Equal to float rounding.
- ``sync_free``: no host-device synchronisation inside a step. The logged loss stays on the device and is read at the
  next evaluation; a NaN or inf loss stops the run there, naming its first bad step, before any evaluation, state or
  record is written. Training batches reach a GPU through pinned memory without blocking (a plain copy from pageable
  memory waits for the device's queued work), so the host prepares the next step while the device runs this one. An
  SDPA backbone gets its attention mask made from the CPU batch (``SentenceEncoder.to_device``) instead of
  transformers' check on the device whether anything is padded. (fp16's gradient scaler still synchronises unless
  ``fused_adamw`` is on too.) Bitwise equal (the same steps, the same weights kept); only the error comes up to
  ``eval_every`` steps later.
- ``pad_multiple=N``: each training batch padded to a multiple of N tokens, never past ``max_len`` unless a sequence
  already is: tensor-core aligned shapes, and fewer distinct shapes for the allocator and the kernel choice. Equal to
  float rounding with dropout off; with dropout on the masks are drawn over a longer tensor (the same law, other
  masks).
- ``compile``: ``torch.compile`` of each backbone's layer stack in place (state-dict names kept). Equal to float
  rounding on CPU; on CUDA inductor draws dropout masks with its own generator (the same law, other masks).
- ``eval_batch=N``: evaluation batches of N sentences instead of 64. Equal to float rounding.

Each is tested against the plain path on a fixed batch on CPU (``tests/test_speedups.py``), and timed on a GPU by
``benchmarks/bench_vs_sentence_transformers.py`` (one variant per switch); a switch becomes a device's default only
when that benchmark shows a gain on it (:data:`DEVICE_DEFAULTS`). The CPU default is none of them: the small
profile's committed records are computed exactly as before.

Which run: ``$SENTEMB_SPEEDUPS`` is ``default`` (the device's defaults; also when unset), ``none``, or a comma list
such as ``fused_adamw,sync_free,pad_multiple=8,compile,eval_batch=512``. They are not part of a run's identity (like
the device, they change a number at most by float rounding or by which dropout masks are drawn); a record lists the
ones that ran under ``provenance.speedups`` (absent when none ran).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

import torch

from sentemb.errors import ConfigError

ENVIRONMENT_VARIABLE = "SENTEMB_SPEEDUPS"
COMPILE_BACKEND_VARIABLE = "SENTEMB_COMPILE_BACKEND"  # torch.compile's backend (tests: aot_eager); default inductor
SWITCHES = ("fused_adamw", "sync_free", "compile")
VALUED = {"pad_multiple": 1, "eval_batch": 64}  # name -> its value when off


@dataclass(frozen=True)
class Speedups:
    """Which speed-ups a run uses (all off: the plain path)."""

    fused_adamw: bool = False
    sync_free: bool = False
    compile: bool = False
    pad_multiple: int = VALUED["pad_multiple"]
    eval_batch: int = VALUED["eval_batch"]

    @classmethod
    def parse(cls, text: str) -> Speedups:
        """``none``, or a comma list of switches and ``name=value`` settings (see the module docstring)."""
        text = text.strip()
        if text in ("", "none"):
            return cls()
        values: dict = {}
        for item in (part.strip() for part in text.split(",")):
            name, _, value = item.partition("=")
            if name in SWITCHES and not value:
                values[name] = True
            elif name in VALUED and value.isdigit() and int(value) >= 1:
                values[name] = int(value)
            else:
                raise ConfigError(
                    f"{ENVIRONMENT_VARIABLE}: cannot read {item!r}; give 'default', 'none', or a comma list of "
                    f"{', '.join(SWITCHES)}, {', '.join(f'{n}=N' for n in VALUED)} (N a positive integer)"
                )
        return cls(**values)

    def names(self) -> list[str]:
        """The speed-ups that are on, as :meth:`parse` reads them (a record's ``provenance.speedups``)."""
        on = [name for name in SWITCHES if getattr(self, name)]
        return on + [f"{name}={getattr(self, name)}" for name, off in VALUED.items() if getattr(self, name) != off]

    def with_(self, **changes) -> Speedups:
        return dataclasses.replace(self, **changes)


#: the speed-ups a device type runs by default: a switch is added here only when the GPU benchmark shows it gains
#: (``benchmarks/results/vs_sentence_transformers_*.json``); none is measured yet, so none is a default
DEVICE_DEFAULTS: dict[str, Speedups] = {"cpu": Speedups(), "cuda": Speedups()}


def for_device(device: torch.device) -> Speedups:
    """The speed-ups ``$SENTEMB_SPEEDUPS`` asks for on ``device`` (unset or ``default``: the device's defaults)."""
    text = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if text in ("", "default"):
        return DEVICE_DEFAULTS.get(device.type, Speedups())
    return Speedups.parse(text)


def compile_backend() -> str:
    return os.environ.get(COMPILE_BACKEND_VARIABLE, "").strip() or "inductor"


def apply_to_encoders(objective: torch.nn.Module, speedups: Speedups) -> None:
    """Set the padding multiple of every encoder the objective trains and compile their layer stacks in place
    (``nn.Module.compile``: parameters and state-dict names unchanged, so checkpoints load as before). Only the
    layers: the embeddings and the pooler stay eager, so a parameter the loss does not reach (the pooler under
    ``cls_before_pooler``) keeps no gradient, as in the plain step, instead of a zero one that AdamW would decay."""
    from sentemb.models.encoder import SentenceEncoder

    for module in objective.modules():
        if isinstance(module, SentenceEncoder):
            module.pad_multiple = speedups.pad_multiple
            module.copies_without_waiting = speedups.sync_free
            layers = getattr(module.backbone, "encoder", module.backbone)  # BERT's and RoBERTa's layer stack
            if speedups.compile and getattr(layers, "_compiled_call_impl", None) is None:
                layers.compile(backend=compile_backend())
