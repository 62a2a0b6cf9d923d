"""SimCSE's poolers (``simcse/models.py`` ``Pooler`` and ``evaluation.py``).

| pooler              | training (SimCSE objectives)    | evaluation                                      |
|---------------------|---------------------------------|-------------------------------------------------|
| ``cls``             | MLP([CLS])                      | MLP([CLS]) (the model's pooler, i.e. pooler_output) |
| ``cls_before_pooler``| MLP([CLS]) (``mlp_only_train``) | [CLS] of the last layer, no MLP                 |
| ``avg``             | mean of last layer              | same                                            |
| ``avg_first_last``  | mean of (first + last layer) / 2 | same                                           |
| ``avg_top2``        | mean of (last two layers) / 2   | same                                            |

The training-time MLP is owned by the objective that trains it (``sentemb.objectives.simcse``); the encoder
itself applies an MLP only on the evaluation path of ``cls``, and that MLP is the checkpoint's ``pooler``
module (dense + tanh on [CLS], exactly BERT's pooler): a trained SimCSE checkpoint stores its MLP there and any
Hugging Face user gets it back as ``pooler_output`` (this is what SimCSE's ``simcse_to_huggingface.py`` does). Averages
are over non-padding tokens. ``avg_first_last`` uses
``hidden_states[1]`` (first Transformer layer) as SimCSE's code has since commit 206d7ae; the
paper's "first-last avg." numbers used ``hidden_states[0]`` (the embedding layer).
"""

from __future__ import annotations

import torch

POOLERS = ("cls", "cls_before_pooler", "avg", "avg_first_last", "avg_top2")
NEEDS_HIDDEN_STATES = {"avg_first_last", "avg_top2"}


def _masked_mean(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)


def uses_checkpoint_mlp(pooler: str, training: bool) -> bool:
    """Whether the encoder applies the checkpoint's pooler MLP: on the evaluation path of ``cls`` only."""
    return pooler == "cls" and not training


def pool(pooler: str, last_hidden: torch.Tensor, hidden_states, attention_mask: torch.Tensor) -> torch.Tensor:
    """The sentence representation before any MLP (see :func:`uses_checkpoint_mlp`)."""
    if pooler in ("cls", "cls_before_pooler"):
        return last_hidden[:, 0]
    if pooler == "avg":
        return _masked_mean(last_hidden, attention_mask)
    if pooler == "avg_first_last":
        return _masked_mean((hidden_states[1] + hidden_states[-1]) / 2.0, attention_mask)
    if pooler == "avg_top2":
        return _masked_mean((hidden_states[-1] + hidden_states[-2]) / 2.0, attention_mask)
    raise ValueError(f"unknown pooler {pooler!r}; choose from {', '.join(POOLERS)}")
