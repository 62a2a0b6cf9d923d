"""Which MLM pretraining recipe lowers the held-out loss fastest per CPU-minute (issue 54's probes).

    SENTEMB_DATA=../shared/datasets nice .venv/bin/python benchmarks/bench_pretrain_probes.py run [--only NAME,...]
    .venv/bin/python benchmarks/bench_pretrain_probes.py table [--output FILE]

Each probe is a complete short ``sentemb pretrain`` run (its own warm-up and decay to 0 at its last step) sized to
about ten minutes on 2 CPU cores from the measured step times: size, learning rate, sequence length (the same 4,096
tokens a step), dropout and precision (bf16 autocast on a CPU with AMX, or fp32). The runs live under
``$SENTEMB_CACHE/pretrain-probes/<name>``; a finished probe is read back, an interrupted one continues. ``run``
writes the summary (each probe's settings, held-out curve with the wall seconds at each evaluation, its process CPU
seconds) to ``benchmarks/results/pretrain_probes_cpu_2cores.json``; ``table`` prints it as Markdown: the lowest
held-out loss and its drop from the start per wall-minute.

A probe at 64 tokens is evaluated on WikiText-2 valid packed at 64 tokens (2,048 sequences: the same tokens as 1,024
of 128), so each position sees less context than at 128: its held-out loss is biased upwards against the others.
Measure with nothing else on the cores.
"""

from __future__ import annotations

import argparse
import json
import resource
from pathlib import Path

from benchmark_io import ROOT, machine, require_mirror

OUTPUT = ROOT / "benchmarks" / "results" / "pretrain_probes_cpu_2cores.json"

RECIPE = {"vocab": "wordpiece-8192", "attention": "eager", "fused_adamw": True}
#: name -> the PretrainConfig fields that differ from the defaults; ~10 minutes each on 2 avx512 cores.
PROBES = {
    "mini-lr5e-4": {"size": "mini", "steps": 1200, "lr": 5e-4},
    "mini-lr1e-3": {"size": "mini", "steps": 1200, "lr": 1e-3},
    "mini-lr2e-3": {"size": "mini", "steps": 1200, "lr": 2e-3},
    "mini-lr1e-3-fp32": {"size": "mini", "steps": 850, "lr": 1e-3, "precision": "fp32"},
    "mini-len64-lr1e-3": {"size": "mini", "steps": 1300, "lr": 1e-3, "max_len": 64, "batch_size": 64},
    "mini-lr1e-3-nodropout": {"size": "mini", "steps": 1200, "lr": 1e-3, "dropout": 0.0},
    "4x128-lr1e-3": {"size": "4x128", "steps": 2200, "lr": 1e-3},
    "4x128-lr2e-3": {"size": "4x128", "steps": 2200, "lr": 2e-3},
    "2x128-lr2e-3": {"size": "2x128", "steps": 2800, "lr": 2e-3},
    # issue 65's recipe: the 8,192-token WordPiece vocabulary, eager attention and fused AdamW (the same maths as the
    # nodropout probe but the vocabulary), at BERT's 15 % and at 25 % masked
    "mini-8k-lr1e-3-nodropout": {"size": "mini", "steps": 1200, "lr": 1e-3, "dropout": 0.0, **RECIPE},
    "mini-8k-mask25-lr1e-3-nodropout": {
        "size": "mini",
        "steps": 1200,
        "lr": 1e-3,
        "dropout": 0.0,
        "mask_rate": 0.25,
        **RECIPE,
    },
}
BASE = {"batch_size": 32, "weight_decay": 0.01, "seed": 0}


def config_of(name: str):
    from sentemb.pretrain.configs import PretrainConfig

    fields = {**BASE, **PROBES[name]}
    steps = fields["steps"]
    fields.update(warmup=steps // 10, eval_every=steps // 5)
    fields["heldout_sequences"] = 1024 * 128 // fields.get("max_len", 128)
    return PretrainConfig(**fields)


def run(names: list[str]) -> None:
    require_mirror()
    import torch

    from sentemb import settings
    from sentemb.pretrain.run import pretrain

    summary = json.loads(OUTPUT.read_text()) if OUTPUT.is_file() else {"probes": {}}
    summary.update(machine())
    for name in names:
        config = config_of(name)
        out = settings.cache_root() / "pretrain-probes" / name
        record_file = out / "record.json"
        cpu_before = resource.getrusage(resource.RUSAGE_SELF)
        if not record_file.is_file():
            pretrain(config, out, device=torch.device("cpu"))
        cpu_after = resource.getrusage(resource.RUSAGE_SELF)
        record = json.loads(record_file.read_text())
        previous = summary["probes"].get(name, {})
        cpu = cpu_after.ru_utime + cpu_after.ru_stime - cpu_before.ru_utime - cpu_before.ru_stime
        summary["probes"][name] = {
            "config": config.as_dict(),
            "tokens_seen": record["tokens_seen"],
            "wall_seconds": record["wall_seconds"],
            "cpu_seconds": cpu if cpu > 1 else previous.get("cpu_seconds"),
            "heldout_loss": record["heldout_loss"],
            "heldout_seconds": record["heldout_seconds"],
            "kept_heldout_loss": record["kept"]["heldout_loss"],
            "heldout_unigram_loss": record.get("heldout_unigram_loss") or unigram_floor(config),
            "commit": record["provenance"].get("commit"),
        }
        OUTPUT.write_text(json.dumps(summary, indent=1) + "\n")
        print(f"[probes] {name}: held-out {record['kept']['heldout_loss']:.3f} in {record['wall_seconds']:.0f} s")


def unigram_floor(config) -> float:
    """The context-free loss on the held-out masked tokens of ``config``'s vocabulary (for probes recorded before
    records carried it): :class:`sentemb.pretrain.run.HeldOut`'s."""
    import torch

    from sentemb.pretrain import vocabulary
    from sentemb.pretrain.corpus import load_corpus
    from sentemb.pretrain.model import collator
    from sentemb.pretrain.run import HeldOut

    tokenizer = vocabulary.load(config.vocab)
    return HeldOut(
        load_corpus(tokenizer, config.max_len), collator(tokenizer), config, torch.device("cpu")
    ).unigram_loss


def table(summary: dict) -> str:
    """The probes as Markdown: the held-out loss from its start to its lowest, per wall-minute and per CPU-minute (the
    process's user + system seconds / 60, which a probe sharing the cores with other work does not inflate)."""
    lines = [
        "| probe | size | lr | tokens a sequence x batch | dropout | precision | steps | tokens | wall min | CPU min "
        "| held-out loss (start → lowest) | drop per wall-minute | drop per CPU-minute | vocabulary, masked "
        "| context-free floor | lowest below the floor |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, p in summary["probes"].items():
        c, curve = p["config"], p["heldout_loss"]
        minutes, cpu = p["wall_seconds"] / 60, (p["cpu_seconds"] or float("nan")) / 60
        start, low = curve[0][1], p["kept_heldout_loss"]
        lines.append(
            f"| {name} | {c['size']} | {c['lr']:g} | {c['max_len']} x {c['batch_size']} | {c['dropout']:g} "
            f"| {c['precision']} | {c['steps']} | {p['tokens_seen'] / 1e6:.2f} M | {minutes:.1f} | {cpu:.1f} "
            f"| {start:.2f} → {low:.3f} | {(start - low) / minutes:.3f} | {(start - low) / cpu:.3f} "
            f"| {c.get('vocab', 'bert-uncased')}, {c.get('mask_rate', 0.15):g} | {_floor(p)} | {_gap(p, low)} |"
        )
    return "\n".join(lines)


def _floor(p: dict) -> str:
    return f"{p['heldout_unigram_loss']:.3f}" if p.get("heldout_unigram_loss") else "not measured"


def _gap(p: dict, low: float) -> str:
    return f"{p['heldout_unigram_loss'] - low:.3f}" if p.get("heldout_unigram_loss") else ""


def floors(names: list[str]) -> None:
    """Add the context-free floor to probes summarised before it was recorded (no training)."""
    summary = json.loads(OUTPUT.read_text())
    for name in names:
        probe = summary["probes"][name]
        if not probe.get("heldout_unigram_loss"):
            probe["heldout_unigram_loss"] = unigram_floor(config_of(name))
    OUTPUT.write_text(json.dumps(summary, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the probes (resumable), then write the summary")
    r.add_argument("--only", default=",".join(PROBES), help="comma-separated probe names (default: all)")
    f = sub.add_parser("floors", help="add the context-free floor to probes summarised without it (no training)")
    f.add_argument("--only", default=",".join(PROBES), help="comma-separated probe names (default: all)")
    t = sub.add_parser("table", help="print the summary as Markdown")
    t.add_argument("--output", help="also write the table to this file")
    args = parser.parse_args()
    if args.command == "run":
        unknown = [n for n in args.only.split(",") if n not in PROBES]
        if unknown:
            raise SystemExit(f"unknown probe(s) {', '.join(unknown)}; choose from {', '.join(PROBES)}")
        run(args.only.split(","))
    elif args.command == "floors":
        floors([n for n in args.only.split(",") if n in json.loads(OUTPUT.read_text())["probes"]])
    else:
        text = table(json.loads(Path(OUTPUT).read_text()))
        print(text)
        if args.output:
            Path(args.output).write_text(text + "\n")


if __name__ == "__main__":
    main()
