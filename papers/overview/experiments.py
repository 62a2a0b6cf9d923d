"""The cross-paper comparison's grid: each method's headline runs, taken from its paper's grid.

A method here is the row of its own paper that trains it in the paper's setting, so the overview adds no training
of its own where a paper's row already is the comparison's spec: a run id is a hash of the spec, and the same spec
in two papers' grids is one run, trained once and shared through the run store (e.g. unsupervised SimCSE is the
``unsup`` row of SimCSE, the ``simcse`` row of SimCSE++, TNCSE and the non-contrastive paper).

What "the same budget" means in the small profile (every row below; :func:`budget` reads it off the specs):
the all-MiniLM-L6-v2 backbone, 60 optimizer steps, batches of 64 inputs (DeCLUTR: 16 anchors, each with its
positive spans), inputs of at most 32 tokens (DeCLUTR: spans of up to 66), seeds 42, 43, 44, the best STS-B dev
checkpoint, and one evaluator (the archive's SentEval-equivalent STS suite, ``all`` aggregation = SimCSE's protocol;
DeCLUTR's ``mean`` as the second view). The data follows each method's paper where it needs a kind the others do
not: supervised SimCSE and Barlow Twins on NLI pairs train on SNLI, DeCLUTR on WikiText-2 articles (it samples spans
from documents); every other method on the same Wikipedia sentences. Learning rates are each paper's.
"""

from __future__ import annotations

from sentemb.paper import get_paper
from sentemb.spec import RunSpec

# method label -> (paper, the paper's grid row)
METHODS = {
    "backbone (mean pooling)": ("simcse", "backbone_avg"),
    "SimCSE unsup.": ("simcse", "unsup"),
    "SimCSE++": ("simcse_pp", "simcse_pp"),
    "TNCSE": ("tncse", "tncse_wiki"),
    "Barlow Twins (dropout)": ("noncontrastive", "bt_dropout"),
    "VICReg (dropout)": ("noncontrastive", "vicreg_dropout"),
    "DeCLUTR": ("declutr", "declutr"),
    "SimCSE sup. (NLI)": ("simcse", "sup"),
    "Barlow Twins (NLI pairs)": ("noncontrastive", "bt_nli"),
}
# The rows the raw-backbone experiment compares on both backbones (docs/raw-backbone.md, step 4: each paper's core
# rows, TNCSE's own on Wikipedia + SICK-R), beside the untrained backbone under both poolings
BACKBONE_ROWS = {
    "untrained, mean pooling": ("simcse", "backbone_avg"),
    "untrained, [CLS]": ("simcse", "backbone_cls"),
    "SimCSE unsup.": ("simcse", "unsup"),
    "SimCSE sup. (NLI)": ("simcse", "sup"),
    "SimCSE++ (off-dropout + DCL)": ("simcse_pp", "simcse_pp"),
    "TNCSE": ("tncse", "tncse"),
    "DeCLUTR": ("declutr", "declutr"),
    "Barlow Twins (dropout)": ("noncontrastive", "bt_dropout"),
    "VICReg (dropout)": ("noncontrastive", "vicreg_dropout"),
}
UNSUPERVISED_SENTENCES = ("SimCSE unsup.", "SimCSE++", "TNCSE", "Barlow Twins (dropout)", "VICReg (dropout)")


def grid(profile: str, extended: bool = True) -> dict[str, tuple[RunSpec, ...]]:
    """Each method's specs on ``profile`` (one per seed), as its paper's grid has them; a method whose row is not in
    its paper's grid on this profile (the smoke profile runs a few rows per paper) is left out (:func:`absent`).

    ``extended=False`` keeps only the methods whose rows are in their papers' grids without ``--extended``: TNCSE's
    row here is its paper's ``tncse_wiki`` (Table 6; trained on the same Wikipedia sentences as the other
    unsupervised methods, where TNCSE's core row adds SICK-R's test sentences), which TNCSE keeps outside its
    small-profile budget, so from scratch the overview does not train it either (about 20 min for 3 seeds); its
    committed records are read either way (:meth:`sentemb.paper.Paper.collect`)."""
    grids = {
        paper: get_paper(paper).grid(profile, extended=extended)
        for paper in dict.fromkeys(p for p, _ in METHODS.values())
    }
    return {method: tuple(grids[paper][row]) for method, (paper, row) in METHODS.items() if row in grids[paper]}


def absent(profile: str) -> list[str]:
    """The methods :func:`grid` leaves out on ``profile``."""
    return [method for method in METHODS if method not in grid(profile)]


def budget(specs: dict[str, tuple[RunSpec, ...]]) -> list[dict]:
    """Per method: the settings that make up its training budget, read off its first spec."""
    rows = []
    for method, group in specs.items():
        spec = group[0]
        paper, row = METHODS[method]
        rows.append(
            {
                "method": method,
                "paper": paper,
                "row": row,
                "objective": spec.objective,
                "train_data": spec.train_data or "",
                "steps": spec.steps if spec.trains else 0,
                "batch": spec.batch_size if spec.trains else 0,
                "lr": spec.lr if spec.trains else None,
                "max_len": spec.max_len,
                "pooler": spec.pooler,
                "seeds": ";".join(str(s.seed) for s in group),
            }
        )
    return rows
