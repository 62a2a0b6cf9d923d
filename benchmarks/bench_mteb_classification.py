"""Speed of the mirror's MTEB classification tasks, with and without converting the label column once
(``sentemb.evaluate.mteb_adapter.labels_converted_once``); rerun it, it is not a test. Needs SENTEMB_DATA.

    .venv/bin/python benchmarks/bench_mteb_classification.py [--tasks EmotionClassification,...] [--repeats 2]

Each task is scored on the untrained all-MiniLM-L6-v2 (mean pooling), in one process, the two settings interleaved
(so drift hits both alike); the main scores must agree to the last digit. Prints a JSON summary.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

from benchmark_io import emit, machine, require_mirror


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default=None, help="comma-separated; default: the mirror's classification tasks")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    require_mirror()
    warnings.simplefilter("ignore")
    from sentemb.data.mteb_mirror import MIRROR_TASKS
    from sentemb.evaluate import mteb_adapter
    from sentemb.models.encoder import SentenceEncoder

    tasks = args.tasks.split(",") if args.tasks else [t for t in MIRROR_TASKS if t.endswith("Classification")]
    encoder = SentenceEncoder.from_name("all-MiniLM-L6-v2", "avg")
    converted = mteb_adapter.labels_converted_once
    seconds = {"converted once": [], "mteb as it is": []}
    scores = {}
    for _ in range(args.repeats):
        for setting in seconds:
            mteb_adapter.labels_converted_once = converted if setting == "converted once" else (lambda task: None)
            started = time.perf_counter()
            result = mteb_adapter.run_mteb(encoder, lookup=None, tasks=tasks, batch_size=64, precision="fp32")
            seconds[setting].append(time.perf_counter() - started)
            scores.setdefault(setting, {t: r.get("main_score") for t, r in result["tasks"].items()})
    mteb_adapter.labels_converted_once = converted
    emit(
        {
            "benchmark": "mteb_classification",
            "machine": machine(),
            "tasks": tasks,
            "seconds": seconds,
            "same_scores": scores["converted once"] == scores["mteb as it is"],
            "scores": scores["converted once"],
        },
        args.output,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
