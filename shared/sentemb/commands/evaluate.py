"""``python -m sentemb evaluate``: any model directory or hub id on STS, SentEval transfer/probing and MTEB,
printed as tables and written as JSON with provenance."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from sentemb.atomic import atomic_write_text
from sentemb.errors import SentembError


def default_evaluation_path(model: str, pooler: str) -> Path:
    from sentemb import settings

    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in model.strip("/").replace("/", "__"))
    return settings.results_root() / "evaluations" / f"{slug}__{pooler}.json"


def cmd_evaluate(args) -> int:
    from sentemb.data.files import track_reads
    from sentemb.evaluate.suite import evaluate_model, parse_groups
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.runs import provenance

    groups = parse_groups(args.tasks)
    splits = tuple(s.strip() for s in args.splits.split(","))
    bad = [s for s in splits if s not in ("train", "dev", "test")]
    if bad:
        raise SentembError(f"unknown split(s) {bad} for STS-B/SICK-R; choose from train, dev, test")
    protocols = tuple(p.strip() for p in args.sts_protocol.split(","))
    encoder = SentenceEncoder.from_name(args.model, args.pooler)
    if args.device:
        encoder.to(args.device)
    started = time.perf_counter()
    with track_reads() as hashes:
        result, _ = evaluate_model(
            lambda s: encoder.encode(s, batch_size=args.batch_size, progress=True),
            groups,
            sts_protocols=protocols,
            sts_splits=splits,
            transfer_mode=args.transfer_mode,
            mteb_model=encoder,
            batch_size=args.batch_size,
        )
    result.update(model=args.model, pooler=args.pooler, total_seconds=time.perf_counter() - started)
    result["provenance"] = {
        **provenance.collect(encoder.device),
        "data_sha256": hashes,
        "truncated_eval_sentences": encoder.truncated_sentences,
    }
    for protocol in protocols if "sts" in groups else ():
        _print_sts(result[f"sts_{protocol}"], f"{args.model} ({args.pooler})", protocol)
    if "transfer" in result:
        _print_transfer(result["transfer"])
    if "mteb" in result:
        _print_mteb(result["mteb"])
    print(f"\n{result['n_sentences']} unique sentences encoded once; total {result['total_seconds']:.1f} s")
    out = atomic_write_text(
        Path(args.output) if args.output else default_evaluation_path(args.model, args.pooler),
        json.dumps(result, indent=1, default=float) + "\n",
    )
    print(f"wrote {out}")
    return 0


def _print_sts(sts: dict, model: str, protocol: str) -> None:
    from sentemb.evaluate.sts import format_aggregations, format_table

    print(f"\n{model}, STS, Spearman x 100, protocol {protocol}: {sts['protocol']}")
    print(format_table(sts["summary"]))
    print(format_aggregations(sts["tasks"]))


def _print_transfer(t: dict) -> None:
    print(f"\nSentEval transfer/probing, accuracy (test), parameters '{t.get('mode')}':")
    for name, r in t["tasks"].items():
        extra = f"  (dev {r['devacc']:.2f}" + (f", F1 {r['f1']:.2f})" if "f1" in r else ")") if "acc" in r else ""
        print(f"  {name:22s} {r['acc']:6.2f}{extra}" if "acc" in r else f"  {name:22s} {r['status']}: {r['reason']}")
    if "Avg." in t.get("summary", {}):
        print(f"  {'Avg. (SimCSE 7 tasks)':22s} {t['summary']['Avg.']:6.2f}")


def _print_mteb(m: dict) -> None:
    ran = {n: r for n, r in m["tasks"].items() if r["status"] == "ok"}
    print(f"\nMTEB (mteb {m['mteb_version']}), main score x 100; {len(ran)} of {len(m['tasks'])} tasks ran:")
    for name, r in ran.items():
        print(f"  {name:30s} {r['main_score']:6.2f}  {r['main_metric']}  ({r['seconds']:.0f} s)")
    for category, avg in m["category_averages"].items():
        if avg["n_tasks"]:
            print(f"  {category:30s} {avg['mean']:6.2f}  (over {avg['n_tasks']} of {avg['of']} tasks)")


def add_evaluate_arguments(p: argparse.ArgumentParser) -> None:
    from sentemb.models.poolers import POOLERS

    p.add_argument("--model", required=True, help="model directory, hub id, all-MiniLM-L6-v2 or tiny-random-bert")
    p.add_argument("--pooler", required=True, choices=POOLERS)
    p.add_argument(
        "--tasks",
        default="sts",
        help="task groups, comma-separated: sts, transfer (SimCSE's 7), "
        "declutr (the 7 + SST5, SICK-E), probing (10 tasks), mteb",
    )
    p.add_argument(
        "--sts-protocol",
        default="simcse",
        help="simcse (cosine, 'all'), senteval (DeCLUTR's: "
        "'mean' + trained regressor for STS-B/SICK-R), or both: simcse,senteval",
    )
    p.add_argument(
        "--transfer-mode",
        default="fasttest",
        choices=("fasttest", "test"),
        help="SimCSE's SentEval parameter sets: fasttest (kfold 5, rmsprop) or test (kfold 10, adam)",
    )
    p.add_argument("--splits", default="test", help="STS-B/SICK-R splits to score, e.g. dev,test (default test)")
    p.add_argument("--batch-size", type=int, default=64, help="encoding batch size (every group, MTEB included)")
    p.add_argument("--device", default=None, help="e.g. cpu or cuda (default: the model's)")
    p.add_argument(
        "--output",
        default=None,
        help="JSON with the full result (all/mean/wmean, Pearson, provenance); "
        "default results/evaluations/<model>__<pooler>.json",
    )
