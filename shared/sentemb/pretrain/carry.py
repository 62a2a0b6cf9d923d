"""A pretraining run's state in the repository, so that a fresh machine (no cache, no ``.venv``) continues it.

A session's machine is replaced between sessions and ``$SENTEMB_CACHE`` with it (the first long run was lost so).
``--carry DIR`` writes the run's state into ``DIR`` (under ``pretraining/`` in the repository, committed) whenever
the run stops before its last step, and a run whose cache holds no ``state.pt`` continues from it. Two files:

``state.safetensors``
    the parameters (the tied decoder once), and by the mode the optimizer's moments, the weights kept so far when they
    are not the current ones, and the torch random state (dropout's; data order and masks are functions of seed and
    step and need none).
``state.json``
    the settings (checked against the run's), the mode, the step, the curves, the schedule's state, the optimizer's
    and scheduler's hyper-parameters, the processes that trained it.

Modes (git keeps every committed state, and researchers clone that history, so the smallest that resumes well):

``exact``
    fp32 parameters and moments: the next steps are bit for bit an uninterrupted run's (same machine kind and
    threads; ``tests/test_pretrain_carry.py``).
``bf16``
    parameters and moments rounded to bf16 (half the bytes): the run continues from a rounded point.
``weights``
    bf16 parameters only (a sixth of ``exact``): fresh moments, and the rate re-warmed linearly over
    :data:`REWARM_STEPS` steps from the resumed step.

What each lossy mode costs is measured against ``exact`` on the long run itself (``benchmarks/bench_pretrain_carry.py``,
the table in ``docs/raw-backbone.md``). When the run finishes, its carry folder is removed (the published backbone
holds the weights).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch

from sentemb.atomic import atomic_write, atomic_write_text
from sentemb.errors import SentembError

MODES = ("exact", "bf16", "weights")
REWARM_STEPS = 200  # the `weights` mode's re-warm-up after fresh moments
TENSORS, META = "state.safetensors", "state.json"
FORMAT = 1


def _dtype(mode: str) -> torch.dtype:
    return torch.float32 if mode == "exact" else torch.bfloat16


def exists(directory: Path | None) -> bool:
    return directory is not None and (directory / META).is_file()


def step_of(directory: Path) -> int:
    return json.loads((directory / META).read_text())["step"]


def mode_of(directory: Path) -> str:
    return json.loads((directory / META).read_text())["mode"]


def save(
    directory: Path,
    mode: str,
    config_dict: dict,
    model: torch.nn.Module,
    optimization,
    state,
    schedule,
    elapsed_s: float,
) -> int:
    """Write the run's state into ``directory`` (both files replaced atomically, tensors first); the bytes written."""
    from safetensors.torch import save_file

    if mode not in MODES:
        raise SentembError(f"--carry-mode {mode!r}: choose from {', '.join(MODES)}")
    dtype = _dtype(mode)
    tensors = {f"model.{n}": p.detach().to("cpu", dtype).contiguous() for n, p in model.named_parameters()}
    optimizer = optimization.optimizer.state_dict()
    if mode != "weights":
        for index, moments in optimizer["state"].items():
            for key, value in moments.items():
                value = value.detach().cpu().reshape(-1)
                tensors[f"optimizer.{index}.{key}"] = value if key == "step" else value.to(dtype).contiguous()
    names = dict(model.named_parameters())
    if state.best["step"] != state.step:
        for n, value in state.best["weights"].items():
            if n in names:
                tensors[f"best.{n}"] = value.to("cpu", dtype).contiguous()
    tensors["rng.cpu"] = torch.random.get_rng_state()
    meta = {
        "format": FORMAT,
        "mode": mode,
        "config": config_dict,
        "step": state.step,
        "curves": state.curves,
        "best": {"step": state.best["step"], "loss": state.best["loss"]},
        "window": [float(w) for w in state.window],
        "elapsed_s": elapsed_s,
        "processes": state.processes,
        "schedule": schedule.state(),
        "param_groups": optimizer["param_groups"],
        "scheduler": optimization.scheduler.state_dict(),
    }
    directory.mkdir(parents=True, exist_ok=True)
    atomic_write(directory / TENSORS, lambda tmp: save_file(tensors, str(tmp)))
    atomic_write_text(directory / META, json.dumps(meta, indent=1) + "\n")
    return sum(t.numel() * t.element_size() for t in tensors.values())


def load(directory: Path, config_dict: dict, model: torch.nn.Module, optimization, schedule) -> dict:
    """Restore the model, optimizer, scheduler, schedule and random state from ``directory``; the run's bookkeeping
    (``step``, ``curves``, ``best`` with its weights, ``window``, ``elapsed_s``, ``processes``, ``mode``)."""
    from safetensors.torch import load_file

    meta = json.loads((directory / META).read_text())
    if meta.get("format") != FORMAT:
        raise SentembError(f"{directory / META} has format {meta.get('format')}, this code reads {FORMAT}")
    if meta["config"] != config_dict:
        raise SentembError(
            f"{directory} carries another run's state ({meta['config']}).\n"
            "  Fix: give this run its own --carry folder, or run the settings that folder names."
        )
    try:
        tensors = load_file(str(directory / TENSORS))
    except (OSError, Exception) as exc:  # safetensors raises its own error type for a damaged file
        raise SentembError(f"{directory / TENSORS} cannot be read ({exc}); restore it with git") from exc
    params = dict(model.named_parameters())
    with torch.no_grad():
        for n, p in params.items():
            p.copy_(tensors[f"model.{n}"].to(p.dtype))
    optimizer = {"state": {}, "param_groups": meta["param_groups"]}
    if meta["mode"] != "weights":
        for key, value in tensors.items():
            if key.startswith("optimizer."):
                _, index, name = key.split(".")
                moment = value.reshape(()) if name == "step" else value.float().reshape(_shape(optimization, index))
                optimizer["state"].setdefault(int(index), {})[name] = moment
    optimization.optimizer.load_state_dict(optimizer)
    optimization.scheduler.load_state_dict(meta["scheduler"])
    for group, lr in zip(optimization.optimizer.param_groups, meta["scheduler"]["_last_lr"]):
        group["lr"] = lr
    schedule.load(meta["schedule"])
    if meta["mode"] == "weights":
        schedule.rewarm(meta["step"], REWARM_STEPS)
        for group in optimization.optimizer.param_groups:
            group["lr"] = group["initial_lr"] * schedule(meta["step"])
    torch.random.set_rng_state(tensors["rng.cpu"])
    if any(k.startswith("best.") for k in tensors):
        best_weights = _full_state(model, {n: tensors[f"best.{n}"] for n in params})
    else:
        best_weights = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    return {**meta, "best": {**meta["best"], "weights": best_weights}}


def _shape(optimization, index: str) -> torch.Size:
    flat = [p for group in optimization.optimizer.param_groups for p in group["params"]]
    return flat[int(index)].shape


def _full_state(model: torch.nn.Module, parameters: dict) -> dict:
    """A full state dict (buffers and tied copies included) with ``parameters`` in place of the model's."""
    full = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    tied = {"cls.predictions.decoder.weight": "bert.embeddings.word_embeddings.weight"}
    for key in full:
        source = tied.get(key, key)
        if source in parameters:
            full[key] = parameters[source].detach().cpu().float().clone()
    return full


def remove(directory: Path | None) -> None:
    """The finished run's carry folder goes (its weights are published)."""
    if directory is not None and exists(directory):
        shutil.rmtree(directory)
