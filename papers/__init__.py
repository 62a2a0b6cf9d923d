"""The archive's papers, listed once: the order they are shown in and run (the overview, which compares them, last).

Adding a paper: its folder (``papers/<name>/``, a :class:`sentemb.paper.Paper` subclass in ``paper.py``) and one line
here; ``docs/adding-a-paper.md`` has the checklist.
"""

from papers.declutr.paper import DeCLUTR
from papers.noncontrastive.paper import NonContrastive
from papers.overview.paper import Overview
from papers.simcse.paper import SimCSE
from papers.simcse_pp.paper import SimCSEpp
from papers.tncse.paper import TNCSE

PAPERS = (SimCSE(), SimCSEpp(), DeCLUTR(), TNCSE(), NonContrastive(), Overview())
