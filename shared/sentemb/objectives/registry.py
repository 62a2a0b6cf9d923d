"""The training objectives a spec can name, and the validation of their parameters.

Adding an objective: write its class (a :class:`~sentemb.objectives.base.TrainingObjective`, one file) and add
it to :data:`TRAINING_OBJECTIVES`. Neither the spec nor the training loop changes.

| name           | class                                       | paper, equation             |
|----------------|---------------------------------------------|-----------------------------|
| ``none``       | (no training: the backbone is evaluated as it is) |                        |
| ``simcse_unsup`` | :class:`~sentemb.objectives.simcse.SimCSEUnsupervised` | SimCSE §3, Eq. 4 |
| ``simcse_sup``   | :class:`~sentemb.objectives.simcse.SimCSESupervised`   | SimCSE §4, Eq. 5/8 |
| ``simcse_next_sentence`` | :class:`~sentemb.objectives.next_sentence.SimCSENextSentence` | SimCSE Table 2 |
| ``simcse_pp``    | :class:`~sentemb.objectives.simcse_pp.SimCSEPlusPlus`  | SimCSE++ Eq. 2-3, 5-6; Tables 1-2 |
| ``barlow_twins`` | :class:`~sentemb.objectives.non_contrastive.BarlowTwinsSentences` | Non-contrastive Eq. 2, §3 |
| ``vicreg``       | :class:`~sentemb.objectives.non_contrastive.VICRegSentences`      | Non-contrastive Eq. 3, §3 |
| ``barlow_twins_pairs`` | :class:`~sentemb.objectives.non_contrastive.BarlowTwinsPairs` | Non-contrastive Table 6 |
| ``tncse``        | :class:`~sentemb.objectives.tncse.TNCSE` (two encoders)       | TNCSE Eq. 4-8, Table 4 |
| ``tncse_single`` | :class:`~sentemb.objectives.tncse.TNCSESingle`                | TNCSE Table 5 "TNCSE-Single" |
| ``declutr``      | :class:`~sentemb.objectives.declutr.DeCLUTR` (documents)      | DeCLUTR Eq. 2-3, Figures 2-3 |
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sentemb.errors import ConfigError
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives.base import TrainingObjective
from sentemb.objectives.declutr import DeCLUTR
from sentemb.objectives.next_sentence import SimCSENextSentence
from sentemb.objectives.non_contrastive import BarlowTwinsPairs, BarlowTwinsSentences, VICRegSentences
from sentemb.objectives.simcse import SimCSESupervised, SimCSEUnsupervised
from sentemb.objectives.simcse_pp import SimCSEPlusPlus
from sentemb.objectives.tncse import TNCSE, TNCSESingle

NO_TRAINING = "none"  # equal to sentemb.spec.NO_TRAINING (the spec imports this module, not the other way round)
TRAINING_OBJECTIVES: dict[str, type[TrainingObjective]] = {
    cls.name: cls
    for cls in (
        SimCSEUnsupervised,
        SimCSESupervised,
        SimCSENextSentence,
        SimCSEPlusPlus,
        BarlowTwinsSentences,
        VICRegSentences,
        BarlowTwinsPairs,
        TNCSE,
        TNCSESingle,
        DeCLUTR,
    )
}


def objective_class(name: str) -> type[TrainingObjective] | None:
    """The class of a training objective (None for ``none``); ConfigError listing the known names otherwise."""
    if name == NO_TRAINING:
        return None
    try:
        return TRAINING_OBJECTIVES[name]
    except KeyError:
        known = ", ".join([NO_TRAINING, *TRAINING_OBJECTIVES])
        raise ConfigError(f"unknown objective {name!r}; choose from {known}") from None


def resolve_params(name: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The objective's parameters, defaults filled in and validated (sorted by name, as stored in a spec)."""
    cls = objective_class(name)
    if cls is None:
        if given:
            raise ConfigError(f"objective {NO_TRAINING!r} (no training) takes no parameters, got {sorted(given)}")
        return {}
    return dict(sorted(cls.resolve(given).items()))


def build_objective(
    name: str, params: Mapping[str, Any], encoders: SentenceEncoder | Sequence[SentenceEncoder], max_len: int
) -> TrainingObjective:
    """The objective ``name`` around ``encoders`` (one SentenceEncoder, or as many as the objective trains)."""
    cls = objective_class(name)
    if cls is None:
        raise ConfigError(f"objective {NO_TRAINING!r} does not train")
    encoders = (encoders,) if isinstance(encoders, SentenceEncoder) else tuple(encoders)
    return cls.build(encoders, max_len, cls.with_added_defaults(resolve_params(name, params)))


def encoders_needed(name: str) -> int:
    """How many encoders the objective trains (0 for ``none``)."""
    cls = objective_class(name)
    return 0 if cls is None else cls.n_encoders
