"""MTEB's tasks from the hub (a researcher's machine) against the offline mirror's copies (ours), where both exist.

With ``SENTEMB_DATA`` unset, MTEB's tasks load through ``mteb`` from the Hugging Face hub; with the mirror, the
archive injects the mirror's copies (:mod:`sentemb.data.mteb_mirror`). The committed records were computed from the
mirror's. This test loads each of the mirror's tasks both ways and compares the evaluated rows (texts, scores or
labels, split by split), so that numbers computed from the hub's copies are the mirror's numbers. It needs the
mirror and the hub at once, which no CI machine has (``HF_HUB_OFFLINE=1``): it runs where both are reachable.
"""

from __future__ import annotations

import os

import pytest
from conftest import mirror

from sentemb.data.mteb_mirror import MIRROR_TASKS, load_mirror_task

pytestmark = [
    pytest.mark.skipif(mirror() is None, reason="needs the offline mirror (SENTEMB_DATA)"),
    pytest.mark.skipif(
        os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0"), reason="needs the Hugging Face hub (HF_HUB_OFFLINE set)"
    ),
]


@pytest.fixture(scope="module")
def hub_reachable():
    """One short probe of the hub for the whole module: without a network each task's load would retry for ~20 s
    before its skip (17 tasks, minutes of the suite)."""
    import urllib.error
    import urllib.request

    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    try:
        urllib.request.urlopen(f"{endpoint}/api/datasets/mteb/stsbenchmark-sts", timeout=5).close()
    except (urllib.error.URLError, OSError) as exc:  # an HTTPError answered: reachable (e.g. a rate limit)
        if not isinstance(exc, urllib.error.HTTPError):
            pytest.skip(f"the hub ({endpoint}) does not answer from this machine: {type(exc).__name__}")


def _rows(dataset) -> dict[str, list[tuple]]:
    """Each split's rows as sorted tuples of their text and target columns (subsets flattened)."""
    found: dict[str, list[tuple]] = {}
    for key, value in dataset.items():
        if hasattr(value, "column_names"):  # a datasets.Dataset: one split
            columns = [c for c in value.column_names if c in ("sentence1", "sentence2", "score", "text", "label")]
            found[str(key)] = sorted(zip(*(value[c] for c in columns)))
        elif isinstance(value, dict):  # a subset (e.g. "en") holding splits, or retrieval's corpus/queries
            for inner, rows in _rows(value).items():
                found[f"{key}/{inner}"] = rows
    return found


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MIRROR_TASKS))
def test_hub_rows_equal_the_mirror_rows(name, hub_reachable):
    from sentemb.evaluate.mteb_adapter import benchmark_task

    try:
        task = benchmark_task(name)
        task.load_data()
    except Exception as exc:  # no network: the hub is not reachable from this machine
        pytest.skip(f"the hub did not answer for {name}: {type(exc).__name__}")
    task.dataset_transform()
    injected = benchmark_task(name)
    injected.dataset = load_mirror_task(name)
    injected.dataset_transform()
    hub, ours = _rows(task.dataset), _rows(injected.dataset)
    shared = set(hub) & set(ours)
    assert shared, f"{name}: no split in common (hub {sorted(hub)}, mirror {sorted(ours)})"
    for split in sorted(shared):
        assert hub[split] == ours[split], f"{name} {split}: the hub's rows differ from the mirror's"
