"""The SimCSE experiment grid, written with the paper's own settings; a profile scales it.

Sources: SimCSE §3 (unsupervised), §4 (supervised), §6.1 and Appendix A (Table A.1: BERT-base
unsupervised batch 64 / lr 3e-5, supervised batch 512 / lr 5e-5; one epoch of 10^6 Wikipedia
sentences unsupervised, 3 epochs of SNLI+MNLI supervised, max length 32, temperature 0.05) and the
official code (``run_unsup_example.sh``: evaluation every 125 steps on STS-B dev, ``--fp16``; Appendix A says
250 for the paper's runs; we follow the code). Figure 2 samples alignment/uniformity "every 10 training steps"
(§5): the runs it plots carry ``trajectory_every=10``.

Seeds: the rows the claims rest on (``HEADLINE``: Table 5's unsup. and sup., Table 3's p = 0, 0.1 and fixed 0.1)
run with several seeds (3 in the small profile, 5 in the full one); the others with seed 42, the official one.

Runs (the name is how tables and figures refer to them):

| name                    | what                                                    | used by             |
|-------------------------|---------------------------------------------------------|---------------------|
| backbone_avg            | the backbone as it is, mean pooling                     | Table 5, Fig. 3/F.1/G.1 |
| backbone_cls            | the backbone as it is, [CLS] through its pooler         | Table 5, Fig. 3/F.1 |
| unsup                   | unsupervised SimCSE, [CLS] + MLP in training only       | Table 5, 3 (p=0.1), Fig. 2/3/F.1/G.1 |
| sup                     | supervised SimCSE, [CLS] + MLP, contradiction negatives | Table 5, Fig. 3/F.1/G.1 |
| dropout_<p>             | unsupervised SimCSE with dropout p                      | Table 3 (p=0 also Fig. 2) |
| fixed_0.1               | dropout 0.1, the same mask for both views               | Table 3, Fig. 2     |
| delete_one_word         | second view = sentence with one word deleted            | Fig. 2              |

The objectives and their parameters: ``sentemb/objectives/simcse.py``.
"""

from __future__ import annotations

from sentemb.profiles import scale_grid
from sentemb.spec import RunSpec

PAPER_BACKBONE = "bert-base-uncased"
UNSUP_STEPS = 1_000_000 // 64  # one epoch of wiki1m at batch 64
SUP_STEPS = 3 * (275_601 // 512)  # three epochs of nli_for_simcse at batch 512
TABLE3_DROPOUTS = (0.0, 0.01, 0.05, 0.1, 0.15, 0.2, 0.5)

HEADLINE = ("unsup", "sup", "dropout_0", "fixed_0.1")

_UNSUP = dict(profile="full", backbone=PAPER_BACKBONE, pooler="cls_before_pooler", objective="simcse_unsup",
              train_data="wiki1m_for_simcse", steps=UNSUP_STEPS, batch_size=64, lr=3e-5, max_len=32,
              eval_every=125, trajectory_every=10, precision="fp16", seed=42)
_UNSUP_PARAMS = {"temperature": 0.05, "fixed_dropout_mask": False, "augmentation": "none"}
# Table 3 and Figure 2 runs are scored on STS-B dev only (as in the paper), and analysed on STS-B dev.
_DEV_ONLY = dict(_UNSUP, final_eval="stsb_dev", analysis_splits=("dev",))


def paper_grid() -> dict[str, RunSpec]:
    runs = {
        "backbone_avg": RunSpec(profile="full", backbone=PAPER_BACKBONE, pooler="avg"),
        "backbone_cls": RunSpec(profile="full", backbone=PAPER_BACKBONE, pooler="cls"),
        "unsup": RunSpec(**_UNSUP, objective_params=_UNSUP_PARAMS, notes="unsupervised SimCSE (Eq. 4), Table A.1 BERT-base"),
        "sup": RunSpec(profile="full", backbone=PAPER_BACKBONE, pooler="cls", objective="simcse_sup",
                       objective_params={"temperature": 0.05, "hard_negative_alpha": 1.0},
                       train_data="nli_for_simcse", steps=SUP_STEPS, batch_size=512, lr=5e-5, max_len=32,
                       eval_every=125, precision="fp16", seed=42,
                       notes="supervised SimCSE (Eq. 5 = Eq. 8 with alpha 1), Table A.1 BERT-base"),
    }
    for p in TABLE3_DROPOUTS:
        if p == 0.1:
            continue  # the default dropout is the unsup run itself
        runs[f"dropout_{p:g}"] = RunSpec(**_DEV_ONLY, objective_params=_UNSUP_PARAMS, dropout=p,
                                         notes=f"Table 3, p={p:g}")
    runs["fixed_0.1"] = RunSpec(**_DEV_ONLY, dropout=0.1, objective_params={**_UNSUP_PARAMS, "fixed_dropout_mask": True},
                                notes="Table 3, fixed 0.1: one dropout mask for both views")
    runs["delete_one_word"] = RunSpec(**_DEV_ONLY, objective_params={**_UNSUP_PARAMS, "augmentation": "delete_one_word"},
                                      notes="Figure 2: delete one word (with dropout)")
    return runs


def table3_run(p: float | str) -> str:
    """Which run gives Table 3's column ``p`` (0.1 is the main unsupervised run)."""
    if p == "fixed 0.1":
        return "fixed_0.1"
    return "unsup" if float(p) == 0.1 else f"dropout_{float(p):g}"


def grid(profile: str) -> dict[str, tuple[RunSpec, ...]]:
    """Each run name's specs on ``profile``, one per seed."""
    return scale_grid(paper_grid(), profile, HEADLINE)
