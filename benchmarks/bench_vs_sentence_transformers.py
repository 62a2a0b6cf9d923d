"""The archive's SimCSE training steps against sentence-transformers' own trainer for the same unsupervised step, side
by side on one device, each in a fresh Python process; rerun it, it is not a test. No network and no mirror: the
backbone is a BERT of random weights built from a config (a step costs the same with trained weights), the rows are
generated text of about ``--max-len`` word pieces, the tokenizer is all-MiniLM-L6-v2's (BERT's uncased vocabulary).

    python benchmarks/bench_vs_sentence_transformers.py --output benchmarks/results/vs_sentence_transformers_h100.json
    python benchmarks/bench_vs_sentence_transformers.py --model-size tiny --batch 4 --max-len 16 --steps 2  # CPU check

Variants (``--variants``, all by default), each the full profile's spec of that run (papers/*/experiments.py):
- ``archive_unsup``: SimCSE's ``unsup`` (``simcse_unsup``, [CLS] before the pooler, two dropout views) through
  :class:`~sentemb.models.encoder.SentenceEncoder`, stepped as ``bench_gpu_full_steps.time_steps`` steps every
  configuration of the GPU plan: autocast and the gradient scaler of ``sentemb.precision``, AdamW (lr 3e-5).
- ``st_unsup``: the same step the sentence-transformers way: ``SentenceTransformer`` of a ``Transformer`` module (the
  same seeded weights, saved with MiniLM's tokenizer files) and CLS ``Pooling``, ``MultipleNegativesRankingLoss``
  (scale 20 = 1/0.05, cosine) on a ``datasets.Dataset`` of pairs (anchor = positive = s): unsupervised SimCSE.
  Trained by ``SentenceTransformerTrainer`` with its defaults (fused AdamW, gradient clipping at 1.0, linear
  schedule; fp16/bf16 through the training arguments; no saving, logging, evaluation or reporting), timed by a
  callback between consecutive step ends (batch fetch and tokenisation included, as in the archive's step).
  Without ``accelerate`` (the trainer needs it) the trainer's inner step is run instead, written out from its
  source: its DataLoader and data collator, the loss, backward with the scaler, unscale and clip, the optimizer and
  schedule its default arguments name, zero_grad (``--st-loop``; the summary says which ran).
- ``archive_sup``: SimCSE's ``sup`` (``simcse_sup``, batch ``--sup-batch``, NLI triples: 3 sequences a row).
- ``archive_simcsepp``: SimCSE++'s headline ``simcse_pp`` (off-dropout negatives, a third encoder pass with dropout
  off and gradients kept, m 0.9; DCL lambda 0.1, tau_DCL 5).

Reported per variant: ms per step (the median of ``--steps`` steps after ``--warmup`` untimed ones), sentences per
second (training rows: wiki sentences or NLI triples), sequences per second (encoder inputs), peak memory
(``torch.cuda.max_memory_allocated``; null on a CPU), the first and last step's loss, and on CUDA the model FLOP
utilisation against ``--peak-tflops`` (989: H100 SXM dense fp16/bf16; give the peak of the precision and GPU run):
    FLOPs per step = S * (6 * N * T + 12 * layers * T^2 * hidden)
with S the sequences a step encodes (forward and backward each), T the padded length of a sequence (the longest of
the step's sentences, at most ``--max-len``), N the parameters of the transformer layers (embeddings and pooler
excluded); 6 N T for the matrix products, 12 layers T^2 hidden for the attention scores and their weighted sum.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import torch
from bench_gpu_full_steps import rows_for, time_steps  # this folder is on sys.path when run as a script
from benchmark_io import emit

from sentemb import precision as amp
from sentemb.models.backbone import minilm_dir

VARIANTS = ("archive_unsup", "st_unsup", "archive_sup", "archive_simcsepp")
ARCHIVE_RUNS = {  # variant -> (paper, run name) of the full grid whose step it times
    "archive_unsup": ("simcse", "unsup"),
    "archive_sup": ("simcse", "sup"),
    "archive_simcsepp": ("simcse_pp", "simcse_pp"),
}
SHAPES = {
    "base": {"num_hidden_layers": 12, "hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072},
    "tiny": {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 128},
}
VOCAB_SIZE = 30522  # BERT's uncased word pieces, all-MiniLM-L6-v2's tokenizer
LEARNING_RATE = 3e-5  # time_steps' AdamW; a step costs the same at any rate
SIMCSE_SCALE = 20.0  # 1 / temperature 0.05
SEED = 0
PACKAGES = ("torch", "transformers", "sentence-transformers", "datasets", "accelerate")


# -- what both sides share ----------------------------------------------------------------------------------------
def random_bert(model_size: str):
    """The seeded BERT of random weights both sides start from."""
    from transformers import BertConfig, BertModel

    torch.manual_seed(SEED)
    return BertModel(BertConfig(vocab_size=VOCAB_SIZE, **SHAPES[model_size]))


def sentences(rows: list) -> list[str]:
    return [text for row in rows for text in ((row,) if isinstance(row, str) else row)]


def padded_length(tokenizer, rows: list, max_len: int) -> int:
    """The length a step's batch is padded to: its longest sentence in word pieces, at most ``max_len``."""
    return min(max_len, max(len(ids) for ids in tokenizer(sentences(rows))["input_ids"]))


def layer_parameters(bert) -> int:
    return sum(p.numel() for p in bert.encoder.parameters())


def flops_per_step(sequences: int, tokens: int, bert) -> float:
    config = bert.config
    matmuls = 6 * layer_parameters(bert) * tokens
    attention = 12 * config.num_hidden_layers * tokens**2 * config.hidden_size
    return float(sequences * (matmuls + attention))


def synchronise(device: torch.device):
    return torch.cuda.synchronize if device.type == "cuda" else (lambda: None)


def reset_peak_memory(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def peak_memory_mib(device: torch.device) -> float | None:
    return round(torch.cuda.max_memory_allocated(device) / 2**20, 1) if device.type == "cuda" else None


def step_summary(
    seconds: float, batch: int, sequences: int, tokens: int, bert, device, peak_tflops: float, losses: list[float]
) -> dict:
    flops = flops_per_step(sequences, tokens, bert)
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


# -- the archive ----------------------------------------------------------------------------------------------------
def run_archive(variant: str, args, device: torch.device) -> dict:
    from transformers import AutoTokenizer

    from papers.simcse.experiments import paper_grid as simcse_grid
    from papers.simcse_pp.experiments import paper_grid as simcse_pp_grid
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.objectives import registry

    paper, run = ARCHIVE_RUNS[variant]
    spec = {"simcse": simcse_grid, "simcse_pp": simcse_pp_grid}[paper]()[run]
    batch = args.sup_batch if variant == "archive_sup" else args.batch
    tokenizer = AutoTokenizer.from_pretrained(minilm_dir())
    bert = random_bert(args.model_size)
    encoder = SentenceEncoder(bert, tokenizer, spec.pooler, f"random BERT ({args.model_size})").to(device)
    objective = (
        registry.build_objective(spec.objective, spec.objective_params, [encoder], args.max_len).to(device).train()
    )
    rows = objective.select_rows(rows_for(objective.rows, batch, tokenizer, random.Random(SEED)))
    sequences = batch * objective.sequences_per_row
    tokens = padded_length(tokenizer, rows, args.max_len)
    watched = bert.encoder.layer[0].attention.self.query.weight
    before = watched.detach().clone()
    losses: list[float] = []
    reset_peak_memory(device)
    seconds = time_steps(objective, rows, args.precision, args.steps, device, args.warmup, losses=losses)
    return {
        "implementation": "sentemb",
        "run": f"{paper}/{run}",
        "objective": spec.objective,
        "objective_params": spec.objective_params,
        "pooler": spec.pooler,
        "loop": "bench_gpu_full_steps.time_steps",
        "optimizer": "AdamW (torch's defaults: foreach on CUDA), no gradient clipping, constant learning rate",
        "batch": batch,
        "sequences_per_step": sequences,
        "tokens_per_sequence": tokens,
        **step_summary(seconds, batch, sequences, tokens, bert, device, args.peak_tflops, losses),
        "weight_update_norm": float((watched.detach() - before).norm()),
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


def st_trainer_steps(model, loss, dataset, args, device, directory: Path) -> tuple[list[float], list[float], dict]:
    """(seconds, loss) of every step of ``SentenceTransformerTrainer.train()``: the time between consecutive step ends
    (the first from the start of training), read by a callback after synchronising the device."""
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from transformers import TrainerCallback

    sync = synchronise(device)

    class StepTimer(TrainerCallback):
        def __init__(self) -> None:
            self.seconds: list[float] = []
            self.losses: list[float] = []
            self.last = 0.0

        def on_train_begin(self, args, state, control, **kwargs):
            sync()
            self.last = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            sync()
            now = time.perf_counter()
            self.seconds.append(now - self.last)
            self.last = now
            self.losses.append(loss.last_loss.item())

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
    trainer.train()
    optimizer = getattr(trainer.optimizer, "optimizer", trainer.optimizer)  # accelerate wraps it
    settings = optimizer_settings(
        optimizer, training_args.optim, training_args.max_grad_norm, training_args.lr_scheduler_type
    )
    return timer.seconds, timer.losses, settings


def st_inner_steps(model, loss, dataset, args, device) -> tuple[list[float], list[float], dict]:
    """(seconds, loss) of every step of the trainer's inner step, written out from sentence-transformers' and
    transformers' source for a single process: the DataLoader over the dataset with the trainer's data collator
    (``model.preprocess``), inputs moved to the device, ``BaseTrainer.collect_features`` (one feature dict per
    column), the loss under autocast, backward through the gradient scaler, unscale and clip to ``max_grad_norm``,
    the optimizer step, the learning-rate schedule, zero_grad. Optimizer, clipping and schedule are the defaults of
    ``SentenceTransformerTrainingArguments``. One difference: accelerate autocasts the model's forward and hands the
    loss float32 embeddings, while here the loss's (B, B) similarity product runs under autocast too."""
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
    sync = synchronise(device)
    seconds, losses = [], []
    model.train()
    for _ in range(total):
        sync()
        tick = time.perf_counter()
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
        sync()
        seconds.append(time.perf_counter() - tick)
        losses.append(value.item())
    settings = optimizer_settings(
        optimizer, defaults["optim"], defaults["max_grad_norm"], defaults["lr_scheduler_type"]
    )
    return seconds, losses, settings


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
    if len(seconds) != args.warmup + args.steps:
        raise RuntimeError(f"{len(seconds)} steps ran, {args.warmup + args.steps} asked for")
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
            statistics.median(seconds[args.warmup :]),
            args.batch,
            sequences,
            tokens,
            bert,
            device,
            args.peak_tflops,
            losses,
        ),
        "weight_update_norm": update,
    }


# -- one process per variant ----------------------------------------------------------------------------------------
def run_variant(variant: str, args) -> dict:
    device = torch.device(args.device)
    amp.check(args.precision, device)
    torch.manual_seed(SEED)
    result = run_sentence_transformers(args, device) if variant == "st_unsup" else run_archive(variant, args, device)
    return {
        "variant": variant,
        "model_size": args.model_size,
        "max_len": args.max_len,
        "precision": args.precision,
        "warmup_steps": args.warmup,
        "timed_steps": args.steps,
        **result,
    }


def child_command(variant: str, args, output: Path) -> list[str]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", variant, "--child-output", str(output)]
    for option in ("model_size", "batch", "sup_batch", "max_len", "precision", "warmup", "steps", "device"):
        command += [f"--{option.replace('_', '-')}", str(getattr(args, option))]
    return command + ["--peak-tflops", str(args.peak_tflops), "--st-loop", args.st_loop]


def versions() -> dict:
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def summary_of(args, results: dict) -> dict:
    from sentemb.runs.provenance import collect

    provenance = collect(torch.device(args.device))
    settings = {key: getattr(args, key) for key in ("model_size", "batch", "sup_batch", "max_len", "precision")}
    out = {
        "device": provenance["device"],
        "torch_threads": provenance["torch_threads"],
        "commit": provenance["commit"],
        "python": provenance["python"],
        "packages": versions(),
        "settings": {**settings, "warmup_steps": args.warmup, "timed_steps": args.steps, "st_loop": args.st_loop},
        "peak_tflops": args.peak_tflops,
        "variants": results,
    }
    archive, st = results.get("archive_unsup", {}), results.get("st_unsup", {})
    if "ms_per_step" in archive and "ms_per_step" in st:
        out["archive_unsup_over_st_unsup_ms"] = round(archive["ms_per_step"] / st["ms_per_step"], 3)
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-size", choices=tuple(SHAPES), default="base")
    parser.add_argument("--batch", type=int, default=64, help="unsup. and SimCSE++ rows per step")
    parser.add_argument("--sup-batch", type=int, default=512, help="supervised SimCSE's NLI triples per step")
    parser.add_argument("--max-len", type=int, default=32)
    parser.add_argument("--precision", choices=amp.PRECISIONS, default=None, help="default: fp16 on CUDA, fp32 on CPU")
    parser.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    parser.add_argument("--steps", type=int, default=20, help="timed steps (their median is reported)")
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
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
    parser.add_argument("--child", choices=VARIANTS, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-output", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.device is None:
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.precision is None:
        args.precision = "fp16" if torch.device(args.device).type == "cuda" else "fp32"
    if args.steps < 1 or args.warmup < 0:
        parser.error("--steps must be at least 1 and --warmup at least 0")
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
    with tempfile.TemporaryDirectory() as tmp:
        for variant in args.variants:
            output = Path(tmp) / f"{variant}.json"
            done = subprocess.run(child_command(variant, args, output), capture_output=True, text=True)
            if done.returncode == 0:
                results[variant] = json.loads(output.read_text())
                print(f"{variant}: {results[variant]['ms_per_step']:.1f} ms/step", file=sys.stderr, flush=True)
            else:
                sys.stderr.write(done.stdout + done.stderr)
                results[variant] = {"variant": variant, "error": f"exit {done.returncode}: {done.stderr[-2000:]}"}
                print(f"{variant}: FAILED (exit {done.returncode})", file=sys.stderr, flush=True)
    emit(summary_of(args, results), args.output)
    return 0 if all("error" not in result for result in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
