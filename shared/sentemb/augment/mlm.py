"""'MLM k%' (SimCSE, Gao et al. 2021, Table 1, §3): "use BERT-base to replace k% of words" (k = 15,
STS-B dev 62.2).

The paper gives no more detail and the SimCSE repository has no code for this ablation (its
``do_mlm`` flag is the auxiliary MLM loss of §6, a different thing). Our reading, on the word
pieces of the tokenised sentence, special tokens ([CLS], [SEP], ...) excluded, n of them:

    m = min(n, max(1, round_half_up(k * n)))        (rounding.py)
    M = m piece positions drawn uniformly without replacement
    x~ = x with x_i <- [MASK] for i in M              (all m masked at once, one forward pass)
    x'_i = argmax_{v not special} p_model(v | x~, i)  for i in M;  x'_i = x_i otherwise

We take the top prediction (greedy, so the view is a deterministic function of the drawn
positions) and never predict a special token, so the decoded view is never empty. A prediction
may equal the original piece, so at most m pieces change. The paper masks "words"; we mask word
pieces, as BERT's own MLM does. The model is run in eval mode (no dropout) and put back in the
mode it was in. Any Hugging Face masked LM works (BERT-base in the paper, a tiny random
BertForMaskedLM in the tests); nothing is downloaded here.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import torch
from torch import nn

from sentemb.augment.rounding import check_fraction, round_half_up


def mlm_mask_count(n_pieces: int, fraction: float) -> int:
    """How many of ``n_pieces`` word pieces an MLM replacement of ``fraction`` masks (at least one)."""
    return min(n_pieces, max(1, round_half_up(fraction * n_pieces)))


def mlm_replace_ids(
    input_ids: Sequence[int],
    rng: random.Random,
    model: nn.Module,
    mask_token_id: int,
    special_ids: Sequence[int],
    fraction: float = 0.15,
) -> list[int]:
    """Mask ``fraction`` of the non-special pieces of one sequence and fill each with the top prediction."""
    check_fraction("fraction", fraction)
    ids = list(input_ids)
    specials = set(special_ids)
    replaceable = [i for i, piece in enumerate(ids) if piece not in specials]
    if not replaceable:
        return ids
    positions = sorted(rng.sample(replaceable, mlm_mask_count(len(replaceable), fraction)))
    masked = list(ids)
    for position in positions:
        masked[position] = mask_token_id
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([masked], device=device)).logits[0]
    finally:
        model.train(was_training)
    logits = logits.float()
    logits[:, sorted(specials)] = float("-inf")
    for position in positions:
        ids[position] = int(logits[position].argmax())
    return ids


def mlm_replace(sentence: str, rng: random.Random, model: nn.Module, tokenizer, fraction: float = 0.15) -> str:
    """SimCSE's "MLM k%" view of one sentence (decoded without special tokens)."""
    ids = tokenizer(sentence)["input_ids"]
    replaced = mlm_replace_ids(ids, rng, model, tokenizer.mask_token_id, tokenizer.all_special_ids, fraction)
    view = tokenizer.decode(replaced, skip_special_tokens=True)
    return view if view.strip() else sentence
