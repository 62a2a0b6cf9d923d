"""The archive's SimCSE training steps against sentence-transformers' own trainer for the same unsupervised step, side
by side on one device, each in a fresh Python process; rerun it, it is not a test. No network and no mirror: the
backbone is a BERT of random weights built from a config (a step costs the same with trained weights), the rows are
generated text of about ``--max-len`` word pieces, the tokenizer is all-MiniLM-L6-v2's (BERT's uncased vocabulary).

    python benchmarks/bench_vs_sentence_transformers.py --output benchmarks/results/vs_sentence_transformers_h200.json
    python benchmarks/bench_vs_sentence_transformers.py --model-size tiny --batch 4 --max-len 16 --steps 2  # CPU check

Variants (``--variants``; by default :data:`DEFAULT_VARIANTS`), each the full profile's spec of that run
(papers/*/experiments.py), each in a fresh process:
- ``archive_<kind>``: the archive's training step as its loop runs it (``sentemb.train.loop``: ``Optimization`` of
  the spec, autocast and fp16's gradient scaler, clipping at the spec's norm, the learning-rate schedule, the
  logged loss and its NaN check), kind ``unsup`` (SimCSE's ``unsup``: ``simcse_unsup``, [CLS] before the pooler, two
  dropout views), ``sup`` (``simcse_sup``, batch ``--sup-batch``, NLI triples: 3 sequences a row), ``simcsepp``
  (SimCSE++'s headline: off-dropout negatives, a third encoder pass with dropout off and gradients kept, DCL) or
  ``declutr`` (DeCLUTR's headline on a RoBERTa-base shape: 16 documents, 2 anchors and 2 positives each, spans of
  32-512 tokens, MLM on the anchors); ``archive_encode``: the evaluation path, encoding ``--encode-sentences``
  sentences (``SentenceEncoder.encode``, eval mode, no gradients), timed per 1,000 sentences.
- ``+<speed-up>`` after a kind: with that switch of ``sentemb.train.speedups`` (``fused_adamw``, ``sync_free``,
  ``compile``, ``pad_multiple=N``, ``eval_batch=N``), ``+bf16`` (bf16 autocast instead of the spec's fp16: a spec
  change, not a speed-up of the same computation) or ``+all`` (:data:`ALL`: every switch of the training step).
- ``st_unsup``: the same step the sentence-transformers way: ``SentenceTransformer`` of a ``Transformer`` module (the
  same seeded weights, saved with MiniLM's tokenizer files) and CLS ``Pooling``, ``MultipleNegativesRankingLoss``
  (scale 20 = 1/0.05, cosine) on a ``datasets.Dataset`` of pairs (anchor = positive = s): unsupervised SimCSE.
  Trained by ``SentenceTransformerTrainer`` with its defaults (fused AdamW, gradient clipping at 1.0, linear
  schedule; fp16/bf16 through the training arguments; no saving, logging, evaluation or reporting). Without
  ``accelerate`` (the trainer needs it) the trainer's inner step is run instead, written out from its source: its
  DataLoader and data collator, the loss, backward with the scaler, unscale and clip, the optimizer and schedule its
  default arguments name, zero_grad (``--st-loop``; the summary says which ran).

Timing: ``--warmup`` untimed steps, then ``--steps`` steps in a row between two device synchronisations (nothing in
between waits for the device unless the step itself does, so a step that never synchronises is timed as it runs);
ms per step is their mean (DeCLUTR warms up 7 steps more, a compiled step 3 more: ``warmup_steps``). Every step
draws new rows' augmentations and dropout masks (a seeded ``random.Random`` per step), and DeCLUTR new spans.
``--budget-s``: variants that would start after this many seconds are not run (reported as such); the default list
runs the most telling first.

Reported per variant: ms per step, sentences per second (training rows: wiki sentences, NLI triples or
documents), sequences per second (encoder inputs), peak memory (``torch.cuda.max_memory_allocated``; null on a
CPU), the first and last step's loss, and on CUDA the model FLOP utilisation against ``--peak-tflops`` (989: H100
SXM dense fp16/bf16, also the H200's; give the peak of the precision and GPU run):
    FLOPs per step = sum over a step's encoder passes of S * (6 * N * T + 12 * layers * T^2 * hidden)
with S the sequences of the pass (forward and backward each), T their padded length (the longest of the pass, at
most the maximum length, rounded up under ``pad_multiple``; DeCLUTR's anchors and positives are two passes, their T
averaged over the timed steps), N the parameters of the transformer layers (embeddings, pooler and MLM head
excluded); 6 N T for the matrix products, 12 layers T^2 hidden for the attention scores and their weighted sum.
The summary's ``speedup_over_plain`` divides each kind's plain ms by each of its variants' (above 1: faster).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from bench_gpu_full_steps import rows_for  # this folder is on sys.path when run as a script
from benchmark_io import emit

from sentemb import precision as amp
from sentemb.models.backbone import minilm_dir

KINDS = {  # archive kind -> (paper, run name) of the full grid whose spec it times
    "unsup": ("simcse", "unsup"),
    "sup": ("simcse", "sup"),
    "simcsepp": ("simcse_pp", "simcse_pp"),
    "declutr": ("declutr", "declutr"),
    "encode": ("simcse", "unsup"),  # the evaluation path of unsupervised SimCSE's encoder
}
ALL = ("fused_adamw", "sync_free", "compile")  # "+all": these, and padding to a multiple of ALL_PAD[kind]
ALL_PAD = {"declutr": 64}  # spans of 34-514 tokens: 8 shapes instead of ~480; sentences: 8 (tensor-core aligned)
DEFAULT_VARIANTS = (  # the most telling first: a spent --budget-s drops the last
    "st_unsup",
    "archive_unsup",
    "archive_unsup+all",
    "archive_declutr",
    "archive_declutr+all",
    "archive_sup",
    "archive_sup+all",
    "archive_simcsepp",
    "archive_simcsepp+all",
    "archive_unsup+fused_adamw",
    "archive_unsup+sync_free",
    "archive_unsup+compile",
    "archive_unsup+bf16",
    "archive_unsup+all+bf16",
    "archive_declutr+pad_multiple=64",
    "archive_encode",
    "archive_encode+eval_batch=512",
)
SHAPES = {
    "base": {"num_hidden_layers": 12, "hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072},
    "tiny": {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 128},
}
VOCAB_SIZE = 30522  # BERT's uncased word pieces, all-MiniLM-L6-v2's tokenizer
ROBERTA = {"max_position_embeddings": 514, "type_vocab_size": 1, "pad_token_id": 1}  # DeCLUTR's roberta-base
ROBERTA_VOCAB_SIZE = 50265  # its embedding and MLM output layers keep RoBERTa's size (fed ids of MiniLM's tokenizer)
LEARNING_RATE = 3e-5  # sentence-transformers' side; the archive's runs use their spec's
SIMCSE_SCALE = 20.0  # 1 / temperature 0.05
SEED = 0
PACKAGES = ("torch", "transformers", "sentence-transformers", "datasets", "accelerate")


def parse_variant(name: str) -> tuple[str, object, bool]:
    """``archive_<kind>[+modifier...]`` -> (kind, Speedups, bf16); ``st_unsup`` -> ("st_unsup", Speedups(), False).
    ValueError saying what is allowed."""
    from sentemb.train.speedups import Speedups

    if name == "st_unsup":
        return name, Speedups(), False
    head, *modifiers = name.split("+")
    kind = head.removeprefix("archive_")
    if not head.startswith("archive_") or kind not in KINDS:
        raise ValueError(f"unknown variant {name!r}: st_unsup, or archive_<{'|'.join(KINDS)}>[+modifier...]")
    bf16 = "bf16" in modifiers
    switches = [m for m in modifiers if m not in ("bf16", "all")]
    if "all" in modifiers:
        switches += [*ALL, f"pad_multiple={ALL_PAD.get(kind, 8)}"]
    try:
        speedups = Speedups.parse(",".join(dict.fromkeys(switches)))
    except Exception as exc:
        raise ValueError(f"variant {name!r}: {exc}; or +bf16, +all") from None
    return kind, speedups, bf16


# -- what both sides share ----------------------------------------------------------------------------------------
def random_bert(model_size: str):
    """The seeded BERT of random weights both sides start from."""
    from transformers import BertConfig, BertModel

    torch.manual_seed(SEED)
    return BertModel(BertConfig(vocab_size=VOCAB_SIZE, **SHAPES[model_size]))


def random_roberta(model_size: str):
    """DeCLUTR's backbone shape (RoBERTa), seeded random weights; RoBERTa's vocabulary size at base size."""
    from transformers import RobertaConfig, RobertaModel

    torch.manual_seed(SEED)
    vocab = ROBERTA_VOCAB_SIZE if model_size == "base" else VOCAB_SIZE
    return RobertaModel(RobertaConfig(vocab_size=vocab, **ROBERTA, **SHAPES[model_size]))


def sentences(rows: list) -> list[str]:
    return [text for row in rows for text in ((row,) if isinstance(row, str) else row)]


def padded_length(tokenizer, rows: list, max_len: int) -> int:
    """The length a step's batch is padded to: its longest sentence in word pieces, at most ``max_len``."""
    return min(max_len, max(len(ids) for ids in tokenizer(sentences(rows))["input_ids"]))


def layer_parameters(bert) -> int:
    return sum(p.numel() for p in bert.encoder.parameters())


def flops_per_step(sequences: int, tokens: int, bert) -> float:
    return flops_of_passes([(sequences, tokens)], bert)


def flops_of_passes(passes: list[tuple[int, int]], bert) -> float:
    """The docstring's FLOPs of encoder passes, each (sequences, padded length)."""
    config = bert.config
    total = 0
    for sequences, tokens in passes:
        matmuls = 6 * layer_parameters(bert) * tokens
        attention = 12 * config.num_hidden_layers * tokens**2 * config.hidden_size
        total += sequences * (matmuls + attention)
    return float(total)


def synchronise(device: torch.device):
    return torch.cuda.synchronize if device.type == "cuda" else (lambda: None)


def reset_peak_memory(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def peak_memory_mib(device: torch.device) -> float | None:
    return round(torch.cuda.max_memory_allocated(device) / 2**20, 1) if device.type == "cuda" else None


def step_summary(
    seconds: float, batch: int, sequences: int, flops: float, device, peak_tflops: float, losses: list[float]
) -> dict:
    return {
        "ms_per_step": round(seconds * 1000, 3),
        "sentences_per_second": round(batch / seconds, 2),
        "sequences_per_second": round(sequences / seconds, 2),
        "peak_memory_mib": peak_memory_mib(device),
        "flops_per_step": flops,
        "mfu": round(flops / seconds / (peak_tflops * 1e12), 4) if device.type == "cuda" else None,
        "first_loss": losses[0],
        "last_loss": losses[-1],
    }


def timed_window(step, warmup: int, steps: int, device: torch.device) -> float:
    """Mean seconds of ``steps`` calls of ``step(i)`` in a row after ``warmup`` untimed ones, between two device
    synchronisations."""
    sync = synchronise(device)
    for i in range(warmup):
        step(i)
    sync()
    tick = time.perf_counter()
    for i in range(warmup, warmup + steps):
        step(i)
    sync()
    return (time.perf_counter() - tick) / steps


# -- the archive ----------------------------------------------------------------------------------------------------
def archive_spec(kind: str, args, bf16: bool):
    """The full grid's spec of the kind, at this benchmark's batch and lengths (and DeCLUTR's spans)."""
    import importlib

    paper, run = KINDS[kind]
    spec = importlib.import_module(f"papers.{paper}.experiments").paper_grid()[run]
    changes: dict = {"precision": "bf16" if bf16 else args.precision}
    if kind == "declutr":
        longest = args.declutr_max_span
        params = {**spec.objective_params, "max_span_len": longest, "min_span_len": min(32, longest // 2)}
        changes.update(batch_size=args.declutr_batch, max_len=longest + 2, objective_params=params)
    else:
        changes.update(batch_size=args.sup_batch if kind == "sup" else args.batch, max_len=args.max_len)
    return dataclasses.replace(spec, **changes)


def archive_objective(kind: str, spec, args, device: torch.device):
    from transformers import AutoTokenizer

    from sentemb.models.encoder import SentenceEncoder
    from sentemb.objectives import registry

    tokenizer = AutoTokenizer.from_pretrained(minilm_dir())
    backbone = random_roberta(args.model_size) if kind == "declutr" else random_bert(args.model_size)
    encoder = SentenceEncoder(backbone, tokenizer, spec.pooler, f"random {backbone.config.model_type}").to(device)
    objective = registry.build_objective(spec.objective, spec.objective_params, [encoder], spec.max_len)
    return objective.to(device).train(), tokenizer


def step_passes(kind: str, objective, rows: list, tokenizer, spec, steps: range) -> list[tuple[int, int]]:
    """The encoder passes (sequences, padded length) of the timed steps, averaged: DeCLUTR's spans are sampled again
    with each step's generator (its first draws), the sentence kinds' rows are the same every step."""
    encoder = objective.encoder
    if kind != "declutr":
        longest = max(
            len(ids) for ids in tokenizer(sentences(rows), truncation=True, max_length=spec.max_len)["input_ids"]
        )
        return [(len(rows) * objective.sequences_per_row, encoder.padded_length(longest, spec.max_len))]
    anchors, positives = 0, 0
    for step in steps:
        spans_a, spans_p = objective.sample_spans(rows, random.Random(step))
        anchors += encoder.padded_length(max(len(s) for s in spans_a) + 2, spec.max_len)
        positives += encoder.padded_length(max(len(s) for p in spans_p for s in p) + 2, spec.max_len)
    count = len(rows) * objective.num_anchors
    return [(count, round(anchors / len(steps))), (count * objective.num_positives, round(positives / len(steps)))]


def run_archive(variant: str, args, device: torch.device) -> dict:
    from sentemb.train.loop import Optimization, training_step
    from sentemb.train.speedups import apply_to_encoders

    kind, speedups, bf16 = parse_variant(variant)
    spec = archive_spec(kind, args, bf16)
    objective, tokenizer = archive_objective(kind, spec, args, device)
    if kind == "encode":
        return run_encode(objective.encoder, speedups, spec, args, device, tokenizer)
    rows = objective.select_rows(rows_for(objective.rows, spec.batch_size, tokenizer, random.Random(SEED)))
    apply_to_encoders(objective, speedups)
    optimization = Optimization.for_spec(objective, spec, speedups)
    watched = objective.encoder.backbone.encoder.layer[0].attention.self.query.weight
    before = watched.detach().clone()
    logged: list[torch.Tensor] = []

    def step(i: int) -> None:
        loss = training_step(objective, rows, random.Random(i), optimization, spec, i, check=not speedups.sync_free)
        logged.append(loss)

    warmup = warmup_steps(kind, speedups, args.warmup)
    reset_peak_memory(device)
    seconds = timed_window(step, warmup, args.steps, device)
    losses = torch.stack(logged).double().cpu().tolist()
    passes = step_passes(kind, objective, rows, tokenizer, spec, range(warmup, warmup + args.steps))
    sequences = sum(count for count, _ in passes)
    paper, run = KINDS[kind]
    return {
        "implementation": "sentemb",
        "run": f"{paper}/{run}",
        "objective": spec.objective,
        "objective_params": spec.objective_params,
        "pooler": spec.pooler,
        "speedups": speedups.names(),
        "loop": "sentemb.train.loop.training_step with Optimization.for_spec",
        "optimizer": f"AdamW{' (fused)' if speedups.fused_adamw else ' (foreach on CUDA)'}, gradients clipped at "
        f"norm {spec.grad_clip}, {spec.lr_schedule} learning-rate schedule, lr {spec.lr}",
        "batch": spec.batch_size,
        "sequences_per_step": sequences,
        "tokens_per_sequence": passes[0][1] if len(passes) == 1 else None,
        "passes": [{"sequences": count, "padded_length": length} for count, length in passes],
        **step_summary(
            seconds,
            spec.batch_size,
            sequences,
            flops_of_passes(passes, objective.encoder.backbone),
            device,
            args.peak_tflops,
            losses,
        ),
        "weight_update_norm": float((watched.detach() - before).norm()),
        "warmup_steps": warmup,
    }


def warmup_steps(kind: str, speedups, warmup: int) -> int:
    """``--warmup``, plus 7 for DeCLUTR (its span lengths change every step: the allocator and the kernel choices
    settle over more steps, as the GPU plan's re-measurement found) and 3 under ``compile`` (a second shape
    recompiles with dynamic dimensions)."""
    return warmup + (7 if kind == "declutr" else 0) + (3 if speedups.compile else 0)


def run_encode(encoder, speedups, spec, args, device: torch.device, tokenizer) -> dict:
    """The evaluation path: ``--encode-sentences`` distinct sentences through ``SentenceEncoder.encode`` at the
    variant's evaluation batch, in the run's precision (after one untimed batch)."""
    texts = [
        f"{text} {i}"
        for i, text in enumerate(rows_for("sentences", args.encode_sentences, tokenizer, random.Random(SEED)))
    ]
    encoder.encode(texts[: speedups.eval_batch], batch_size=speedups.eval_batch, precision=spec.precision)
    reset_peak_memory(device)
    sync = synchronise(device)
    sync()
    tick = time.perf_counter()
    encoder.encode(texts, batch_size=speedups.eval_batch, precision=spec.precision)
    sync()
    seconds = time.perf_counter() - tick
    return {
        "implementation": "sentemb",
        "run": "SentenceEncoder.encode (eval mode, no gradients, batches sorted by length)",
        "pooler": spec.pooler,
        "speedups": speedups.names(),
        "eval_batch": speedups.eval_batch,
        "sentences": len(texts),
        "ms_per_1000_sentences": round(seconds / len(texts) * 1e6, 3),
        "sentences_per_second": round(len(texts) / seconds, 2),
        "peak_memory_mib": peak_memory_mib(device),
    }


# -- sentence-transformers ------------------------------------------------------------------------------------------
def st_model(args, device: torch.device, directory: Path):
    """SentenceTransformer(Transformer over the random BERT saved with MiniLM's tokenizer files, CLS Pooling)."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import AutoTokenizer

    random_bert(args.model_size).save_pretrained(directory)
    AutoTokenizer.from_pretrained(minilm_dir()).save_pretrained(directory)
    transformer = Transformer(str(directory), max_seq_length=args.max_len)
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="cls")
    return SentenceTransformer(modules=[transformer, pooling], device=str(device))


def recording_loss(model):
    """MultipleNegativesRankingLoss that keeps its last value (detached) for the step timer to read."""
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    class RecordingMultipleNegativesRankingLoss(MultipleNegativesRankingLoss):
        last_loss: torch.Tensor | None = None

        def forward(self, sentence_features, labels):
            loss = super().forward(sentence_features, labels)
            self.last_loss = loss.detach()
            return loss

    return RecordingMultipleNegativesRankingLoss(model, scale=SIMCSE_SCALE)


def optimizer_settings(optimizer, optim, max_grad_norm: float, schedule) -> dict:
    name = lambda option: getattr(option, "value", option)  # noqa: E731 - the trainer's enums, as their names
    fused = bool(optimizer.defaults.get("fused"))
    return {
        "optimizer": f"{type(optimizer).__name__}{' (fused)' if fused else ''}, the trainer's optim={name(optim)}, "
        f"gradients clipped at norm {max_grad_norm}, {name(schedule)} learning-rate schedule"
    }


def st_trainer_steps(model, loss, dataset, args, device, directory: Path) -> tuple[float, list[float], dict]:
    """(mean seconds of the timed steps, losses, optimizer settings) of ``SentenceTransformerTrainer.train()``: a
    callback synchronises the device at the end of the last warm-up step and of the last step, and reads the clock
    there (the losses are read after training)."""
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from transformers import TrainerCallback

    sync = synchronise(device)

    class StepTimer(TrainerCallback):
        def __init__(self) -> None:
            self.started = self.stopped = 0.0
            self.logged: list[torch.Tensor] = []

        def on_step_end(self, args_, state, control, **kwargs):
            self.logged.append(loss.last_loss)
            if state.global_step in (args.warmup, args.warmup + args.steps):
                sync()
                now = time.perf_counter()
                self.started, self.stopped = (now, now) if state.global_step == args.warmup else (self.started, now)

    training_args = SentenceTransformerTrainingArguments(
        output_dir=str(directory / "trainer"),
        max_steps=args.warmup + args.steps,
        per_device_train_batch_size=args.batch,
        learning_rate=LEARNING_RATE,
        fp16=args.precision == "fp16",
        bf16=args.precision == "bf16",
        use_cpu=device.type == "cpu",
        save_strategy="no",
        eval_strategy="no",
        logging_strategy="no",
        report_to=[],
        disable_tqdm=True,
        dataloader_drop_last=True,
        seed=SEED,
    )
    timer = StepTimer()
    trainer = SentenceTransformerTrainer(
        model=model, args=training_args, train_dataset=dataset, loss=loss, callbacks=[timer]
    )
    if args.warmup == 0:  # the window starts with training
        sync()
        timer.started = time.perf_counter()
    trainer.train()
    optimizer = getattr(trainer.optimizer, "optimizer", trainer.optimizer)  # accelerate wraps it
    settings = optimizer_settings(
        optimizer, training_args.optim, training_args.max_grad_norm, training_args.lr_scheduler_type
    )
    losses = torch.stack(timer.logged).double().cpu().tolist()
    return (timer.stopped - timer.started) / args.steps, losses, settings


def st_inner_steps(model, loss, dataset, args, device) -> tuple[float, list[float], dict]:
    """(mean seconds of the timed steps, losses, optimizer settings) of the trainer's inner step, written out from
    sentence-transformers' and transformers' source for a single process: the DataLoader over the dataset with the
    trainer's data collator (``model.preprocess``), inputs moved to the device, ``BaseTrainer.collect_features``
    (one feature dict per column), the loss under autocast, backward through the gradient scaler, unscale and clip
    to ``max_grad_norm``, the optimizer step, the learning-rate schedule, zero_grad. Optimizer, clipping and
    schedule are the defaults of ``SentenceTransformerTrainingArguments``. One difference: accelerate autocasts the
    model's forward and hands the loss float32 embeddings, while here the loss's (B, B) similarity product runs
    under autocast too."""
    from sentence_transformers import SentenceTransformerTrainingArguments
    from sentence_transformers.base.trainer import BaseTrainer
    from sentence_transformers.sentence_transformer.data_collator import SentenceTransformerDataCollator
    from torch.utils.data import DataLoader
    from transformers import get_scheduler

    defaults = {field.name: field.default for field in dataclasses.fields(SentenceTransformerTrainingArguments)}
    if defaults["optim"] not in ("adamw_torch", "adamw_torch_fused"):
        raise RuntimeError(f"the trainer's default optimizer is now {defaults['optim']!r}; write its step out here")
    total = args.warmup + args.steps
    optimizer = torch.optim.AdamW(
        model.parameters(),
        lr=LEARNING_RATE,
        betas=(defaults["adam_beta1"], defaults["adam_beta2"]),
        eps=defaults["adam_epsilon"],
        weight_decay=defaults["weight_decay"],
        fused=defaults["optim"] == "adamw_torch_fused",
    )
    schedule = get_scheduler(defaults["lr_scheduler_type"], optimizer, num_warmup_steps=0, num_training_steps=total)
    scaler = amp.grad_scaler(args.precision, device)
    collator = SentenceTransformerDataCollator(preprocess_fn=model.preprocess)
    loader = DataLoader(
        dataset, batch_size=args.batch, drop_last=True, collate_fn=collator, pin_memory=device.type == "cuda"
    )
    batches = iter(loader)
    logged: list[torch.Tensor] = []
    model.train()

    def step(_: int) -> None:
        inputs = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in next(batches).items()}
        features, labels = BaseTrainer.collect_features(None, inputs)  # the trainer's split; it reads nothing of self
        with amp.autocast(args.precision, device):
            value = loss(features, labels)
        if scaler:
            scaler.scale(value).backward()
            scaler.unscale_(optimizer)
        else:
            value.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), defaults["max_grad_norm"])
        if scaler:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        logged.append(value.detach())

    seconds = timed_window(step, args.warmup, args.steps, device)
    settings = optimizer_settings(
        optimizer, defaults["optim"], defaults["max_grad_norm"], defaults["lr_scheduler_type"]
    )
    return seconds, torch.stack(logged).double().cpu().tolist(), settings


def st_loop(choice: str) -> str:
    if choice != "auto":
        return choice
    return "trainer" if importlib.util.find_spec("accelerate") is not None else "inner-step"


def run_sentence_transformers(args, device: torch.device) -> dict:
    from datasets import Dataset
    from transformers import AutoTokenizer

    loop = st_loop(args.st_loop)
    tokenizer = AutoTokenizer.from_pretrained(minilm_dir())
    texts = rows_for("sentences", args.batch * (args.warmup + args.steps), tokenizer, random.Random(SEED))
    dataset = Dataset.from_dict({"anchor": texts, "positive": texts})
    with tempfile.TemporaryDirectory() as tmp:
        model = st_model(args, device, Path(tmp))
        loss = recording_loss(model)
        bert = model[0].auto_model
        watched = bert.encoder.layer[0].attention.self.query.weight
        before = watched.detach().clone()
        reset_peak_memory(device)
        if loop == "trainer":
            seconds, losses, settings = st_trainer_steps(model, loss, dataset, args, device, Path(tmp))
        else:
            seconds, losses, settings = st_inner_steps(model, loss, dataset, args, device)
        update = float((watched.detach() - before).norm())
    if len(losses) != args.warmup + args.steps:
        raise RuntimeError(f"{len(losses)} steps ran, {args.warmup + args.steps} asked for")
    sequences = 2 * args.batch
    tokens = padded_length(tokenizer, texts[: args.batch], args.max_len)
    return {
        "implementation": "sentence-transformers",
        "run": "MultipleNegativesRankingLoss on (s, s) pairs",
        "loss": f"MultipleNegativesRankingLoss(scale={SIMCSE_SCALE}, similarity_fct=cos_sim)",
        "pooler": "Pooling(pooling_mode='cls')",
        "loop": "SentenceTransformerTrainer.train" if loop == "trainer" else "the trainer's inner step, written out",
        **settings,
        "batch": args.batch,
        "sequences_per_step": sequences,
        "tokens_per_sequence": tokens,
        **step_summary(
            seconds, args.batch, sequences, flops_per_step(sequences, tokens, bert), device, args.peak_tflops, losses
        ),
        "weight_update_norm": update,
    }


# -- one process per variant ----------------------------------------------------------------------------------------
def run_variant(variant: str, args) -> dict:
    device = torch.device(args.device)
    amp.check(args.precision, device)
    torch.manual_seed(SEED)
    kind, _, bf16 = parse_variant(variant)
    result = run_sentence_transformers(args, device) if variant == "st_unsup" else run_archive(variant, args, device)
    return {
        "variant": variant,
        "model_size": args.model_size,
        "max_len": args.declutr_max_span + 2 if kind == "declutr" else args.max_len,
        "precision": "bf16" if bf16 else args.precision,
        "warmup_steps": args.warmup,
        "timed_steps": args.steps,
        **result,
    }


CHILD_OPTIONS = (
    "model_size",
    "batch",
    "sup_batch",
    "max_len",
    "declutr_batch",
    "declutr_max_span",
    "encode_sentences",
    "precision",
    "warmup",
    "steps",
    "device",
    "peak_tflops",
    "st_loop",
)


def child_command(variant: str, args, output: Path) -> list[str]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", variant, "--child-output", str(output)]
    for option in CHILD_OPTIONS:
        command += [f"--{option.replace('_', '-')}", str(getattr(args, option))]
    return command


def headline(result: dict) -> str:
    if "ms_per_step" in result:
        return f"{result['ms_per_step']:.1f} ms/step"
    return f"{result['ms_per_1000_sentences']:.1f} ms/1000 sentences"


def comparisons(results: dict) -> dict:
    """Each archive variant with speed-ups against its kind's plain step (plain ms / variant ms: above 1 is faster),
    and the unsupervised step before and after against sentence-transformers' (archive ms / theirs)."""
    cost = lambda r: r.get("ms_per_step", r.get("ms_per_1000_sentences"))  # noqa: E731
    out: dict = {"speedup_over_plain": {}}
    for name, result in results.items():
        plain = results.get(name.split("+")[0], {})
        if "+" in name and cost(result) and cost(plain):
            out["speedup_over_plain"][name] = round(cost(plain) / cost(result), 3)
    st = results.get("st_unsup", {}).get("ms_per_step")
    for name in ("archive_unsup", "archive_unsup+all", "archive_unsup+all+bf16"):
        mine = results.get(name, {}).get("ms_per_step")
        if st and mine:
            out[f"{name}_over_st_unsup_ms"] = round(mine / st, 3)
    return out


def summary_of(args, results: dict) -> dict:
    from sentemb.runs.provenance import collect, package_versions

    provenance = collect(torch.device(args.device))
    settings = {key: getattr(args, key) for key in CHILD_OPTIONS if key not in ("device", "peak_tflops", "st_loop")}
    out = {
        "device": provenance["device"],
        "torch_threads": provenance["torch_threads"],
        "commit": provenance["commit"],
        "python": provenance["python"],
        "packages": package_versions(PACKAGES),
        "settings": {**settings, "st_loop": args.st_loop, "budget_s": args.budget_s},
        "peak_tflops": args.peak_tflops,
        "variants": results,
    }
    return {**out, **comparisons(results)}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-size", choices=tuple(SHAPES), default="base")
    parser.add_argument("--batch", type=int, default=64, help="unsup. and SimCSE++ rows per step")
    parser.add_argument("--sup-batch", type=int, default=512, help="supervised SimCSE's NLI triples per step")
    parser.add_argument("--max-len", type=int, default=32, help="the sentence kinds' maximum length")
    parser.add_argument("--declutr-batch", type=int, default=16, help="DeCLUTR's documents per step")
    parser.add_argument("--declutr-max-span", type=int, default=512, help="DeCLUTR's longest span (l_max)")
    parser.add_argument("--encode-sentences", type=int, default=3000, help="archive_encode's sentences (STS-B dev)")
    parser.add_argument("--precision", choices=amp.PRECISIONS, default=None, help="default: fp16 on CUDA, fp32 on CPU")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    parser.add_argument("--steps", type=int, default=20, help="timed steps in a row (their mean is reported)")
    parser.add_argument(
        "--variants",
        nargs="+",
        default=list(DEFAULT_VARIANTS),
        help="st_unsup, or archive_<kind>[+modifier...] (see above; default: %(default)s)",
    )
    parser.add_argument(
        "--budget-s", type=float, default=0, help="do not start a variant after this many seconds (0: no limit)"
    )
    parser.add_argument("--peak-tflops", type=float, default=989.0, help="the GPU's dense peak at this precision")
    parser.add_argument(
        "--st-loop",
        choices=("auto", "trainer", "inner-step"),
        default="auto",
        help="sentence-transformers' loop: its trainer, or the trainer's inner step written out (auto: the trainer "
        "when accelerate is installed)",
    )
    parser.add_argument("--device", default=None, help="default: cuda when available, else cpu")
    parser.add_argument("--output", default=None, help="JSON summary (default: stdout only)")
    parser.add_argument(
        "--same-process",
        action="store_true",
        help="run every variant in this process (a quick check of the code paths; timings need one process each)",
    )
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-output", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.device is None:
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.precision is None:
        args.precision = "fp16" if torch.device(args.device).type == "cuda" else "fp32"
    if args.steps < 1 or args.warmup < 0:
        parser.error("--steps must be at least 1 and --warmup at least 0")
    for variant in [*args.variants, *([args.child] if args.child else [])]:
        try:
            parse_variant(variant)
        except ValueError as exc:
            parser.error(str(exc))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        Path(args.child_output).write_text(json.dumps(run_variant(args.child, args), indent=1) + "\n")
        return 0
    results = {}
    if args.same_process:  # the CPU smoke test: every variant in this process, one interpreter start instead of five
        results = {variant: run_variant(variant, args) for variant in args.variants}
        emit(summary_of(args, results), args.output)
        return 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for index, variant in enumerate(args.variants):
            if args.budget_s and time.perf_counter() - started > args.budget_s:
                results[variant] = {"variant": variant, "not_run": f"the {args.budget_s:.0f} s budget was spent"}
                print(f"{variant}: not run (budget spent)", file=sys.stderr, flush=True)
                continue
            output = Path(tmp) / f"variant{index}.json"
            done = subprocess.run(child_command(variant, args, output), capture_output=True, text=True)
            if done.returncode == 0:
                results[variant] = json.loads(output.read_text())
                print(f"{variant}: {headline(results[variant])}", file=sys.stderr, flush=True)
            else:
                sys.stderr.write(done.stdout + done.stderr)
                results[variant] = {"variant": variant, "error": f"exit {done.returncode}: {done.stderr[-2000:]}"}
                print(f"{variant}: FAILED (exit {done.returncode})", file=sys.stderr, flush=True)
    emit(summary_of(args, results), args.output)
    return 0 if all("error" not in result for result in results.values()) else 1  # not run for the budget: 0


if __name__ == "__main__":
    sys.exit(main())
