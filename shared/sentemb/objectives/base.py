"""What a training objective is: the loss of a batch of rows, the parameters it declares, the modules it owns,
and the embedding that is evaluated.

Modelled on sentence-transformers' ``losses/``: an objective is an ``nn.Module`` built around the encoder it trains.
Everything it adds (SimCSE's MLP, a projector, an MLM head, a second encoder) is a submodule, so the training loop
optimises, checkpoints and resumes ``objective.parameters()`` / ``objective.state_dict()`` without knowing what is
inside. It declares its hyperparameters once, as :class:`Param` entries next to its loss; a spec names the objective
and gives values for them, and :meth:`TrainingObjective.resolve` validates them (a ConfigError naming the objective
and listing its parameters).

A subclass sets ``name`` (in specs and records), ``params``, ``rows`` (the kind of training rows it reads:
``"sentences"``, ``"nli_triples"``; :data:`sentemb.data.corpora.ROW_LOADERS`) and ``sequences_per_row`` (for
throughput figures); it implements ``forward(rows, rng) -> loss`` (``rng``: a ``random.Random`` seeded by run seed
and step, for text augmentations, so that a resumed run draws the same ones) and, when the evaluated embedding is
not the encoder's own, :meth:`evaluation_encoder` (e.g. a :class:`~sentemb.models.summed_encoders.SummedEncoders`).

An objective that trains several encoders jointly (TNCSE) sets ``n_encoders`` and overrides :meth:`build`; the run
executor hands it that many encoders (from the backbone, or from the spec's ``init_runs``). ``self.encoder`` is
always the first; the others are submodules like any module the objective owns.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
from torch import nn

from sentemb import distributed
from sentemb.errors import ConfigError
from sentemb.models.encoder import SentenceEncoder


@dataclass(frozen=True)
class Param:
    """One hyperparameter of an objective: its type, default, allowed values and what it is in the paper."""

    name: str
    type: type
    default: Any
    doc: str
    low: float | None = None  # inclusive bound unless low_open
    high: float | None = None  # inclusive bound unless high_open
    low_open: bool = False
    high_open: bool = False
    choices: tuple | None = None
    # Added after records existed: while it holds its default it is left out of a spec's resolved parameters, so
    # adding it changed no run id (as spec.ADDED_FIELDS does for spec fields); the objective is built with it.
    added: bool = False

    def allowed(self) -> str:
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.low is None and self.high is None:
            return self.type.__name__
        left = "(" if self.low_open else "["
        right = ")" if self.high_open else "]"
        low = "-inf" if self.low is None else f"{self.low:g}"
        high = "inf" if self.high is None else f"{self.high:g}"
        return f"{self.type.__name__} in {left}{low}, {high}{right}"

    def check(self, value: Any) -> Any:
        """The value coerced to the parameter's type; ValueError saying what is allowed otherwise."""
        if self.type is bool:
            if not isinstance(value, bool):
                raise ValueError(f"expected true or false, got {value!r}")
        elif self.type is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"expected a number, got {value!r}")
            value = float(value)
        elif self.type is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"expected an integer, got {value!r}")
        elif not isinstance(value, self.type):
            raise ValueError(f"expected {self.type.__name__}, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"{value!r} is not {self.allowed()}")
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            raise ValueError(f"{value!r} is not {self.allowed()}")
        if self.high is not None and (value > self.high or (self.high_open and value == self.high)):
            raise ValueError(f"{value!r} is not {self.allowed()}")
        return value


class TrainingObjective(nn.Module):
    name: ClassVar[str]
    reference: ClassVar[str] = ""  # the paper (and part) it comes from, as a model card names it
    params: ClassVar[tuple[Param, ...]] = ()
    rows: ClassVar[str] = "sentences"
    sequences_per_row: ClassVar[int] = 2
    n_encoders: ClassVar[int] = 1
    #: how gradients through the gathered global batch scale under torchrun (the spec's ``ddp_gradients``, set by
    #: :func:`sentemb.train.loop.prepare_objective`; see :mod:`sentemb.distributed`)
    ddp_gradients: str = "global"

    def __init__(self, encoder: SentenceEncoder, max_len: int) -> None:
        super().__init__()
        self.encoder = encoder
        self.max_len = max_len

    @classmethod
    def build(cls, encoders: Sequence[SentenceEncoder], max_len: int, params: Mapping[str, Any]) -> TrainingObjective:
        """The objective around ``encoders`` (``n_encoders`` of them) with resolved ``params``."""
        cls.check_encoders(encoders)
        return cls(encoders[0], max_len, **params)

    @classmethod
    def check_encoders(cls, encoders: Sequence[SentenceEncoder]) -> None:
        if len(encoders) != cls.n_encoders:
            raise ConfigError(f"objective {cls.name!r} trains {cls.n_encoders} encoder(s), got {len(encoders)}")

    # -- parameters ---------------------------------------------------------------------------
    @classmethod
    def describe_params(cls) -> str:
        if not cls.params:
            return f"objective {cls.name!r} takes no parameters"
        lines = [f"  {p.name} ({p.allowed()}, default {p.default!r}): {p.doc}" for p in cls.params]
        return f"objective {cls.name!r} takes:\n" + "\n".join(lines)

    @classmethod
    def resolve(cls, given: Mapping[str, Any]) -> dict[str, Any]:
        """Every parameter with its value (given or default), validated, in declaration order; an ``added`` one
        only when it differs from its default."""
        known = {p.name: p for p in cls.params}
        unknown = sorted(set(given) - set(known))
        problems = [f"unknown parameter(s) {unknown}"] if unknown else []
        resolved = {}
        for name, param in known.items():
            try:
                resolved[name] = param.check(given.get(name, param.default))
            except ValueError as exc:
                problems.append(f"{name}: {exc}")
        if not problems:
            problems = cls.check_combination(resolved)
        if problems:
            raise ConfigError(f"objective {cls.name!r}: " + "; ".join(problems) + "\n" + cls.describe_params())
        added_at_default = {p.name for p in cls.params if p.added and resolved[p.name] == p.default}
        return {name: value for name, value in resolved.items() if name not in added_at_default}

    @classmethod
    def with_added_defaults(cls, resolved: Mapping[str, Any]) -> dict[str, Any]:
        """``resolved`` (as stored in a spec) with the ``added`` parameters it leaves out at their defaults."""
        return {**{p.name: p.default for p in cls.params if p.added}, **resolved}

    @classmethod
    def check_combination(cls, params: dict[str, Any]) -> list[str]:
        """Problems with how valid parameters combine (none by default)."""
        return []

    # -- training -----------------------------------------------------------------------------
    def select_rows(self, rows: Sequence) -> list:
        """The training rows this objective can use, in order (all of them unless it says otherwise: DeCLUTR
        keeps the documents long enough for its spans)."""
        return list(rows)

    def forward(self, rows: Sequence, rng: random.Random) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def embed(self, sentences: Sequence[str]) -> torch.Tensor:
        """The encoder's training-path embeddings of ``sentences`` (dropout on, truncated to ``max_len``)."""
        return self.encoder(**self.encoder.tokenize(list(sentences), self.max_len), training=True)

    def global_batch(self, *local: torch.Tensor):
        """These local embeddings over the global batch: all-gathered across the processes of a torchrun run (the
        local slot keeps its gradient; :mod:`sentemb.distributed`), unchanged in one process. Objectives pass
        what their in-batch negatives and batch statistics are computed from."""
        return distributed.global_batch(*local, gradients=self.ddp_gradients)

    # -- evaluation ---------------------------------------------------------------------------
    def evaluation_encoder(self) -> SentenceEncoder:
        """The model whose embeddings are evaluated (dev selection, final evaluation, saved checkpoint): a
        SentenceEncoder, or any model with its evaluation interface (``SummedEncoders``)."""
        return self.encoder
