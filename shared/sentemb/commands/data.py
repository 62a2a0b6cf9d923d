"""``python -m sentemb data``: verify the registered data files, or fetch the evaluation sets."""

from __future__ import annotations

import argparse

from sentemb.errors import SentembError


def cmd_data(args) -> int:
    from sentemb.data.files import verified_path
    from sentemb.data.registry import files_of

    if args.action == "fetch":
        from sentemb.data.download import downloadable, fetch

        for name in args.datasets or downloadable():
            for path in fetch(name):
                print(path)
        return 0
    from sentemb.data.registry import datasets

    failures = 0
    for name in args.datasets or datasets():
        for entry in files_of(name):
            try:
                verified_path(entry.relpath, download=False)  # verify checks, fetch downloads
                print(f"ok       {entry.relpath}")
            except SentembError as exc:
                failures += 1
                print(f"PROBLEM  {exc}")
    return 1 if failures else 0


def add_data_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("verify", "fetch"))
    p.add_argument(
        "datasets",
        nargs="*",
        help="dataset names of the registry. Default: for verify, all of them; for fetch, every dataset with a "
        "download source (the evaluation sets sts12-16, stsb, sickr, mr, cr, subj, mpqa, sst2, sst5, trec, mrpc from "
        "senteval.tar, SentEval's probing_* files; the full profile's wiki1m_for_simcse and nli_for_simcse only when "
        "named), skipping what the download cache already holds verified",
    )
