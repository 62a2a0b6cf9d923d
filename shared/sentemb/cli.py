"""Command line: ``python -m sentemb <command> --help``.

evaluate   evaluate any model directory or hub id: STS, SentEval transfer/probing, MTEB (JSON + tables)
run        run (or load) the records of a paper's experiment grid for a profile
notebook   execute a paper's notebook with papermill (tables -> results/, figures -> figures/)
papers     the registered papers, in the order they are run (the overview, which compares them, last)
profiles   the profiles (smoke, small, raw, full, rehearsal), one name a line
data       verify the registered data files, or fetch the evaluation sets (and the full profile's corpora)
runs       list the run records of a profile
site       the executed notebooks as a static HTML site, its index every paper's coverage
summary    run_all.sh's closing table (runs trained, loaded, not run; wall time per paper)
export     a recorded run's model as a sentence-transformers directory, with a model card from its record
reported   numbers a paper prints in more than one table, and whether its copies agree
pretrain   MLM-pretrain a small BERT from the mirror's training text (a safetensors checkpoint and a JSON record)
pretrain-vocab  train a WordPiece vocabulary on the pretraining text, to commit
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass

from sentemb.commands.arguments import profile_argument
from sentemb.commands.data import add_data_arguments, cmd_data
from sentemb.commands.evaluate import add_evaluate_arguments, cmd_evaluate
from sentemb.commands.pretrain import (
    add_pretrain_arguments,
    add_pretrain_vocab_arguments,
    cmd_pretrain,
    cmd_pretrain_vocab,
)
from sentemb.commands.records import (
    add_export_arguments,
    add_reported_arguments,
    add_summary_arguments,
    cmd_export,
    cmd_reported,
    cmd_runs,
    cmd_summary,
)
from sentemb.commands.run import add_notebook_arguments, add_run_arguments, cmd_notebook, cmd_run
from sentemb.errors import SentembError


def _threads(n: int | None) -> None:
    import torch

    if n:
        torch.set_num_threads(n)


def cmd_papers(args) -> int:
    from sentemb.paper import registry

    print("\n".join(registry()))
    return 0


def cmd_profiles(args) -> int:
    from sentemb.profiles import PROFILES

    print("\n".join(name for name, profile in PROFILES.items() if profile.paper_data or not args.paper_data))
    return 0


def cmd_site(args) -> int:
    from sentemb.site import build_site

    print(f"[site] {build_site(args.profile)}")
    return 0


def add_profiles_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--paper-data",
        action="store_true",
        help="only the profiles that train on the papers' own data (downloaded before a run_all.sh without a mirror)",
    )


@dataclass(frozen=True)
class Command:
    """A subcommand: its name, its line in the top-level help, what runs it and what it takes."""

    name: str
    summary: str
    handler: Callable[[argparse.Namespace], int]
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None
    description: str | None = None  # the subcommand's own --help text


COMMANDS = (
    Command("evaluate", "evaluate a model: STS, SentEval transfer/probing, MTEB", cmd_evaluate, add_evaluate_arguments),
    Command(
        "run",
        "run or load a paper's experiment grid",
        cmd_run,
        add_run_arguments,
        "Run (or load) the records of a paper's grid. A record file of the profile that cannot be read (truncated, "
        "corrupt) is named on stderr, moved aside to <name>.broken (kept) and its run computed again; with "
        "--no-run it is an error naming the file (exit 2).",
    ),
    Command("notebook", "execute a paper's notebook with papermill", cmd_notebook, add_notebook_arguments),
    Command("papers", "the registered papers, one name a line, in the order they are run", cmd_papers),
    Command("profiles", "the profiles, one name a line (run_all.sh asks here)", cmd_profiles, add_profiles_arguments),
    Command(
        "summary",
        "run_all.sh's table: runs trained / loaded / not run and wall time per paper",
        cmd_summary,
        add_summary_arguments,
    ),
    Command(
        "export",
        "a recorded run's model as a sentence-transformers directory",
        cmd_export,
        add_export_arguments,
        "Writes the evaluated model of a recorded run (one encoder, an encoder with its test-time MLP, or TNCSE's "
        "two encoders) as a directory that sentence_transformers.SentenceTransformer loads, with a model card "
        "(README.md) generated from the run record. The export is loaded back and must encode to the archive's "
        "embeddings within 1e-5, or nothing is written. An existing directory is never overwritten.",
    ),
    Command(
        "site",
        "the executed notebooks as a static HTML site (index: every paper's coverage)",
        cmd_site,
        profile_argument,
        "Writes site/<profile>/index.html (SENTEMB_SITE moves it) and one page per executed notebook; the pages "
        "need no network.",
    ),
    Command(
        "data",
        "verify (sha256) or fetch the registered data files",
        cmd_data,
        add_data_arguments,
        "verify: check every registered file (or the named datasets') against registry.tsv. fetch: download datasets "
        "into $SENTEMB_CACHE/data, resumably (an interrupted download continues when the command is run again), and "
        "check each file's hash. A run that needs a missing file downloads its dataset itself unless "
        "SENTEMB_NO_DOWNLOAD=1.",
    ),
    Command(
        "runs",
        "list run records (a record that cannot be read is named on stderr, exit 1)",
        cmd_runs,
        profile_argument,
        "List the run records of a profile, one line each. A record file that cannot be read (truncated, "
        "corrupt, not a complete record) is not listed: it is named on stderr with the fix (delete it; 'run' "
        "computes it again), and the exit status is 1. Exit 0: every record was read.",
    ),
    Command(
        "reported",
        "numbers a paper prints in more than one table, and whether they agree",
        cmd_reported,
        add_reported_arguments,
        "Cross-table self-check of the papers' reported numbers (papers/<paper>/reported/; which cells are "
        "copies: same_cells.csv). Lists the disagreeing copies (--all: every repeated number); exit 1 if a "
        "disagreeing copy carries no 'inconsistent:' note.",
    ),
    Command(
        "pretrain",
        "MLM-pretrain a small BERT from the mirror's training text",
        cmd_pretrain,
        add_pretrain_arguments,
        "Masked language modelling (15 %; 80/10/10) of a BERT-style encoder on the mirror's training text: WikiText-2"
        " train articles, the leads of Wikipedia's vital articles and the head of SimCSE's wiki1m, less every unit "
        "sharing a 13-word run with WikiText-2 valid or test; packed into sequences of --max-len tokens with MiniLM's"
        " uncased BERT vocabulary. AdamW, linear warm-up and decay, bf16 autocast (--precision; the MLM head and loss"
        " in fp32), seeded. The held-out MLM loss (WikiText-2 valid) is logged every --eval-every steps, when the "
        "state is also saved: the same command continues an interrupted run to the same result; the weights of the "
        "lowest held-out loss are kept. Writes <out>/model (bf16 safetensors, config, tokenizer) and "
        "<out>/record.json (settings, text sha256, curves, device, versions, commit, wall time, the command); "
        "--publish makes it a backbone under shared/models/. The raw profile's backbone is made on a GPU by "
        "benchmarks/gpu_pretrain.py or on CPUs by this command, continued across sessions (docs/raw-backbone.md); its"
        " model card has the exact command, and python -m sentemb.pretrain_check tests a run's checkpoint with "
        "SimCSE's STS-B dev curves.",
    ),
    Command(
        "pretrain-vocab",
        "train a WordPiece vocabulary on the pretraining text (to commit)",
        cmd_pretrain_vocab,
        add_pretrain_vocab_arguments,
        "WordPiece of --size tokens (tokenizers' trainer, BERT's uncased normaliser and pre-tokeniser) on the "
        "pretraining text alone, less every unit sharing a 13-word run with WikiText-2 valid or test, written to "
        "shared/sentemb/pretrain/vocabularies/wordpiece-<size>.json. Commit it: the trainer is not the same in every "
        "process, so the committed file is the vocabulary, and a different one under an existing name is refused.",
    ),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sentemb", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        p = sub.add_parser(command.name, help=command.summary, description=command.description)
        if command.add_arguments is not None:
            command.add_arguments(p)
        p.set_defaults(func=command.handler)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _threads(args.threads)
    try:
        return args.func(args)
    except SentembError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "interrupted: finished runs are saved; an unfinished training run resumes from its last "
            "evaluation when started again",
            file=sys.stderr,
        )
        return 130
