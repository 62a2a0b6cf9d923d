"""``python -m sentemb pretrain``: its arguments (the fields of :class:`sentemb.pretrain.configs.PretrainConfig`,
declared once) and the run, then publishing."""

from __future__ import annotations

import argparse
import dataclasses

from sentemb.commands.arguments import positive_int


def cmd_pretrain(args) -> int:
    from sentemb.pretrain.configs import PretrainConfig
    from sentemb.pretrain.publish import publish
    from sentemb.pretrain.run import output_dir, pretrain

    config = PretrainConfig(**{f.name: getattr(args, f.name) for f in dataclasses.fields(PretrainConfig)})
    directory = output_dir(config, args.out)
    if not (args.publish and (directory / "record.json").is_file()):
        record = pretrain(config, args.out, tokenizer_source=args.tokenizer)
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
