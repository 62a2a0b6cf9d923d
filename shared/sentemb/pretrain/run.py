"""The pretraining loop (:func:`pretrain`), read it top to bottom.

AdamW (weight decay on the matrices, not on biases and LayerNorm) with linear warm-up and decay, gradient clipping at 1,
the settings' precision (bf16 autocast by default, on a GPU and on a CPU with native bf16 instructions; the MLM head and
the loss in fp32 always), through the training loop's :class:`~sentemb.train.loop.Optimization`. Each step takes its
sequences from a seeded per-epoch permutation (:class:`~sentemb.train.resumable.EpochOrder`) and its masks from a
generator seeded by (seed, step); dropout draws from the torch generator, whose state is saved with
:func:`~sentemb.train.resumable.rng_state`. So ``state.pt`` (:class:`PretrainState`: model, optimizer, scheduler, random
states, step, curves), written at every evaluation, lets the same command continue an interrupted run to the same final
loss. Every ``eval_every`` steps (and at steps 0 and last) the held-out MLM loss on WikiText-2 valid, masked the same
way for every run, joins the curve; the weights of the evaluation with the lowest held-out loss are kept (the text is
small and seen many times: this is early stopping on text no paper evaluates on). At the end: ``model/`` (the kept
weights in bf16 safetensors, with :func:`~sentemb.pretrain.model.seeded_pooler`; config, with BERT's dropout whatever
pretraining used; tokenizer) and ``record.json`` (settings, text and sha256, counts, curves, the kept step, device,
versions, commit, wall time, the command), written last: a directory with a record is finished and never overwritten.

Across machines: ``carry`` (a folder in the repository, :mod:`sentemb.pretrain.carry`) receives the state whenever the
run stops before its end (``stop_after``, or the wall-clock ``deadline``, checked after every step: a run told to stop
at 06:50 saves and returns then, leaving time to commit), and a run whose cache has no ``state.pt`` continues from it.
``branch_from`` starts a run from another run's state (a milestone: a wsd run decayed from a longer run's step S,
:meth:`~sentemb.pretrain.configs.PretrainConfig.same_run_until`). The schedule: :mod:`sentemb.pretrain.schedule`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
import transformers

from sentemb import precision as amp
from sentemb import settings
from sentemb.atomic import atomic_write, atomic_write_text
from sentemb.data.files import sha256_of
from sentemb.errors import SentembError
from sentemb.models.backbone import MINILM, load_tokenizer
from sentemb.pretrain import carry as carried
from sentemb.pretrain import vocabulary
from sentemb.pretrain.configs import DROPOUT, PretrainConfig
from sentemb.pretrain.corpus import HELDOUT, TRAINING_FILES, Corpus, load_corpus
from sentemb.pretrain.model import build_model, collator, mask, masked_lm_loss, seeded_pooler, size_of
from sentemb.pretrain.schedule import Schedule
from sentemb.progress import progress
from sentemb.runs import provenance
from sentemb.train.loop import Optimization
from sentemb.train.resumable import EpochOrder, cpu_copy, rng_state, set_rng_state

HELDOUT_MASK_SEED = 20_240_048  # one masking of the held-out text for every run, so that their curves compare
GRAD_CLIP = 1.0


def output_dir(config: PretrainConfig, out: str | Path | None = None) -> Path:
    return Path(out) if out else settings.cache_root() / "pretrain" / config.run_id


def vocabulary_sha256(tokenizer) -> str:
    return hashlib.sha256(json.dumps(sorted(tokenizer.get_vocab().items())).encode()).hexdigest()


def optimization_for(
    model: transformers.BertForMaskedLM, config: PretrainConfig, device: torch.device, schedule: Schedule | None = None
) -> Optimization:
    """AdamW (weight decay on the matrices only; torch's fused kernel with ``fused_adamw``; betas (0.9,
    ``adam_beta2``)), the ``schedule``'s factor of the peak rate (default: the config's), clipping at 1, and the
    settings' precision on ``device``, as the training loop's :class:`Optimization`."""
    amp.check(config.precision, device)
    schedule = schedule or Schedule(config)
    no_decay = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n]
    decay = [p for n, p in model.named_parameters() if not (n.endswith("bias") or "LayerNorm" in n)]
    fused = {"fused": True} if config.fused_adamw else {}
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=config.lr,
        betas=(0.9, config.adam_beta2),
        **fused,
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: schedule(step))
    scaler = amp.grad_scaler(config.precision, device)
    return Optimization(list(model.parameters()), optimizer, scheduler, scaler, config.precision, device, GRAD_CLIP)


class HeldOut:
    """The held-out MLM loss (nats a masked token) of WikiText-2 valid's first sequences, masked once for every run
    at BERT's 15 % whatever the training rate (``collate``), and :attr:`unigram_loss`: what a model that ignores
    context scores on the same masked tokens, each predicted by its frequency in the training text (add-one
    smoothed). Losses of different vocabularies compare only through that floor (their tokens differ)."""

    def __init__(self, corpus: Corpus, collate, config: PretrainConfig, device: torch.device) -> None:
        self.inputs, self.labels = mask(collate, corpus.heldout[: config.heldout_sequences], HELDOUT_MASK_SEED, 0)
        self.batch_size, self.precision, self.device = config.batch_size, config.precision, device
        vocab_size = len(collate.tokenizer)
        counts = torch.bincount(corpus.train.reshape(-1).long(), minlength=vocab_size).double() + 1.0
        log_p = counts.log() - counts.sum().log()
        self.unigram_loss = float(-log_p[self.labels[self.labels != -100]].mean())

    def loss(self, model: transformers.BertForMaskedLM) -> float:
        model.eval()
        total, count = 0.0, 0
        with torch.no_grad(), amp.autocast(self.precision, self.device):
            for start in range(0, len(self.inputs), self.batch_size):
                x = self.inputs[start : start + self.batch_size].to(self.device)
                y = self.labels[start : start + self.batch_size].to(self.device)
                total += masked_lm_loss(model, x, y, reduction="sum").item()
                count += int((y != -100).sum())
        model.train()
        return total / count


@dataclass
class PretrainState:
    """Where a run is: its step, curves (train loss, held-out loss and the wall seconds at each evaluation), the
    losses since the last evaluation, the kept weights (lowest held-out loss) and the seconds before this process.
    Saved to ``state.pt`` with the model, the optimizer and the random states at every evaluation."""

    step: int
    curves: dict
    best: dict  # {"step", "loss", "weights": a CPU copy}
    window: list = field(default_factory=list)  # the step losses since the last evaluation (tensors or floats)
    elapsed_s: float = 0.0
    processes: list = field(default_factory=list)  # each process that trained: from_step, started_utc, commit, dirty

    @classmethod
    def fresh(cls, model: transformers.BertForMaskedLM, heldout_loss: float) -> PretrainState:
        curves = {"train": [], "heldout": [[0, heldout_loss]], "seconds": [[0, 0.0]]}
        return cls(0, curves, {"step": 0, "loss": heldout_loss, "weights": cpu_copy(model.state_dict())})

    @classmethod
    def load(
        cls,
        path: Path,
        config: PretrainConfig,
        model: transformers.BertForMaskedLM,
        optimization: Optimization,
        schedule: Schedule,
    ) -> PretrainState | None:
        """The state saved at ``path`` with the model, optimizer, schedule and random states restored; None when
        none is."""
        if not path.is_file():
            return None
        saved = torch.load(path, weights_only=False, map_location="cpu")
        if saved["config"] != config.as_dict():
            raise SentembError(f"{path} belongs to other settings ({saved['config']}); use another --out")
        model.load_state_dict(saved["model"])
        optimization.load_state_dict(saved)
        set_rng_state(saved["rng"], optimization.device)
        if "schedule" in saved:  # a state saved before the schedule had one: linear, nothing to restore
            schedule.load(saved["schedule"])
        processes = saved.get("processes", [])  # a state saved before processes were kept: unknown
        return cls(saved["step"], saved["curves"], saved["best"], saved["window"], saved["elapsed_s"], processes)

    @classmethod
    def carried(
        cls, directory: Path, config_dict: dict, model, optimization: Optimization, schedule: Schedule
    ) -> PretrainState:
        """The state carried in ``directory`` (:mod:`sentemb.pretrain.carry`), restored into the model and optimizer."""
        meta = carried.load(directory, config_dict, model, optimization, schedule)
        return cls(meta["step"], meta["curves"], meta["best"], meta["window"], meta["elapsed_s"], meta["processes"])

    def seconds(self, started: float) -> float:
        return self.elapsed_s + time.perf_counter() - started

    def evaluated(self, model: transformers.BertForMaskedLM, heldout_loss: float, started: float) -> None:
        """Log the train loss since the last evaluation and the held-out loss; keep the weights if it is the lowest."""
        self.curves["train"].append([self.step, sum(float(w) for w in self.window) / len(self.window)])
        self.curves["heldout"].append([self.step, heldout_loss])
        self.curves["seconds"].append([self.step, self.seconds(started)])
        if heldout_loss < self.best["loss"]:
            self.best = {"step": self.step, "loss": heldout_loss, "weights": cpu_copy(model.state_dict())}
        self.window = []

    def save(
        self,
        path: Path,
        config: PretrainConfig,
        model: transformers.BertForMaskedLM,
        optimization: Optimization,
        started: float,
        schedule: Schedule,
    ) -> None:
        saved = {
            "config": config.as_dict(),
            "model": model.state_dict(),
            **optimization.state_dict(),
            "rng": rng_state(optimization.device),
            "step": self.step,
            "curves": self.curves,
            "best": self.best,
            "window": [float(w) for w in self.window],
            "elapsed_s": self.seconds(started),
            "processes": self.processes,
            "schedule": schedule.state(),
        }
        atomic_write(path, lambda tmp: torch.save(saved, tmp))


def save_checkpoint(model, weights: dict[str, torch.Tensor], seed: int, directory: Path) -> None:
    """``weights`` (the kept ones) into ``model``, saved in bf16 safetensors with a seeded pooler, and the config
    with BERT's dropout (what fine-tuning uses). The tied decoder is stored once (transformers drops the copy). Ends
    the model's use: it is left in bf16."""
    model.load_state_dict(weights)
    model.config.hidden_dropout_prob = model.config.attention_probs_dropout_prob = DROPOUT
    model.to("cpu", torch.bfloat16)
    state = dict(model.state_dict())
    state.update({k: v.to(torch.bfloat16) for k, v in seeded_pooler(model.config, seed).items()})
    model.save_pretrained(directory, state_dict=state)


@dataclass(frozen=True)
class Setup:
    """What a run trains on and where it writes: its settings, directory, device, tokenizer and text."""

    config: PretrainConfig
    directory: Path
    out: str | Path | None
    device: torch.device
    tokenizer: transformers.PreTrainedTokenizerBase
    tokenizer_source: str
    corpus: Corpus


def pretrain(
    config: PretrainConfig,
    out: str | Path | None = None,
    device: torch.device | None = None,
    stop_after: int | None = None,
    tokenizer_source: str = MINILM,
    deadline: float | None = None,
    carry: Path | None = None,
    carry_mode: str = "exact",
    branch_from: Path | None = None,
) -> dict | None:
    """Train (or continue) the run ``config`` in ``out``; its record, or None when it stopped before its end (at step
    ``stop_after``, or by ``deadline``, a ``time.time()``: :func:`_late`), leaving ``state.pt`` and the ``carry``.
    ``tokenizer_source``: MiniLM's vocabulary read from there; ``branch_from``: see :func:`branch`."""
    directory = output_dir(config, out)
    if (directory / "record.json").exists():
        raise SentembError(
            f"{directory} holds a finished pretraining run (record.json); it is never overwritten.\n"
            "  Fix: choose another --out, or delete that directory first."
        )
    device = device or torch.device("cuda" if torch.cuda.is_available() else "cpu")
    setup = _setup(config, directory, out, device, tokenizer_source)
    tokenizer, corpus = setup.tokenizer, setup.corpus
    model = build_model(config.size, len(tokenizer), config.seed, config.dropout, config.attention).to(device)
    schedule = Schedule(config)
    optimization = optimization_for(model, config, device, schedule)
    collate = collator(tokenizer, config.mask_rate)
    order = EpochOrder(len(corpus.train), config.batch_size, config.seed)
    heldout = HeldOut(corpus, collator(tokenizer), config, device)

    state_file = directory / "state.pt"
    state, branched, resumed = _starting_state(state_file, carry, branch_from, config, model, optimization, schedule)
    if state is None:
        torch.manual_seed(config.seed)
        state = PretrainState.fresh(model, heldout.loss(model))
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    state.processes.append(
        {"from_step": state.step, "started_utc": now, "resumed_from": resumed, **provenance.code_version()}
    )

    started, first_step = time.perf_counter(), state.step
    model.train()
    bar = progress(total=schedule.total, initial=state.step, desc=f"pretrain {config.size}")
    while not schedule.finished(state.step):
        state.step += 1
        rows = torch.from_numpy(order.indices(state.step - 1))
        inputs, labels = mask(collate, corpus.train[rows], config.seed, state.step)
        with optimization.autocast():
            loss = masked_lm_loss(model, inputs.to(device), labels.to(device))
        optimization.step(loss)
        state.window.append(loss.detach())  # read at the next evaluation: no wait for the device inside a step
        bar.update(1)
        schedule.observe(state.step, state.seconds(started))
        bar.total = schedule.total
        evaluated = state.step % config.eval_every == 0 or schedule.finished(state.step)
        if evaluated:
            state.evaluated(model, heldout.loss(model), started)
            train_loss, heldout_loss = state.curves["train"][-1][1], state.curves["heldout"][-1][1]
            bar.set_postfix(train=f"{train_loss:.3f}", heldout=f"{heldout_loss:.3f}")
            state.save(state_file, config, model, optimization, started, schedule)
        late = _late(deadline, (time.perf_counter() - started) / (state.step - first_step), config, evaluated)
        if not schedule.finished(state.step) and (state.step == stop_after or late):
            bar.close()
            state.save(state_file, config, model, optimization, started, schedule)
            _carry(carry, carry_mode, config, model, optimization, state, schedule, state.seconds(started))
            print(f"[pretrain] stopped at step {state.step}; the same command continues the run")
            return None
    bar.close()

    record = finish(setup, state, model, state.seconds(started), heldout, schedule, branched)
    atomic_write_text(directory / "record.json", json.dumps(record, indent=1) + "\n")
    state_file.unlink(missing_ok=True)
    carried.remove(carry)
    return record


def _late(deadline: float | None, per_step: float, config: PretrainConfig, evaluated: bool) -> bool:
    """Whether to stop for the deadline now: at the last evaluation whose next one would end after it (the kept
    weights are then the current ones, and the carried state holds them once), or at the deadline itself."""
    return deadline is not None and time.time() + (per_step * config.eval_every if evaluated else 0) >= deadline


def _carry(
    carry: Path | None, mode: str, config: PretrainConfig, model, optimization, state, schedule, seconds
) -> None:
    if carry is not None:
        size = carried.save(carry, mode, config.as_dict(), model, optimization, state, schedule, seconds)
        print(f"[pretrain] carried the state at step {state.step} into {carry} ({size / 1e6:.1f} MB, {mode})")


def _setup(config: PretrainConfig, directory: Path, out, device: torch.device, tokenizer_source: str) -> Setup:
    """The run's tokenizer (MiniLM's, read from ``tokenizer_source``, or a committed WordPiece) and packed text."""
    if config.vocab == vocabulary.MINILM_VOCAB:
        tokenizer = load_tokenizer(tokenizer_source)
    else:
        tokenizer, tokenizer_source = vocabulary.load(config.vocab), f"vocabulary {config.vocab}"
    corpus = load_corpus(tokenizer, config.max_len)
    return Setup(config, directory, out, device, tokenizer, tokenizer_source, corpus)


def _starting_state(
    state_file: Path,
    carry: Path | None,
    branch_from: Path | None,
    config: PretrainConfig,
    model,
    optimization: Optimization,
    schedule: Schedule,
) -> tuple[PretrainState | None, dict | None, str]:
    """Where the run starts: this cache's ``state.pt``, the carried state when it is further on (or the cache has
    none: a fresh machine), a branch of another run's state, or nothing (a fresh start); with the branch's source
    and the words for the process record."""
    state = PretrainState.load(state_file, config, model, optimization, schedule)
    branched, resumed = None, "state.pt" if state is not None else "start"
    if state is not None and carried.exists(carry) and carried.step_of(carry) > state.step:
        print(f"[pretrain] the carried state in {carry} is further on than {state_file}: continuing from it")
        state = None  # another machine took the run further: its carried state wins over this cache's
    if state is None and carried.exists(carry):
        state = PretrainState.carried(carry, config.as_dict(), model, optimization, schedule)
        resumed = f"carried state ({carried.mode_of(carry)})"
        print(f"[pretrain] resuming from the carried state in {carry} at step {state.step} of {config.steps}")
    elif state is None and branch_from is not None:
        state, branched = branch(branch_from, config, model, optimization, schedule)
        resumed = f"branch of {branched['run_id']}"
        print(f"[pretrain] starting from {branch_from}'s state at step {state.step}, decaying to step {config.steps}")
    elif state is not None:
        print(f"[pretrain] resuming {state_file.parent} at step {state.step} of {config.steps}")
    return state, branched, resumed


def branch(
    source: Path, config: PretrainConfig, model, optimization: Optimization, schedule: Schedule
) -> tuple[PretrainState, dict]:
    """The state of another run (its run folder's ``state.pt`` or a carry folder) as this run's start: the source's
    settings must be this run's but the step budget, and the source must be at or before this run's decay start
    (the steps before it are then the same). Its moments, weights and step continue; the schedule is this run's."""
    from sentemb.pretrain.configs import PretrainConfig as Config

    source = Path(source)
    meta_file = source / carried.META
    if meta_file.is_file():
        source_config = json.loads(meta_file.read_text())["config"]
    elif (source / "state.pt").is_file():
        source_config = torch.load(source / "state.pt", weights_only=False, map_location="cpu")["config"]
    else:
        raise SentembError(f"--branch-from {source}: no carried state (state.json) and no state.pt there")
    parent = Config(**{**Config().as_dict(), **_legacy_filled(source_config)})
    if not config.same_run_until(parent):
        raise SentembError(
            f"--branch-from {source}: that run's settings ({source_config}) differ from this run's "
            f"({config.as_dict()}) in more than the step budget, or either is not a wsd run with a step budget"
        )
    parent_schedule = Schedule(parent)
    if meta_file.is_file():
        state = PretrainState.carried(source, parent.as_dict(), model, optimization, parent_schedule)
    else:
        state = PretrainState.load(source / "state.pt", parent, model, optimization, parent_schedule)
    if state.step > config.decay_start:
        raise SentembError(
            f"--branch-from {source}: it is at step {state.step}, past this run's decay start ({config.decay_start}); "
            f"choose --steps of at least {round(state.step / (1 - config.decay_fraction))}"
        )
    state.processes = [{**p, "run_id": parent.run_id} for p in state.processes]
    return state, {"run_id": parent.run_id, "step": state.step, "source": str(source)}


def _legacy_filled(config_dict: dict) -> dict:
    from sentemb.pretrain.configs import LEGACY

    return {**LEGACY, **config_dict}


def finish(
    setup: Setup,
    state: PretrainState,
    model: transformers.BertForMaskedLM,
    wall: float,
    heldout: HeldOut,
    schedule: Schedule,
    branched: dict | None = None,
) -> dict:
    """Save the kept weights and the tokenizer to ``<directory>/model``; the run's record."""
    config, corpus, tokenizer = setup.config, setup.corpus, setup.tokenizer
    model_dir = setup.directory / "model"
    save_checkpoint(model, state.best["weights"], config.seed, model_dir)
    tokenizer.save_pretrained(model_dir)
    curves, tokens = state.curves, state.step * config.batch_size * config.max_len
    return {
        "run_id": config.run_id,
        "config": config.as_dict(),
        "model": {"size": config.size, **size_of(config.size, len(tokenizer)), "bert": model.config.to_dict()},
        "text": {
            "training": {f: corpus.files[f] for f in TRAINING_FILES},
            "heldout": {HELDOUT: corpus.files[HELDOUT]},
            "decontaminated_against": {f: s for f, s in corpus.files.items() if f not in TRAINING_FILES},
        },
        "counts": corpus.counts,
        "steps": state.step,
        "schedule": schedule.state(),
        "branched_from": branched,  # a milestone: the run whose state at that step it started from
        "tokens_seen": tokens,
        "epochs": tokens / corpus.train.numel(),
        "train_loss": curves["train"],
        "heldout_loss": curves["heldout"],
        "heldout_seconds": curves["seconds"],  # the run's wall seconds at each held-out evaluation
        "final_train_loss": curves["train"][-1][1],
        "final_heldout_loss": curves["heldout"][-1][1],
        "heldout_unigram_loss": heldout.unigram_loss,  # the context-free floor on the same masked tokens
        "kept": {"step": state.best["step"], "heldout_loss": state.best["loss"], "rule": "the lowest held-out loss"},
        "tokenizer": {
            "source": setup.tokenizer_source,
            "vocabulary_sha256": vocabulary_sha256(tokenizer),
            "file_sha256": vocabulary.vocabulary_sha256(config.vocab),
            "size": len(tokenizer),
        },
        "wall_seconds": wall,
        "weights_sha256": sha256_of(model_dir / "model.safetensors"),
        "provenance": code_provenance(provenance.collect(setup.device), state.processes),
        "command": config.command(str(setup.out) if setup.out else None),
    }


def code_provenance(collected: dict, processes: list[dict]) -> dict:
    """The record's provenance: the environment as ``collected`` at the end, the code as it was when the run
    started (its first process's commit and start time; dirty when any process ran modified code, None when one
    could not tell) and every process that trained it (``processes``: a resumed run names each one's code)."""
    if not processes or processes[0]["from_step"] != 0:  # resumed from a state saved before processes were kept
        return {**collected, "commit": None, "dirty": None, "started_utc": None, "processes": processes}
    dirty = [p["dirty"] for p in processes]
    return {
        **collected,
        "commit": processes[0]["commit"],
        "dirty": None if None in dirty else any(dirty),
        "started_utc": processes[0]["started_utc"],
        "processes": processes,
    }
