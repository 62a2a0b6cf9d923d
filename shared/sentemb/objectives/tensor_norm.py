"""Tensor norm constraints of TNCSE (Zong et al., AAAI 2025): l_TN, L_TN, ICNCE, ICTN and the total loss.

Equations (the paper's, Method):
    Eq. 1, 3  l_TN(h, h+) = ||h - h+|| / (||h|| + ||h+||) = sqrt((1 - k)^2 + 2 k (1 - t)) / (1 + k),
              k = ||h+|| / ||h||, t = cos(h, h+)                      (``tensor_norm_distance``, ``tn_surface``)
    Eq. 4, 5  L_NCE: InfoNCE (tau 0.05) over 2B rows; L_ICNCE = L_NCE(h_I, h_II)  (``interleaved_infonce``, ``icnce``)
    Eq. 6     L_TN(h_i, h_j+) = -log cos(h_i, h_j+) * l_TN(p_i, p_j+), mean over the B sentences  (``tensor_norm_loss``)
    Eq. 7, 8  L_ICTN = L_TN(I->II) + L_TN(II->I); L = NCE(I) + NCE(II) + ICNCE + ICTN, all weights 1  (``TNCSELoss``)
Inputs: (2B, d) tensors, the two dropout views of sentence m on rows 2m and 2m+1 (``interleave_views``): h1, h2 the
    [CLS] last hidden states of encoders I and II (angle terms), p1, p2 their BERT ``pooler_output`` (norm terms).
Official code (tianyuzong/TNCSE at 321d7a6) settles what the paper leaves open: row r's positive is row r XOR 1 (in
    ICNCE, of the other encoder), the diagonal is masked, every loss is a batch mean. Its two departures from Eq. 6
    are switches, off by default (the paper): ``halve_norm_term`` (l_TN / 2) and ``clamp_negative_cosine`` (a
    cosine < 0 becomes ``NEGATIVE_COSINE_FLOOR`` = 1e-4, without gradient); ``train_dual.py`` uses both. Without
    the clamp a negative cosine gives NaN (value and gradient); cos = 0 gives an infinite factor in both forms.
References: Zong et al., Method ("Norm Constraints on Representations", "Model Structure Design"), Figure 2.
Relations: Eq. 4 here is symmetric over 2B rows, unlike SimCSE's (B x B)
    :class:`~sentemb.objectives.infonce.UnsupervisedInfoNCE`; :mod:`sentemb.objectives.tncse` trains with these terms.
Derivation, view pairing and the official code: docs/derivations.md#sentembobjectivestensor_normpy
"""

from __future__ import annotations

from typing import Union

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from sentemb.objectives.full_precision import fp32_loss
from sentemb.objectives.infonce import cosine_matrix

#: The official code's stand-in for a negative [CLS] cosine in the -log(cos) factor of Eq. 6.
NEGATIVE_COSINE_FLOOR = 1e-4

SurfaceInput = Union[float, np.ndarray, torch.Tensor]


def tensor_norm_distance(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Eq. 1: l_TN(u, v) = ||u - v|| / (||u|| + ||v||) along the last dimension.

    The function is symmetric in u and v, does not change when both are scaled by the same c > 0,
    and lies in [0, 1]. It is 0 exactly when u = v, and 1 when v = -c u. Batched: (..., d) -> (...).
    Not defined when both vectors are zero (0/0). The paper assumes non-zero norms.
    """
    difference = torch.linalg.vector_norm(u - v, dim=-1)
    return difference / (torch.linalg.vector_norm(u, dim=-1) + torch.linalg.vector_norm(v, dim=-1))


def tn_surface(k: SurfaceInput, t: SurfaceInput) -> SurfaceInput:
    """Eq. 3 / Figure 2: l_TN(k, t) = sqrt(1 + k^2 - 2kt) / (1 + k), with k = ||h+||/||h||, t = cos.

    k and t broadcast against each other, so meshgrid outputs give the Figure 2 surface. A torch
    tensor in either argument gives a torch tensor back (dtype and device of that tensor).
    Otherwise the result is a float64 numpy array. Domain: k > 0, -1 <= t <= 1. No check is made:
    t > 1 can give NaN.
    """
    if isinstance(k, torch.Tensor) or isinstance(t, torch.Tensor):
        reference = k if isinstance(k, torch.Tensor) else t
        k_t = torch.as_tensor(k, dtype=reference.dtype, device=reference.device)
        t_t = torch.as_tensor(t, dtype=reference.dtype, device=reference.device)
        return torch.sqrt((1 - k_t) ** 2 + 2 * k_t * (1 - t_t)) / (1 + k_t)
    k_np = np.asarray(k, dtype=np.float64)
    t_np = np.asarray(t, dtype=np.float64)
    return np.sqrt((1 - k_np) ** 2 + 2 * k_np * (1 - t_np)) / (1 + k_np)


def interleave_views(view_a: torch.Tensor, view_b: torch.Tensor) -> torch.Tensor:
    """(B, d), (B, d) -> (2B, d) with row 2m = view_a[m] and row 2m+1 = view_b[m]."""
    if view_a.shape != view_b.shape or view_a.dim() != 2:
        raise ValueError(
            f"need two (B, d) views of the same shape, got {tuple(view_a.shape)} and {tuple(view_b.shape)}"
        )
    return torch.stack([view_a, view_b], dim=1).reshape(2 * view_a.shape[0], view_a.shape[1])


def partner_rows(n_rows: int, device: torch.device | None = None) -> torch.Tensor:
    """Index of each row's other dropout view in the interleaved layout: [1, 0, 3, 2, ...]."""
    return torch.arange(n_rows, device=device) ^ 1


def _check_interleaved(name: str, x: torch.Tensor) -> None:
    if x.dim() != 2 or x.shape[0] < 2 or x.shape[0] % 2:
        raise ValueError(f"{name} must be (2B, d) with the two dropout views on interleaved rows, got {tuple(x.shape)}")


def interleaved_infonce(anchors: torch.Tensor, candidates: torch.Tensor, temperature: float = 0.05) -> torch.Tensor:
    """Eq. 4 over interleaved rows. Row r of anchors is scored against every row of candidates
    except row r. The positive is row r XOR 1. The result is the mean over the 2B rows.
    With B = 1 each row has no negatives, so the loss is 0."""
    _check_interleaved("anchors", anchors)
    if candidates.shape != anchors.shape:
        raise ValueError(f"anchors {tuple(anchors.shape)} and candidates {tuple(candidates.shape)} differ")
    n_rows = anchors.shape[0]
    logits = cosine_matrix(anchors, candidates) / temperature
    own_row = torch.eye(n_rows, dtype=torch.bool, device=anchors.device)
    logits = logits.masked_fill(own_row, float("-inf"))
    return F.cross_entropy(logits, partner_rows(n_rows, anchors.device))


def icnce(h1: torch.Tensor, h2: torch.Tensor, temperature: float = 0.05) -> torch.Tensor:
    """Eq. 5: L_ICNCE = L_NCE(h_I^L, h_II^L), encoder I's [CLS] rows as anchors, encoder II's as candidates."""
    return interleaved_infonce(h1, h2, temperature)


def tensor_norm_loss(
    h_anchor: torch.Tensor,
    h_positive: torch.Tensor,
    p_anchor: torch.Tensor,
    p_positive: torch.Tensor,
    *,
    halve_norm_term: bool = False,
    clamp_negative_cosine: bool = False,
) -> torch.Tensor:
    """Eq. 6: L_TN(h_i, h_j+) = mean_m -log cos(h_i[2m], h_j[2m+1]) * l_TN(p_i[2m], p_j[2m+1]).

    h_* are the [CLS] rows of encoders i (anchor) and j (positive). p_* are the matching pooler
    outputs. The two flags switch on the official code's /2 and its negative-cosine clamp
    (see the module docstring). They are off by default, which follows the paper.
    """
    named = {"h_anchor": h_anchor, "h_positive": h_positive, "p_anchor": p_anchor, "p_positive": p_positive}
    for name, x in named.items():
        _check_interleaved(name, x)
    same_rows = h_anchor.shape[0] == p_anchor.shape[0]
    if h_anchor.shape != h_positive.shape or p_anchor.shape != p_positive.shape or not same_rows:
        raise ValueError(
            "h_anchor/h_positive and p_anchor/p_positive must pair up row for row, got "
            f"{tuple(h_anchor.shape)}, {tuple(h_positive.shape)}, {tuple(p_anchor.shape)}, {tuple(p_positive.shape)}"
        )
    cosine = F.cosine_similarity(h_anchor[0::2], h_positive[1::2], dim=-1)
    if clamp_negative_cosine:
        cosine = torch.where(cosine < 0, torch.full_like(cosine, NEGATIVE_COSINE_FLOOR), cosine)
    norm_term = tensor_norm_distance(p_anchor[0::2], p_positive[1::2])
    if halve_norm_term:
        norm_term = norm_term / 2
    return (-torch.log(cosine) * norm_term).mean()


def ictn(
    h1: torch.Tensor,
    h2: torch.Tensor,
    p1: torch.Tensor,
    p2: torch.Tensor,
    *,
    halve_norm_term: bool = False,
    clamp_negative_cosine: bool = False,
) -> torch.Tensor:
    """Eq. 7: L_ICTN = L_TN(h_I, h_II+) + L_TN(h_II, h_I+)."""
    flags = {"halve_norm_term": halve_norm_term, "clamp_negative_cosine": clamp_negative_cosine}
    return tensor_norm_loss(h1, h2, p1, p2, **flags) + tensor_norm_loss(h2, h1, p2, p1, **flags)


class TNCSELoss(nn.Module):
    """Eq. 8: L = L_NCE(h1) + L_NCE(h2) + L_ICNCE(h1, h2) + L_TN(1->2) + L_TN(2->1), all weights 1.

    forward(h1, h2, p1, p2) takes the interleaved (2B, d) [CLS] rows and pooler outputs of both
    encoders. `terms` returns the five parts by name, for logging. The official training's
    setting is TNCSELoss(halve_norm_term=True, clamp_negative_cosine=True).
    """

    def __init__(
        self,
        temperature: float = 0.05,
        halve_norm_term: bool = False,
        clamp_negative_cosine: bool = False,
    ) -> None:
        super().__init__()
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.temperature = temperature
        self.halve_norm_term = halve_norm_term
        self.clamp_negative_cosine = clamp_negative_cosine

    def terms(self, h1: torch.Tensor, h2: torch.Tensor, p1: torch.Tensor, p2: torch.Tensor) -> dict[str, torch.Tensor]:
        flags = {"halve_norm_term": self.halve_norm_term, "clamp_negative_cosine": self.clamp_negative_cosine}
        return {
            "nce_1": interleaved_infonce(h1, h1, self.temperature),
            "nce_2": interleaved_infonce(h2, h2, self.temperature),
            "icnce": icnce(h1, h2, self.temperature),
            "tn_1_to_2": tensor_norm_loss(h1, h2, p1, p2, **flags),
            "tn_2_to_1": tensor_norm_loss(h2, h1, p2, p1, **flags),
        }

    @fp32_loss
    def forward(self, h1: torch.Tensor, h2: torch.Tensor, p1: torch.Tensor, p2: torch.Tensor) -> torch.Tensor:
        return torch.stack(list(self.terms(h1, h2, p1, p2).values())).sum()
