"""Training objectives, one loss family per file; each docstring writes out its equations.

| file                       | paper, equation                                                         |
|----------------------------|-------------------------------------------------------------------------|
| ``infonce``                | SimCSE: unsupervised InfoNCE (Eq. 4), supervised with hard negatives (Eq. 5, 8) |
| ``off_dropout_infonce``    | SimCSE++: decoupled / off-dropout InfoNCE (Eq. 2-3), +/-Noise (Table 1)  |
| ``dimension_contrastive``  | SimCSE++: dimension-wise contrastive learning, DCL (Eq. 5-6)             |
| ``barlow_twins`` | Barlow Twins (non-contrastive Eq. 2, SimCSE++ Eq. 4), Gaussian padding, correlation rank |
| ``vicreg``                 | VICReg (non-contrastive Eq. 3)                                          |
| ``non_contrastive``        | BT / VICReg / BT on pairs as training objectives: views, projector (§3) |
| ``tensor_norm`` | TNCSE: l_TN (Eq. 1, 3), InfoNCE (Eq. 4), ICNCE (Eq. 5), L_TN (Eq. 6), ICTN (Eq. 7), total (Eq. 8) |
| ``declutr``                | DeCLUTR: NT-Xent with mean positives (Eq. 2), MLM on anchors, total (Eq. 3) |
| ``masked_lm``              | BERT masking, L_MLM and a fresh tied head (DeCLUTR Eq. 3; SimCSE Table D.2) |
"""

from sentemb.objectives.barlow_twins import BarlowTwins, correlation_rank, cross_correlation, gaussian_padding
from sentemb.objectives.declutr import DeclutrContrastiveLoss, declutr_loss, nt_xent
from sentemb.objectives.dimension_contrastive import DimensionWiseContrastive
from sentemb.objectives.infonce import SupervisedInfoNCE, UnsupervisedInfoNCE
from sentemb.objectives.masked_lm import mask_tokens_for_mlm, masked_lm_loss
from sentemb.objectives.off_dropout_infonce import (
    DecoupledInfoNCE,
    add_gaussian_noise,
    encode_without_dropout,
    mean_of_dropout_samples,
)
from sentemb.objectives.tensor_norm import (
    TNCSELoss,
    icnce,
    ictn,
    interleave_views,
    interleaved_infonce,
    tensor_norm_distance,
    tensor_norm_loss,
    tn_surface,
)
from sentemb.objectives.vicreg import VICReg

__all__ = [
    "BarlowTwins",
    "DecoupledInfoNCE",
    "DeclutrContrastiveLoss",
    "DimensionWiseContrastive",
    "SupervisedInfoNCE",
    "TNCSELoss",
    "UnsupervisedInfoNCE",
    "VICReg",
    "add_gaussian_noise",
    "correlation_rank",
    "cross_correlation",
    "declutr_loss",
    "encode_without_dropout",
    "gaussian_padding",
    "icnce",
    "ictn",
    "interleave_views",
    "interleaved_infonce",
    "mask_tokens_for_mlm",
    "masked_lm_loss",
    "mean_of_dropout_samples",
    "nt_xent",
    "tensor_norm_distance",
    "tensor_norm_loss",
    "tn_surface",
]
