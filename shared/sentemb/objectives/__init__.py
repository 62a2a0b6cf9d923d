"""Training objectives, one loss family per file; each docstring cites its equation.

``infonce``  SimCSE: unsupervised InfoNCE (Eq. 4), supervised with hard negatives (Eq. 5, Eq. 8)
"""

from sentemb.objectives.infonce import SupervisedInfoNCE, UnsupervisedInfoNCE

__all__ = ["SupervisedInfoNCE", "UnsupervisedInfoNCE"]
