"""``python -m sentemb pretrain``: its arguments (the fields of :class:`sentemb.pretrain.configs.PretrainConfig`,
declared once) and the run, then publishing."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
from pathlib import Path

from sentemb.commands.arguments import positive_int
from sentemb.errors import ConfigError


def deadline_of(text: str | None, now: dt.datetime | None = None) -> float | None:
    """``--stop-at``: a UTC clock time today (``06:50``; tomorrow when it has passed) or an ISO date and time; a
    ``time.time()``."""
    if not text:
        return None
    now = now or dt.datetime.now(dt.timezone.utc)
    try:
        if len(text) <= 5 and ":" in text:
            hour, minute = (int(x) for x in text.split(":"))
            at = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
            at = at if at > now else at + dt.timedelta(days=1)
        else:
            at = dt.datetime.fromisoformat(text)
            at = at if at.tzinfo else at.replace(tzinfo=dt.timezone.utc)
    except ValueError as exc:
        raise ConfigError(f"--stop-at {text!r}: give a UTC time (06:50) or an ISO date and time ({exc})") from exc
    return at.timestamp()


def cmd_pretrain_vocab(args) -> int:
    from sentemb.pretrain import vocabulary

    path = vocabulary.make(args.size)
    print(f"[pretrain-vocab] wrote {path} (sha256 {vocabulary.sha256(path)}); commit it: a run names it by its name")
    return 0


def add_pretrain_vocab_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--size", type=positive_int, default=8192, help="tokens, the five specials included (%(default)s)")


def cmd_pretrain(args) -> int:
    from sentemb.pretrain.configs import PretrainConfig
    from sentemb.pretrain.publish import publish
    from sentemb.pretrain.run import output_dir, pretrain

    config = PretrainConfig(**{f.name: getattr(args, f.name) for f in dataclasses.fields(PretrainConfig)})
    directory = output_dir(config, args.out)
    if not (args.publish and (directory / "record.json").is_file()):
        record = pretrain(
            config,
            args.out,
            tokenizer_source=args.tokenizer,
            deadline=deadline_of(args.stop_at),
            carry=Path(args.carry) if args.carry else None,
            carry_mode=args.carry_mode,
            branch_from=Path(args.branch_from) if args.branch_from else None,
        )
        if record is None:
            return 0
        print(
            f"[pretrain] {record['steps']} steps, {record['tokens_seen']:,} tokens ({record['epochs']:.2f} epochs) in "
            f"{record['wall_seconds']:.0f} s on {record['provenance']['device']}: MLM loss train "
            f"{record['final_train_loss']:.3f}, held-out {record['final_heldout_loss']:.3f} (kept: step "
            f"{record['kept']['step']}, {record['kept']['heldout_loss']:.3f})"
        )
        print(f"[pretrain] wrote {directory}/model and record.json")
    if args.publish:
        print(f"[pretrain] published as backbone {args.publish!r}: {publish(directory, args.publish)}")
    return 0


def add_pretrain_arguments(p: argparse.ArgumentParser) -> None:
    from sentemb.pretrain.configs import SIZES, PretrainConfig

    default = PretrainConfig()
    sizes = "; ".join(
        f"{name}: {s.layers} layers x {s.hidden} hidden, {s.bf16_mb:g} MB in bf16" for name, s in SIZES.items()
    )
    p.add_argument("--config", dest="size", default=default.size, choices=list(SIZES), help=f"the model size ({sizes})")
    p.add_argument("--steps", type=positive_int, default=default.steps, help="optimizer steps (default %(default)s)")
    p.add_argument(
        "--batch-size", type=positive_int, default=default.batch_size, help="sequences a step (default %(default)s)"
    )
    p.add_argument("--lr", type=float, default=default.lr, help="AdamW's peak learning rate (default %(default)s)")
    p.add_argument(
        "--warmup",
        type=int,
        default=default.warmup,
        help="steps of linear warm-up, then linear decay to 0 at the last step (default %(default)s)",
    )
    p.add_argument(
        "--weight-decay",
        type=float,
        default=default.weight_decay,
        help="AdamW's, on the matrices only (default %(default)s)",
    )
    p.add_argument("--seed", type=int, default=default.seed, help="initialisation, order, masks, dropout")
    p.add_argument(
        "--eval-every",
        type=positive_int,
        default=default.eval_every,
        help="steps between held-out evaluations, each also a resumable state (default %(default)s)",
    )
    p.add_argument(
        "--heldout-sequences",
        type=positive_int,
        default=default.heldout_sequences,
        help="sequences of WikiText-2 valid for the held-out loss (default %(default)s; it has 1816 of 128 tokens)",
    )
    p.add_argument(
        "--max-len",
        type=int,
        default=default.max_len,
        help="tokens a sequence, [CLS] and [SEP] included (default %(default)s)",
    )
    p.add_argument(
        "--dropout",
        type=float,
        default=default.dropout,
        help="dropout of the hidden and attention layers while pretraining (default %(default)s, BERT's); the saved "
        "config has BERT's 0.1 for fine-tuning whatever this is",
    )
    p.add_argument(
        "--precision",
        default=default.precision,
        choices=["bf16", "fp32"],
        help="autocast of the encoder (default %(default)s: on a GPU, and on a CPU with avx512_bf16 or AMX, about "
        "1.5x faster there than fp32; emulated and slow on other CPUs); the MLM head and the loss are fp32 always",
    )
    _add_recipe_arguments(p, default)
    _add_session_arguments(p)


def _add_recipe_arguments(p: argparse.ArgumentParser, default) -> None:
    """Issue 65's recipe options: the vocabulary, the masking rate, the schedule and the speed options."""
    from sentemb.pretrain import vocabulary
    from sentemb.pretrain.configs import ATTENTIONS, SCHEDULES

    p.add_argument(
        "--vocab",
        default=default.vocab,
        choices=vocabulary.names(),
        help="the vocabulary (default %(default)s: all-MiniLM-L6-v2's, 30,522 tokens; wordpiece-N: trained on the "
        "pretraining text by `python -m sentemb pretrain-vocab --size N` and committed)",
    )
    p.add_argument(
        "--mask-rate",
        type=float,
        default=default.mask_rate,
        help="share of the training tokens masked (default %(default)s, BERT's; the held-out loss masks 0.15 always)",
    )
    p.add_argument(
        "--schedule",
        default=default.schedule,
        choices=list(SCHEDULES),
        help="linear: warm-up then linear decay to 0 at the last step (default); wsd: warm-up, constant, then linear "
        "decay to 0 over the last --decay-fraction of --steps (or of --budget-minutes)",
    )
    p.add_argument(
        "--decay-fraction", type=float, default=default.decay_fraction, help="wsd's decay share (%(default)s)"
    )
    p.add_argument(
        "--budget-minutes",
        type=float,
        default=default.budget_minutes,
        help="wsd: a wall-clock budget (every process's minutes); the decay starts at (1 - fraction) of it and "
        "--steps only caps the run (default 0: the budget is --steps)",
    )
    p.add_argument(
        "--attention",
        default=default.attention,
        choices=list(ATTENTIONS),
        help="transformers' attention while pretraining (default %(default)s; eager: the same maths, faster on a CPU, "
        "and packed sequences are never padded)",
    )
    p.add_argument("--fused-adamw", action="store_true", help="torch's fused AdamW kernel (the same update)")
    p.add_argument("--adam-beta2", type=float, default=default.adam_beta2, help="AdamW's beta2 (%(default)s)")


def _add_session_arguments(p: argparse.ArgumentParser) -> None:
    """Where the run lives across sessions and machines: its deadline, its carried state, a milestone's source, its
    directory, the tokenizer of MiniLM's vocabulary and publishing."""
    from sentemb.pretrain.carry import MODES, REWARM_STEPS

    p.add_argument(
        "--stop-at",
        metavar="TIME",
        help="save and exit at the first step ending after TIME (UTC: 06:50, or an ISO date and time), with the "
        "state in --out and --carry; the same command continues the run",
    )
    p.add_argument(
        "--carry",
        metavar="DIR",
        help="a folder in the repository (e.g. pretraining/<name>) that receives the state when the run stops before "
        "its end, and from which a run whose cache has no state continues (a fresh machine); removed when it ends",
    )
    p.add_argument(
        "--carry-mode",
        default="exact",
        choices=list(MODES),
        help=f"what --carry keeps: exact (fp32 weights and moments: bit for bit), bf16 (both rounded, half the "
        f"bytes), weights (bf16 weights only, a sixth: fresh moments, the rate re-warmed over {REWARM_STEPS} steps)",
    )
    p.add_argument(
        "--branch-from",
        metavar="DIR",
        help="start from another run's state (its --out or --carry folder): a milestone decays a copy of a longer wsd "
        "run (the same settings but --steps; it must not have passed this run's decay start)",
    )
    p.add_argument(
        "--out",
        default=None,
        help="the run's directory (default $SENTEMB_CACHE/pretrain/<id>, id: the settings' hash); an unfinished "
        "run there continues, a finished one is never overwritten",
    )
    p.add_argument(
        "--tokenizer",
        default="all-MiniLM-L6-v2",
        help="a backbone name or model directory whose tokenizer to use (default %(default)s, the uncased BERT "
        "vocabulary; its sha256 is recorded)",
    )
    p.add_argument(
        "--publish",
        metavar="NAME",
        help="then copy the finished run to shared/models/NAME (NAME: sentemb-...), with MANIFEST.json and a model "
        "card, as a backbone every spec can name; a finished run in --out is published without training again",
    )
