"""A recorded run's evaluated model as a sentence-transformers directory (``sentemb export``).

Built from sentence-transformers' own modules, so that ``SentenceTransformer(directory)`` gives the embeddings the
archive evaluated (eval mode, cut only at the position limit, no normalisation): Transformer -> Pooling (cls or
mean); ``cls`` adds a Dense module (the checkpoint's pooler MLP, tanh: SimCSE's test-time MLP, Table 6 "w/ MLP"),
``avg_first_last`` and ``avg_top2`` a WeightedLayerPooling, and a sum of encoders (TNCSE) an AddedEncoder module
copied into the directory (``trust_remote_code=True``). The training-time MLP of ``cls_before_pooler`` runs is not
exported.
Check: the directory is loaded back and must encode a fixed probe set (STS-B dev, else a built-in list) to the
archive's vectors within ``TOLERANCE``, or nothing is written; it is written under a temporary name and renamed,
and an existing directory is never overwritten.
The module chain per pooler: docs/derivations.md#sentembexportsentence_transformerspy
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import torch

from sentemb.errors import ConfigError, SentembError
from sentemb.models.encoder import SentenceEncoder
from sentemb.models.summed_encoders import SummedEncoders

TOLERANCE = 1e-5
ADDED_ENCODER_FILE = Path(__file__).with_name("st_added_encoder.py")
ADDED_ENCODER_REF = "st_added_encoder.AddedEncoder"
PROBES = [
    "A man is playing a guitar.",
    "A woman is slicing an onion.",
    "The cat sat on the mat.",
    "Two dogs run through a field of tall grass near the river.",
    "Stocks fell sharply on Monday.",
    "He said that the meeting, which had been planned for weeks, would be postponed until further notice.",
]


def _modules(encoder: SentenceEncoder, work: Path) -> list:
    """sentence-transformers modules equal to ``encoder``'s evaluation path (the backbone saved under ``work``)."""
    from sentence_transformers.sentence_transformer.modules import Dense, Pooling, Transformer, WeightedLayerPooling
    from torch import nn

    encoder.save(work)
    layers = int(encoder.backbone.config.num_hidden_layers)
    hidden = encoder.pooler in ("avg_first_last", "avg_top2")
    transformer = Transformer(
        str(work),
        max_seq_length=encoder.max_positions,
        config_kwargs={"output_hidden_states": True} if hidden else None,
    )
    modules = [transformer]
    if encoder.pooler == "avg_first_last":  # (hidden_states[1] + hidden_states[L]) / 2, as sentemb.models.poolers
        weights = nn.Parameter(torch.tensor([1.0] + [0.0] * (layers - 2) + [1.0]), requires_grad=False)
        modules.append(
            WeightedLayerPooling(encoder.dim, num_hidden_layers=layers, layer_start=1, layer_weights=weights)
        )
    elif encoder.pooler == "avg_top2":
        weights = nn.Parameter(torch.tensor([1.0, 1.0]), requires_grad=False)
        modules.append(
            WeightedLayerPooling(encoder.dim, num_hidden_layers=layers, layer_start=layers - 1, layer_weights=weights)
        )
    modules.append(Pooling(encoder.dim, pooling_mode="cls" if encoder.pooler.startswith("cls") else "mean"))
    if encoder.pooler == "cls":  # the checkpoint's pooler MLP on [CLS] (sentemb.models.poolers.uses_checkpoint_mlp)
        dense = encoder.backbone.pooler.dense
        modules.append(
            Dense(
                encoder.dim,
                dense.out_features,
                bias=True,
                activation_function=nn.Tanh(),
                init_weight=dense.weight.detach().clone(),
                init_bias=dense.bias.detach().clone(),
            )
        )
    return modules


def build(model: SentenceEncoder | SummedEncoders, work: Path):
    """A ``SentenceTransformer`` (on the CPU) that encodes as ``model``'s evaluation path does."""
    from sentence_transformers import SentenceTransformer

    if isinstance(model, SentenceEncoder):
        return SentenceTransformer(modules=_modules(model, work / "encoder"), device="cpu")
    if not isinstance(model, SummedEncoders):
        raise ConfigError(f"cannot export a {type(model).__name__}: a SentenceEncoder or SummedEncoders is needed")
    import importlib.util

    first, *others = list(model.members)
    if len({m.pooler for m in model.members}) != 1 or first.pooler not in ("cls_before_pooler", "avg"):
        raise ConfigError(
            f"a sum of encoders exports when every member pools by [CLS] without MLP or by the mean; "
            f"this one pools by {model.pooler}"
        )
    vocab = first.tokenizer.get_vocab()
    if any(m.tokenizer.get_vocab() != vocab for m in others):
        raise ConfigError("the summed encoders use different tokenizers; one tokenisation cannot feed them all")
    spec = importlib.util.spec_from_file_location("st_added_encoder", ADDED_ENCODER_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pooling = "cls" if first.pooler == "cls_before_pooler" else "mean"
    modules = _modules(first, work / "encoder_1")
    for i, member in enumerate(others, start=2):
        member.save(work / f"encoder_{i}")
        modules.append(module.AddedEncoder(pooling=pooling, model_path=str(work / f"encoder_{i}")))
    return SentenceTransformer(modules=modules, device="cpu")


def _add_module_file(directory: Path, n_added: int) -> None:
    """Copy ``st_added_encoder.py`` next to ``modules.json``, which already names it (the module was imported under
    that name, ``ADDED_ENCODER_REF``), and check that it lists every added encoder."""
    import json

    shutil.copyfile(ADDED_ENCODER_FILE, directory / ADDED_ENCODER_FILE.name)
    entries = json.loads((directory / "modules.json").read_text())
    if sum(e["type"] == ADDED_ENCODER_REF for e in entries) != n_added:
        raise SentembError(
            f"modules.json in {directory} does not list the {n_added} added encoder(s) as {ADDED_ENCODER_REF}"
        )


def max_difference(directory: Path, model, sentences: list[str], trust_remote_code: bool) -> float:
    """The largest |difference| between ``model``'s embeddings of ``sentences`` and those of the directory loaded
    with sentence-transformers (on the CPU, no normalisation, batch 64)."""
    from sentence_transformers import SentenceTransformer

    loaded = SentenceTransformer(
        str(directory), device="cpu", trust_remote_code=trust_remote_code, local_files_only=True
    )
    theirs = loaded.encode(sentences, batch_size=64, convert_to_numpy=True, normalize_embeddings=False)
    ours = model.encode(sentences, batch_size=64)
    return float(np.max(np.abs(theirs.astype(np.float64) - ours.astype(np.float64))))


def export(model: SentenceEncoder | SummedEncoders, out: Path, card: str, probes: list[str] | None = None) -> dict:
    """Write ``model`` to ``out`` as a sentence-transformers directory with ``card`` as its README.md; returns
    {"directory", "max_abs_difference", "n_probes", "trust_remote_code"}. Refuses an existing ``out``."""
    out = Path(out)
    if out.exists():
        raise SentembError(
            f"{out} already exists; the export never overwrites.\n  Fix: choose another --out, or delete it first."
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    summed = isinstance(model, SummedEncoders)
    probes = list(dict.fromkeys(probes or PROBES))
    model = model.to("cpu").eval()
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}.") as scratch:
        scratch = Path(scratch)
        st_model = build(model, scratch / "parts")
        staged = scratch / "export"
        st_model.save(str(staged))
        if summed:
            _add_module_file(staged, len(model.members) - 1)
        difference = max_difference(staged, model, probes, trust_remote_code=summed)
        if not difference <= TOLERANCE:  # NaN fails too
            raise SentembError(
                f"the exported model encodes {difference:.2e} away from the archive's model "
                f"(tolerance {TOLERANCE:.0e}); nothing was written to {out}"
            )
        result = {
            "directory": str(out),
            "max_abs_difference": difference,
            "n_probes": len(probes),
            "trust_remote_code": summed,
        }
        (staged / "README.md").write_text(
            card.replace("{max_abs_difference}", f"{difference:.1e}").replace("{n_probes}", str(len(probes))),
            encoding="utf-8",
        )
        os.replace(staged, out)
    return result
