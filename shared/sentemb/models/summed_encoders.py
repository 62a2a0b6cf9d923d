"""SummedEncoders: an evaluated model whose embedding is the sum of several encoders' embeddings.

TNCSE (Zong et al., AAAI 2025, Figure 3 "inference") evaluates CLS(encoder I) + CLS(encoder II), the last layer's
[CLS] vectors added with no MLP, as the official ``evaluation_CKPT.py``; before training the same model is the plain
ensemble of two SimCSE encoders (TNCSE Table 3/4 "None").
Interface: the one :class:`~sentemb.models.encoder.SentenceEncoder` has (``encode``, ``save``, ``name``, ``pooler``,
``dim``, ``device``, ``max_positions``, ``packaged_with_normalize``, ``truncated_sentences``, ``nn.Module``'s
``eval``/``train``/``parameters``), so no consumer knows which of the two it holds.
``encode`` adds the members' float32 outputs on their own evaluation paths (exactly the official sum); a member's
``known`` embeddings (:mod:`sentemb.evaluate.embedding_cache`) are reused, equal to encoding up to float rounding
(~1e-7). ``save`` writes ``encoder_1/``, ``encoder_2/``, ... and ``summed_encoders.json``, read back by
:func:`sentemb.models.saved.load_saved_model`.
The interface and the lookups in full: docs/derivations.md#sentembmodelssummed_encoderspy
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import torch
from torch import nn

from sentemb.errors import ConfigError
from sentemb.models.encoder import SentenceEncoder

MANIFEST = "summed_encoders.json"


class SummedEncoders(nn.Module):
    def __init__(
        self,
        members: Sequence[SentenceEncoder],
        name: str = "",
        known: Sequence[Mapping[str, np.ndarray] | None] | None = None,
    ) -> None:
        super().__init__()
        if len(members) < 2:
            raise ConfigError(f"a sum of encoders needs at least two members, got {len(members)}")
        dims = {m.dim for m in members}
        if len(dims) != 1:
            raise ConfigError(f"the summed encoders must have one width, got {sorted(dims)}")
        known = list(known) if known is not None else [None] * len(members)
        if len(known) != len(members):
            raise ConfigError(f"known embeddings for {len(known)} members, but the sum has {len(members)}")
        self.members = nn.ModuleList(members)
        self.known = known
        self.name = name

    # -- the shared interface -----------------------------------------------------------------
    @property
    def pooler(self) -> str:
        poolers = list(dict.fromkeys(m.pooler for m in self.members))
        return f"sum{len(self.members)}-" + "+".join(poolers)

    @property
    def dim(self) -> int:
        return self.members[0].dim

    @property
    def device(self) -> torch.device:
        return self.members[0].device

    @property
    def max_positions(self) -> int:
        return min(m.max_positions for m in self.members)

    @property
    def packaged_with_normalize(self) -> bool:
        return False  # a sum of members is not a sentence-transformers package

    @property
    def truncated_sentences(self) -> int:
        """Sentences cut at the position limit: every member sees the same sentences, so the largest count."""
        return max(m.truncated_sentences for m in self.members)

    @torch.inference_mode()
    def encode(
        self, sentences: list[str], batch_size: int = 64, progress: bool | str = False, precision: str = "fp32"
    ) -> np.ndarray:
        """float32 (n, dim): the sum of the members' embeddings of ``sentences``, in input order."""
        total = None
        for i, (member, known) in enumerate(zip(self.members, self.known), start=1):
            label = progress if not isinstance(progress, str) else f"{progress} (encoder {i}/{len(self.members)})"
            if known:
                unique = list(dict.fromkeys(sentences))
                missing = [s for s in unique if s not in known]
                member.count_truncated([s for s in unique if s in known])
                fresh = dict(
                    zip(missing, member.encode(missing, batch_size=batch_size, progress=label, precision=precision))
                )
                vectors = np.zeros((len(sentences), self.dim), dtype=np.float32)
                for row, s in enumerate(sentences):
                    vectors[row] = known[s] if s in known else fresh[s]
            else:
                vectors = member.encode(sentences, batch_size=batch_size, progress=label, precision=precision)
            total = vectors if total is None else total + vectors
        return total

    def save(self, directory: Path) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        names = [f"encoder_{i}" for i in range(1, len(self.members) + 1)]
        for member, name in zip(self.members, names):
            member.save(directory / name)
        manifest = {
            "model": "sum of encoders' embeddings",
            "members": names,
            "poolers": [m.pooler for m in self.members],
        }
        (directory / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")


def saved_members(directory: Path) -> list[Path] | None:
    """The member directories of a saved SummedEncoders, or None when ``directory`` holds a single model."""
    manifest = Path(directory) / MANIFEST
    if not manifest.is_file():
        return None
    try:
        names = json.loads(manifest.read_text())["members"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            f"{manifest} cannot be read ({exc}).\n  Fix: delete {directory} and run the spec again."
        ) from exc
    return [Path(directory) / name for name in names]
