"""SentenceEncoder: a backbone and a pooler (for ``cls``, the checkpoint's MLP pooler at evaluation).

Two paths:

- ``forward(batch, training=True)`` is the training path (gradients, dropout, max_len truncation
  done by the caller's tokenisation). It returns the pooled representation; an objective that trains an
  MLP on top of it owns that MLP (``sentemb.objectives.simcse``).
- ``encode(sentences)`` is the evaluation path of SimCSE's ``evaluation.py``: eval mode, **no
  truncation** (only sentences longer than the model's position limit are cut, and counted),
  dynamic padding. Each unique sentence is encoded once; batches are formed from sentences sorted
  by token length so that padding is minimal, and the result is returned in input order. ``precision``
  (fp32 by default, SentEval's numbers) may run the forward pass under bf16/fp16 autocast; the output is
  float32 either way. On 2 CPU cores batches of 32, 64 and 128 and token-budget batching run within a few percent
  of each other in fp32 (compute-bound: ~75% of the cores' sgemm peak); 512 is slower
  (``benchmarks/bench_simcse_small.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from torch import nn

from sentemb.errors import ConfigError
from sentemb.models.backbone import load_backbone
from sentemb.models.device_copies import to_device_without_waiting
from sentemb.models.poolers import NEEDS_HIDDEN_STATES, POOLERS, pool, uses_checkpoint_mlp
from sentemb.precision import autocast
from sentemb.progress import progress as progress_bar

#: model types whose position ids start after the padding index (transformers' create_position_ids_from_input_ids)
POSITIONS_AFTER_PADDING = {"roberta", "xlm-roberta", "camembert", "longformer", "data2vec-text", "xmod"}


#: a batch without its own backbone mask: the backbone derives one from the 2-D attention mask (the plain path)
DERIVED = object()


class SentenceEncoder(nn.Module):
    def __init__(self, backbone: nn.Module, tokenizer, pooler: str, name: str = "") -> None:
        super().__init__()
        if pooler not in POOLERS:
            raise ConfigError(f"unknown pooler {pooler!r}; choose from {', '.join(POOLERS)}")
        if pooler == "cls" and getattr(backbone, "pooler", None) is None:
            raise ConfigError(f"pooler {pooler!r} needs the backbone's MLP pooler, and {name or 'this model'} has none")
        self.backbone = backbone
        self.tokenizer = tokenizer
        self.pooler = pooler
        self.name = name
        self.truncated_sentences = 0
        #: training batches are padded to a multiple of this many tokens (1: to the longest; ``sentemb.train.speedups``)
        self.pad_multiple = 1
        #: training batches reach a GPU without the host waiting for it (``sync_free``; ``sentemb.train.speedups``)
        self.copies_without_waiting = False

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_name(cls, name: str, pooler: str, dropout: float | None = None, seed: int = 0) -> "SentenceEncoder":
        tokenizer, backbone = load_backbone(name, dropout=dropout, seed=seed)
        return cls(backbone, tokenizer, pooler, name=name)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.backbone.save_pretrained(directory)
        self.tokenizer.save_pretrained(directory)

    @property
    def dim(self) -> int:
        return int(self.backbone.config.hidden_size)

    @property
    def device(self) -> torch.device:
        return next(self.backbone.parameters()).device

    @property
    def max_positions(self) -> int:
        """The longest input the backbone takes, in tokens (longer evaluation sentences are cut and counted).

        RoBERTa-style embeddings number positions from ``pad_token_id + 1``, so of their 514 position embeddings
        512 are usable (the DeCLUTR configs' 510 tokens + 2 special tokens); BERT uses all 512."""
        config = self.backbone.config
        positions = int(getattr(config, "max_position_embeddings", 512))
        if getattr(config, "model_type", "") in POSITIONS_AFTER_PADDING:
            positions -= int(config.pad_token_id) + 1
        return positions

    @property
    def packaged_with_normalize(self) -> bool:
        """Whether the model directory is a sentence-transformers package whose modules.json ends in a Normalize
        module (all-MiniLM-L6-v2's does): its users get L2-normalised embeddings."""
        modules = Path(str(getattr(self.backbone, "name_or_path", ""))) / "modules.json"
        if modules.is_file():
            return any("Normalize" in m.get("type", "") for m in json.loads(modules.read_text()))
        return False

    # -- the two paths ------------------------------------------------------------------------
    def _backbone_pass(self, input_ids, attention_mask, token_type_ids, backbone_attention_mask=DERIVED):
        """(the backbone's output, the pooled representation before any MLP) of one forward pass. The backbone gets
        ``backbone_attention_mask`` when a batch brings one (:meth:`to_device` under ``copies_without_waiting``), else
        the 2-D mask, from which it derives its own."""
        mask = attention_mask if backbone_attention_mask is DERIVED else backbone_attention_mask
        kwargs = {"input_ids": input_ids, "attention_mask": mask}
        if token_type_ids is not None:
            kwargs["token_type_ids"] = token_type_ids
        out = self.backbone(**kwargs, output_hidden_states=self.pooler in NEEDS_HIDDEN_STATES, return_dict=True)
        return out, pool(self.pooler, out.last_hidden_state, out.hidden_states, attention_mask)

    def forward(
        self, input_ids, attention_mask, token_type_ids=None, training: bool = True, backbone_attention_mask=DERIVED
    ) -> torch.Tensor:
        _, rep = self._backbone_pass(input_ids, attention_mask, token_type_ids, backbone_attention_mask)
        if uses_checkpoint_mlp(self.pooler, training):
            rep = self.backbone.pooler.activation(self.backbone.pooler.dense(rep))
        return rep

    def forward_with_last_hidden_state(
        self, input_ids, attention_mask, token_type_ids=None, backbone_attention_mask=DERIVED
    ):
        """Training path returning (the pooled representation, the last layer's token states (B, L, d)) from one
        forward pass; DeCLUTR's MLM head reads the token states of the same pass that gives the span embedding."""
        out, rep = self._backbone_pass(input_ids, attention_mask, token_type_ids, backbone_attention_mask)
        if uses_checkpoint_mlp(self.pooler, True):
            rep = self.backbone.pooler.activation(self.backbone.pooler.dense(rep))
        return rep, out.last_hidden_state

    def forward_with_pooler_output(
        self, input_ids, attention_mask, token_type_ids=None, backbone_attention_mask=DERIVED
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Training path returning (the pooled representation, BERT's ``pooler_output``) from one forward pass.

        ``pooler_output`` is the backbone's pooler module (dense + tanh) on [CLS], whatever this encoder's pooler;
        TNCSE's norm terms use it (Eq. 6). ConfigError when the backbone has no pooler module."""
        if getattr(self.backbone, "pooler", None) is None:
            raise ConfigError(f"{self.name or 'this model'} has no pooler module, so it has no pooler_output")
        out, rep = self._backbone_pass(input_ids, attention_mask, token_type_ids, backbone_attention_mask)
        return rep, out.pooler_output

    def tokenize(self, sentences: list[str], max_length: int | None) -> dict[str, torch.Tensor]:
        """A training batch on the device: ``sentences`` cut to ``max_length`` tokens, padded to the longest
        (:meth:`cpu_batch`), then to :meth:`padded_length` (:meth:`to_device`)."""
        return self.to_device(self.cpu_batch(sentences, max_length), max_length)

    def cpu_batch(self, sentences: list[str], max_length: int | None) -> dict[str, torch.Tensor]:
        """The tokenizer's batch of ``sentences`` on the CPU, cut to ``max_length`` tokens, padded to the longest."""
        return dict(
            self.tokenizer(
                sentences, padding=True, truncation=max_length is not None, max_length=max_length, return_tensors="pt"
            )
        )

    def padded_length(self, longest: int, max_length: int | None) -> int:
        """The length a batch whose longest sequence has ``longest`` tokens is padded to: ``longest`` rounded up to a
        multiple of :attr:`pad_multiple`, but not past ``max_length`` (nor the position limit) unless ``longest``
        already is."""
        rounded = -(-longest // self.pad_multiple) * self.pad_multiple
        cap = min(max_length or self.max_positions, self.max_positions)
        return max(longest, min(rounded, cap))

    def to_device(self, batch: dict[str, torch.Tensor], max_length: int | None) -> dict[str, torch.Tensor]:
        """A CPU batch padded to the longest, on the device, with further padding columns up to
        :meth:`padded_length` (none while :attr:`pad_multiple` is 1): the padding id, attention mask 0, token type 0.
        Masking drawn before this step draws the same masks whatever the multiple.

        With :attr:`copies_without_waiting` a GPU receives it through pinned memory without blocking the host (a plain
        copy waits for the device's queued work), and an SDPA backbone gets its attention mask made here
        (``backbone_attention_mask``): none when nothing is padded, else the (B, 1, L, L) boolean mask of the 2-D
        one, which is what transformers makes of it, except that it decides whether anything is padded by reading the
        mask on the device (``padding_mask.all()``, a synchronisation), and this on the CPU batch. The same outputs
        bit for bit (tests/test_speedups.py)."""
        length = batch["input_ids"].shape[1]
        extra = self.padded_length(length, max_length) - length
        out = {}
        for key, value in batch.items():
            if extra > 0:
                fill = self.tokenizer.pad_token_id if key == "input_ids" else 0
                value = torch.nn.functional.pad(value, (0, extra), value=fill)
            if not self.copies_without_waiting:
                out[key] = value.to(self.device)
                continue
            out[key] = to_device_without_waiting(value, self.device)
            if key == "attention_mask" and getattr(self.backbone.config, "_attn_implementation", "") == "sdpa":
                padded = not bool(value.all())  # on the CPU batch: no synchronisation
                full = value.shape[1]
                out["backbone_attention_mask"] = (
                    out[key][:, None, None, :].bool().expand(-1, 1, full, -1) if padded else None
                )
        return out

    def _token_lengths(self, sentences: list[str]) -> list[int]:
        return [len(ids) for ids in self.tokenizer(sentences, add_special_tokens=True)["input_ids"]]

    def count_truncated(self, sentences: list[str]) -> None:
        """Count, as :meth:`encode` does, the distinct ``sentences`` longer than the position limit, for embeddings
        of this model taken from elsewhere (a run's saved evaluation embeddings) instead of encoded."""
        unique = list(dict.fromkeys(sentences))
        if unique:
            self.truncated_sentences += int(sum(n > self.max_positions for n in self._token_lengths(unique)))

    @torch.inference_mode()
    def encode(
        self, sentences: list[str], batch_size: int = 64, progress: bool | str = False, precision: str = "fp32"
    ) -> np.ndarray:
        """float32 embeddings (n, dim) in the order of ``sentences`` (SentEval's evaluation path)."""
        unique = list(dict.fromkeys(sentences))
        if not unique:
            return np.zeros((0, self.dim), dtype=np.float32)
        limit = self.max_positions
        lengths = self._token_lengths(unique)
        order = np.argsort(lengths, kind="stable")
        self.truncated_sentences += int(sum(length > limit for length in lengths))
        was_training = self.training
        self.eval()
        out = np.zeros((len(unique), self.dim), dtype=np.float32)
        starts = range(0, len(unique), batch_size)
        desc = progress if isinstance(progress, str) else f"encode {self.name or 'model'}"
        for start in progress_bar(starts, desc=desc, disable=not progress, unit="batch", leave=False):
            index = order[start : start + batch_size]
            batch = self.tokenizer(
                [unique[i] for i in index], padding=True, truncation=True, max_length=limit, return_tensors="pt"
            )
            batch = {k: v.to(self.device) for k, v in batch.items()}
            with autocast(precision, self.device):
                out[index] = self.forward(**batch, training=False).float().cpu().numpy()
        self.train(was_training)
        position = {s: i for i, s in enumerate(unique)}
        return out[[position[s] for s in sentences]]
