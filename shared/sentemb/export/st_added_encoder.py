"""A sentence-transformers module that adds a second encoder's sentence vector to the pipeline's.

This file is copied verbatim into an exported TNCSE directory (``sentemb export``), next to its ``modules.json``,
and sentence-transformers imports it from there (``SentenceTransformer(directory, trust_remote_code=True)``): it
must not import the archive. The pipeline it completes is

    Transformer(encoder I) -> Pooling -> AddedEncoder(encoder II, same pooling)

so that the sentence embedding is pooled(encoder I) + pooled(encoder II) of the same tokens, TNCSE's evaluated
model (Zong et al., AAAI 2025, Figure 3 "inference": CLS(I) + CLS(II), no MLP; the official
``evaluation_CKPT.py`` adds the two last-layer [CLS] vectors). sentence-transformers has no module that runs two
backbones side by side (``Router`` chooses one per input), hence this one.

Layout inside its module folder: ``added_encoder_config.json`` ({"pooling": "cls" | "mean"}) and ``encoder/``, a
Hugging Face model directory (``AutoModel``).
"""

from __future__ import annotations

import json
import os

import torch
from transformers import AutoModel

try:  # sentence-transformers >= 6
    from sentence_transformers.base.modules import Module
except ImportError:  # 4.x and 5.x
    from sentence_transformers.models import Module

POOLINGS = ("cls", "mean")


class AddedEncoder(Module):
    config_keys = ["pooling"]
    config_file_name = "added_encoder_config.json"

    def __init__(self, pooling: str = "cls", model: torch.nn.Module | None = None, model_path: str | None = None):
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"pooling is one of {POOLINGS}, got {pooling!r}")
        if model is None and model_path is None:
            raise ValueError("AddedEncoder needs the second encoder: model or model_path")
        self.pooling = pooling
        self.model = model if model is not None else AutoModel.from_pretrained(model_path)

    def forward(self, features: dict, **kwargs) -> dict:
        inputs = {key: features[key] for key in ("input_ids", "attention_mask", "token_type_ids") if key in features}
        hidden = self.model(**inputs, return_dict=True).last_hidden_state
        if self.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            mask = features["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        features["sentence_embedding"] = features["sentence_embedding"] + pooled
        return features

    def get_embedding_dimension(self) -> int:
        return int(self.model.config.hidden_size)

    def save(self, output_path: str, *args, safe_serialization: bool = True, **kwargs) -> None:
        self.save_config(output_path)
        self.model.save_pretrained(os.path.join(output_path, "encoder"), safe_serialization=safe_serialization)

    @classmethod
    def load(
        cls,
        model_name_or_path: str,
        subfolder: str = "",
        token=None,
        cache_folder=None,
        revision=None,
        local_files_only: bool = False,
        **kwargs,
    ) -> "AddedEncoder":
        folder = cls.load_dir_path(
            model_name_or_path,
            subfolder=subfolder,
            token=token,
            cache_folder=cache_folder,
            revision=revision,
            local_files_only=local_files_only,
        )
        with open(os.path.join(folder, cls.config_file_name), encoding="utf-8") as handle:
            config = json.load(handle)
        return cls(pooling=config["pooling"], model_path=os.path.join(folder, "encoder"))
