"""``python -m sentemb runs``, ``export``, ``reported`` and ``summary``: reading what the archive recorded (run
records, a run's model, the papers' reported numbers, run_all.sh's run events)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sentemb.commands.arguments import PAPER_HELP, profile_argument, selected_papers
from sentemb.errors import SentembError


def _find_record(run_id: str, profile: str | None) -> dict:
    """The record of ``run_id``: in ``profile``, or (None) in the one profile that has it."""
    from sentemb import settings
    from sentemb.profiles import PROFILES
    from sentemb.runs import store

    profiles = [profile] if profile else list(PROFILES)
    found = [p for p in profiles if store.record_path(p, run_id).is_file()]
    if not found:
        where = settings.results_root() / "runs" / (profile or "<profile>")
        raise SentembError(
            f"no run record {run_id}.json in {where}.\n  Fix: 'python -m sentemb runs --profile "
            f"{profile or 'small'}' lists the recorded run ids."
        )
    if len(found) > 1:
        raise SentembError(f"run {run_id} is recorded in the profiles {found}; choose one with --profile")
    return store.load(found[0], run_id)


def cmd_export(args) -> int:
    """A recorded run's evaluated model as a sentence-transformers directory (checked against the archive's
    embeddings before it is kept); a run whose checkpoint this machine lacks is trained again from its spec."""
    import torch

    from sentemb import settings
    from sentemb.export.model_card import model_card
    from sentemb.export.sentence_transformers import export
    from sentemb.models.summed_encoders import SummedEncoders
    from sentemb.runs.execute import run_model

    record = _find_record(args.run, args.profile)
    out = (
        Path(args.out)
        if args.out
        else (settings.cache_root() / "exports" / record["profile"] / f"{record['run_id']}-{args.format}")
    )
    if out.exists():  # before any re-training
        raise SentembError(
            f"{out} already exists; the export never overwrites.\n  Fix: choose another --out, or delete it first."
        )
    model, origin = run_model(record, torch.device("cpu"), progress=True)
    print(
        f"[export] run {record['run_id']} ({record['spec']['objective']}, pooler {record['spec']['pooler']}): "
        f"model from {origin['source']}"
    )
    try:  # the probes of the check: the STS-B dev sentences the record was selected on, when the data is here
        from sentemb.data.sts import load_task

        probes = load_task("STSBenchmark", synthetic=record["spec"]["synthetic_data"]).parts["dev"].sentences()
    except SentembError:
        probes = None  # the exporter's built-in sentences
    result = export(model, out, model_card(record, trust_remote_code=isinstance(model, SummedEncoders)), probes)
    load = (
        "SentenceTransformer(path, trust_remote_code=True)"
        if result["trust_remote_code"]
        else "SentenceTransformer(path)"
    )
    print(
        f"[export] {result['directory']}: loads with {load}; equal to the archive's embeddings within "
        f"{result['max_abs_difference']:.1e} on {result['n_probes']} sentences"
    )
    return 0


def add_export_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--run", required=True, help="the run id (python -m sentemb runs lists them)")
    profile_argument(p, default=None, help_text="the profile of the record (default: the one profile that has it)")
    p.add_argument("--format", default="sentence-transformers", choices=("sentence-transformers",))
    p.add_argument(
        "--out",
        default=None,
        help="the directory to create (default $SENTEMB_CACHE/exports/<profile>/<run_id>-sentence-transformers)",
    )


def _run_line(record: dict) -> str:
    """One line of ``runs``: id, objective and parameters, pooler, seed, dropout, dev Spearman, wall time, commit."""
    spec = record["spec"]
    params = ",".join(f"{k}={v}" for k, v in spec["objective_params"].items())
    return (
        f"{record['run_id']}  {spec['objective']:13s} {params:50s} {spec['pooler']:17s} seed={spec['seed']} "
        f"dropout={spec['dropout']} "
        f"dev={100 * record['metrics']['stsb_dev_spearman']:.2f} wall={record['timing']['total_seconds']:.0f}s "
        f"commit={(record['provenance']['commit'] or '?')[:10]}"
    )


def cmd_runs(args) -> int:
    """List every readable record; name each broken one on stderr (after the list) and then exit 1."""
    from sentemb import settings
    from sentemb.runs.store import BrokenRecord, read, record_files

    broken = []
    for path in record_files(settings.results_root() / "runs" / args.profile):
        try:
            print(_run_line(read(path, expected_id=path.stem)))
        except BrokenRecord as exc:
            broken.append(str(exc))
        except (KeyError, TypeError, ValueError) as exc:  # JSON, but not a record's fields
            broken.append(
                f"run record {path} is not a complete record ({type(exc).__name__}: {exc}).\n"
                "  Fix: inspect it, then delete it; the next run computes it again."
            )
    for message in broken:
        print(f"error: {message}", file=sys.stderr)
    return 1 if broken else 0


def cmd_reported(args) -> int:
    """Every number a paper prints in more than one table: its copies, whether they agree, whether flagged."""
    from sentemb.paper import reproduced_papers
    from sentemb.report.reported_consistency import IDENTITY, repeated_cells

    unflagged = 0
    for paper in selected_papers(args.paper, list(reproduced_papers())):
        repeated = repeated_cells(paper)
        shown = repeated if args.all else repeated[~repeated["agree"].astype(bool)]
        print(
            f"{paper}: {repeated.groupby(IDENTITY).ngroups} numbers printed in more than one table, "
            f"{shown.groupby(IDENTITY).ngroups if len(shown) else 0} {'shown' if args.all else 'disagree'}"
        )
        for identity, copies in shown.groupby(IDENTITY, sort=True):
            model, column, split = identity[:3]
            flags = copies["note"].str.startswith("inconsistent:")
            agree = bool(copies["agree"].iloc[0])
            unflagged += 0 if agree else int((~flags).sum())
            state = "agree" if agree else ("flagged" if flags.all() else "NOT FLAGGED")
            where = "; ".join(
                f"{t} [{g + ' / ' if g else ''}{r} / {c}] {v}"
                for t, g, r, c, v in zip(
                    copies["table"], copies["group"], copies["row"], copies["column"], copies["printed"]
                )
            )
            print(f"  {model} | {column} | {split or '-'}: {state}: {where}")
    return 1 if unflagged else 0


def add_reported_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--paper", default="all", help=f"{PAPER_HELP} (not the overview); several comma-separated, or all")
    p.add_argument("--all", action="store_true", help="also the repeated numbers whose copies agree")


def cmd_summary(args) -> int:
    """run_all.sh's closing table, from the run events and wall times it collected in one folder."""
    from sentemb.runs.events import summary

    folder = Path(args.folder)
    walls_file = folder / "walls.tsv"
    if not walls_file.is_file():
        raise SentembError(
            f"{walls_file} is missing: 'summary' reads the folder run_all.sh fills "
            "(SENTEMB_RUN_EVENTS files and walls.tsv)"
        )
    walls = {}
    for line in walls_file.read_text().splitlines():
        paper, seconds = line.split("\t")
        walls[paper] = float(seconds)
    table = summary(folder, walls)
    import pandas as pd

    with pd.option_context("display.width", 200, "display.max_colwidth", 80):
        print(table.to_string(index=False))
    return 0


def add_summary_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("folder", help="the folder of run events (<paper>.jsonl) and walls.tsv that run_all.sh filled")
