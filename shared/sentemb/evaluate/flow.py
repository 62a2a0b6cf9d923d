"""BERT-flow post-processing (Li et al., 2020, §4): a normalizing flow fitted by maximum likelihood on frozen
sentence embeddings maps them to a standard Gaussian latent; similarity is the cosine of the latents.

Equations: Glow with 3 levels x 3 steps (each ActNorm, feature reversal, additive coupling of width 32); each level
    but the last factors out half its features with an N(0, 1) prior; the loss is the negative log-likelihood in bits
    per dimension, summed over a pair's two sentences; the embedding is the whole latent concat(eps_1, ..., z).
Official code: ``bohanli/BERT-flow`` @7fa8f6d (``flow/glow_ops_1x1.py``, ``config_l3_d3_w32.json``), fitted as its
    ``run_siamese.py``: lr 1e-3 constant, weight decay 0.01, epsilon 1e-6, gradients clipped to norm 1, 32 pairs
    (64 sentences) a batch, one epoch. Deviations: ActNorm initialised from the first batch (the official code
    builds but, per its source, never runs that; not verified by running it); ``torch.optim.AdamW``
    (bias-corrected); features constant over the fit left out (the flow diverges on them; all-MiniLM-L6-v2 has
    three); fitted on eval-mode embeddings, not with dropout 0.1.
Inputs: the encoder's embeddings, cast to float32; all computation in fp32 with autocast off.
References: Li et al., 2020, §4; Glow §3.1 (ActNorm).
Relations: :mod:`sentemb.evaluate.whitening`, the other post-processing of fixed embeddings.
The flow written out, the deviations and why no library: docs/derivations.md#sentembevaluateflowpy
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from sentemb.errors import ConfigError, SentembError

LOGSCALE_FACTOR = 3.0  # glow_ops_1x1.actnorm / zeros conv: logs is stored divided by 3
# The official loss is mean(NLL of the pairs' first sentences) + mean(NLL of their second ones): twice the mean over
# the batch's sentences. Adam does not see the factor, but the gradient clipping at norm 1 does.
PAIR_SIDES = 2


@dataclass(frozen=True)
class FlowConfig:
    """``config_l3_d3_w32.json`` and the official fitting settings (see the module docstring)."""

    levels: int = 3
    depth: int = 3
    width: int = 32
    lr: float = 1e-3
    weight_decay: float = 0.01
    eps: float = 1e-6
    clip_norm: float = 1.0
    batch_size: int = 64  # sentences: 32 pairs of the official siamese input
    epochs: int = 1
    init_std: float = 0.05

    def as_params(self) -> dict:
        return dict(self.__dict__)


class ActNorm(nn.Module):
    """Per-feature affine normalisation, initialised on the first batch it sees to zero mean and unit variance."""

    def __init__(self, features: int) -> None:
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(features))
        self.logs = nn.Parameter(torch.zeros(features))
        self.register_buffer("initialized", torch.tensor(False))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if not bool(self.initialized):
            with torch.no_grad():
                self.bias.copy_(-x.mean(0))
                self.logs.copy_(torch.log(1.0 / (x.std(0, unbiased=False) + 1e-6)) / LOGSCALE_FACTOR)
                self.initialized.fill_(True)
        logs = self.logs * LOGSCALE_FACTOR
        return (x + self.bias) * torch.exp(logs), logs.sum()


class CouplingNet(nn.Module):
    """NN of the additive coupling: two hidden layers with ActNorm and ReLU, a zero-initialised scaled output."""

    def __init__(
        self, features: int, out_features: int, width: int, init_std: float, generator: torch.Generator
    ) -> None:
        super().__init__()
        self.hidden = nn.ModuleList([nn.Linear(features, width, bias=False), nn.Linear(width, width, bias=False)])
        self.norms = nn.ModuleList([ActNorm(width), ActNorm(width)])
        for layer in self.hidden:
            with torch.no_grad():
                layer.weight.normal_(0.0, init_std, generator=generator)
        self.out = nn.Linear(width, out_features)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)
        self.out_logs = nn.Parameter(torch.zeros(out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer, norm in zip(self.hidden, self.norms):
            x = torch.relu(norm(layer(x))[0])
        return self.out(x) * torch.exp(self.out_logs * LOGSCALE_FACTOR)


class FlowStep(nn.Module):
    """ActNorm -> reverse the features -> additive coupling; returns the output and its log-determinant."""

    def __init__(self, features: int, width: int, init_std: float, generator: torch.Generator) -> None:
        super().__init__()
        self.norm = ActNorm(features)
        self.half = features // 2  # x1; x2 is the rest (one more feature when ``features`` is odd)
        self.coupling = CouplingNet(self.half, features - self.half, width, init_std, generator)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x, logdet = self.norm(x)
        x = torch.flip(x, dims=[1])
        x1, x2 = x[:, : self.half], x[:, self.half :]
        return torch.cat([x1, x2 + self.coupling(x1)], dim=1), logdet


class GlowFlow(nn.Module):
    """Embeddings (n, D) -> latents (n, D) and the per-example log-likelihood (nats)."""

    def __init__(self, dim: int, config: FlowConfig, generator: torch.Generator) -> None:
        super().__init__()
        if dim < 2**config.levels:
            raise ConfigError(
                f"BERT-flow with {config.levels} levels halves the features {config.levels - 1} times "
                f"and couples halves of the rest: it needs at least {2**config.levels} features, "
                f"got {dim}"
            )
        self.dim = dim
        self.levels = nn.ModuleList()
        features = dim
        for level in range(config.levels):
            self.levels.append(
                nn.ModuleList(
                    [FlowStep(features, config.width, config.init_std, generator) for _ in range(config.depth)]
                )
            )
            if level < config.levels - 1:
                features -= features // 2  # the level keeps the first half (rounded up) and factors out the rest

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logdet = torch.zeros((), dtype=x.dtype, device=x.device)
        factored = []
        for k, steps in enumerate(self.levels):
            for step in steps:
                x, step_logdet = step(x)
                logdet = logdet + step_logdet
            if k < len(self.levels) - 1:
                keep = x.shape[1] - x.shape[1] // 2
                factored.append(x[:, keep:])
                x = x[:, :keep]
        z = torch.cat(factored + [x], dim=1)
        log_prior = -0.5 * (z**2).sum(1) - 0.5 * self.dim * math.log(2 * math.pi)
        return z, log_prior + logdet


@dataclass
class BertFlow:
    """A fitted flow: :meth:`fit` on embeddings, :meth:`transform` to latents."""

    flow: GlowFlow
    config: FlowConfig
    features: np.ndarray  # the input features the flow models (those not constant on the fit embeddings)
    losses: list[float]  # bits per dimension, per step

    @classmethod
    def fit(
        cls, embeddings: np.ndarray, seed: int, config: FlowConfig = FlowConfig(), rtol: float = 1e-6
    ) -> "BertFlow":
        """Fit on ``embeddings`` (n, D). A feature whose standard deviation over them is below ``rtol`` times the
        largest one is constant and has no density (all-MiniLM-L6-v2 has three such features, ~1e-32 for every
        sentence; data-dependent ActNorm would scale them by ~1e6 and the flow diverges): the flow models the other
        features, and the latents leave the constant ones out, as whitening keeps its covariance's numerical rank."""
        data = np.asarray(embeddings, dtype=np.float32)
        if not np.isfinite(data).all():
            raise ConfigError(
                f"BERT-flow: {int((~np.isfinite(data).any(1)).sum())} of the {len(data)} fit embeddings "
                "hold NaN or inf; the encoder's output is broken"
            )
        if len(data) < config.batch_size:
            raise ConfigError(f"BERT-flow fits on batches of {config.batch_size} sentences; got {len(data)} sentences")
        spread = data.std(0)
        features = np.flatnonzero(spread > rtol * spread.max())
        if spread.max() == 0:
            raise ConfigError("BERT-flow: every feature of the fit embeddings is constant; fit on varied sentences")
        x = torch.as_tensor(data[:, features])
        n, dim = x.shape
        generator = torch.Generator().manual_seed(seed)
        with torch.autocast("cpu", enabled=False), torch.enable_grad():
            flow = GlowFlow(dim, config, generator)
            optimizer = torch.optim.AdamW(
                flow.parameters(), lr=config.lr, weight_decay=config.weight_decay, eps=config.eps
            )
            losses = []
            flow.train()
            for _ in range(config.epochs):
                order = torch.randperm(n, generator=generator)
                for start in range(0, n - config.batch_size + 1, config.batch_size):
                    _, log_likelihood = flow(x[order[start : start + config.batch_size]])
                    loss = -log_likelihood.mean() / (dim * math.log(2))  # bits per dimension
                    optimizer.zero_grad()
                    if not torch.isfinite(loss):
                        raise SentembError(
                            f"BERT-flow diverged: loss {float(loss.detach())} at step {len(losses) + 1} "
                            f"(seed {seed}, {n} embeddings of {dim} features); nothing was recorded"
                        )
                    (PAIR_SIDES * loss).backward()
                    nn.utils.clip_grad_norm_(flow.parameters(), config.clip_norm)
                    optimizer.step()
                    losses.append(float(loss.detach()))
        flow.eval()
        return cls(flow=flow, config=config, features=features, losses=losses)

    def transform(self, embeddings: np.ndarray, batch_size: int = 4096) -> np.ndarray:
        """The latents (float32, shape (n, number of modelled features))."""
        x = torch.as_tensor(np.asarray(embeddings, dtype=np.float32)[:, self.features])
        with torch.autocast("cpu", enabled=False), torch.no_grad():
            return torch.cat([self.flow(x[i : i + batch_size])[0] for i in range(0, len(x), batch_size)]).numpy()
