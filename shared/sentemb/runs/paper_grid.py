"""A paper's experiment grid on a profile, with or without ``--extended``, by the paper's name (the registry's
:meth:`sentemb.paper.Paper.grid`).

A paper that keeps rows outside its small-profile budget leaves them out without ``extended``; the others run every
row whatever it is. The command line, the overview (its methods are the papers' rows, its compute table counts every
row) and the tests of a core grid alone all ask for a grid this one way.
"""

from __future__ import annotations

from sentemb.paper import get_paper
from sentemb.profiles import Profile


def paper_grid(paper: str, profile: str | Profile, extended: bool = True) -> dict:
    """Run name -> specs of ``paper``'s grid on ``profile``; ``extended=False`` leaves out the rows the paper keeps
    outside its small-profile budget (if it has any)."""
    return get_paper(paper).grid(profile, extended=extended)
