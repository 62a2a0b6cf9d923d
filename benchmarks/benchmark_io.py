"""What every benchmark script shares: it needs the mirror, and it prints its summary as JSON (and writes it with
``--output``). Imported by the scripts as a sibling module (``python benchmarks/bench_<x>.py`` puts this folder on
the path)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def require_mirror() -> None:
    if not os.environ.get("SENTEMB_DATA"):
        sys.exit("set SENTEMB_DATA to the offline mirror (e.g. ../shared/datasets)")


def emit(summary: dict, output: str | None) -> None:
    text = json.dumps(summary, indent=1)
    print(text)
    if output:
        Path(output).write_text(text + "\n", encoding="utf-8")


def machine(device: str = "cpu") -> dict:
    """The header of every benchmark's summary: the device, as run records name it, and torch's thread count."""
    import torch

    from sentemb.runs.provenance import collect

    return {"device": collect(torch.device(device))["device"], "threads": torch.get_num_threads()}
