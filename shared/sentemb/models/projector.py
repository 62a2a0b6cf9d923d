"""The projector of the non-contrastive paper (Farina & Pappadopulo, 2024, §3), following VICReg:
Linear-BatchNorm-ReLU, Linear-BatchNorm-ReLU, Linear, all of width 8192 ("larger dimensions give similar
results and smaller ones progressively degrade performances"). The paper does not say whether the last linear
layer has a bias; VICReg's reference architecture has none, and that is the default here.
"""

from __future__ import annotations

from torch import nn


class ExpanderProjector(nn.Sequential):
    def __init__(self, in_dim: int, width: int = 8192, last_bias: bool = False) -> None:
        super().__init__(
            nn.Linear(in_dim, width),
            nn.BatchNorm1d(width),
            nn.ReLU(inplace=True),
            nn.Linear(width, width),
            nn.BatchNorm1d(width),
            nn.ReLU(inplace=True),
            nn.Linear(width, width, bias=last_bias),
        )
