"""Arguments and checks that several subcommands share (``python -m sentemb``)."""

from __future__ import annotations

import argparse

from sentemb.errors import SentembError


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def selected_papers(value: str, papers: list[str]) -> list[str]:
    """The papers a --paper value names (comma-separated, or all: every one of ``papers``, in their order)."""
    selected = list(papers) if value == "all" else [p.strip() for p in value.split(",") if p.strip()]
    unknown = [p for p in selected if p not in papers]
    if unknown:
        raise SentembError(f"unknown paper(s) {unknown}: choose from {', '.join(papers)} or all")
    return selected


def profile_argument(p: argparse.ArgumentParser, default: str | None = "small", help_text: str | None = None) -> None:
    from sentemb.profiles import PROFILES

    p.add_argument("--profile", default=default, choices=list(PROFILES), help=help_text)


def extended_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--extended",
        action="store_true",
        help="also the rows a paper keeps outside its small-profile "
        "time budget (each paper's README lists them; smoke and full run them anyway)",
    )


PAPER_HELP = "a name of the registry (python -m sentemb papers lists them)"
