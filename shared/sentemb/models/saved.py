"""Loading a saved evaluated model (a run's ``best/``): one encoder, or a sum of encoders.

A run's ``best/`` directory is what its objective's ``evaluation_encoder()`` saved: a plain Hugging Face
directory for a one-encoder objective, or a :class:`~sentemb.models.summed_encoders.SummedEncoders` directory
(``summed_encoders.json`` plus one Hugging Face directory per member). :func:`load_saved_model` reads both, so
no caller needs to know which objective wrote it.
"""

from __future__ import annotations

from pathlib import Path

from sentemb.models.encoder import SentenceEncoder
from sentemb.models.summed_encoders import SummedEncoders, saved_members


def load_saved_model(
    directory: Path, pooler: str, dropout: float | None = None, seed: int = 0, name: str = ""
) -> SentenceEncoder | SummedEncoders:
    members = saved_members(directory)
    if members is None:
        return SentenceEncoder.from_name(str(directory), pooler, dropout=dropout, seed=seed)
    return SummedEncoders(
        [SentenceEncoder.from_name(str(m), pooler, dropout=dropout, seed=seed) for m in members], name=name
    )


def is_saved_model(directory: Path) -> bool:
    """Whether ``directory`` holds a complete saved model of either kind."""
    directory = Path(directory)
    members = saved_members(directory) if directory.is_dir() else None
    if members is None:
        return (directory / "config.json").is_file()
    return all((m / "config.json").is_file() for m in members)
