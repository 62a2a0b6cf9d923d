"""A paper's experiment grid (``papers/<paper>/experiments.py``) on a profile, with or without ``--extended``.

A paper that keeps rows outside its small-profile budget takes ``extended``; the others run every row whatever it is.
The command line, the overview (its methods are the papers' rows, its compute table counts every row) and the tests of
a core grid alone all ask for a grid this one way.
"""

from __future__ import annotations

import importlib
import inspect


def paper_grid(paper: str, profile: str, extended: bool = True) -> dict:
    """Run name -> specs of ``paper``'s grid on ``profile``; ``extended=False`` leaves out the rows the paper keeps
    outside its small-profile budget (if it has any)."""
    grid = importlib.import_module(f"papers.{paper}.experiments").grid
    return grid(profile, extended=extended) if "extended" in inspect.signature(grid).parameters else grid(profile)
