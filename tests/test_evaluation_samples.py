"""The smoke profile evaluates on seeded samples (``eval_pairs``, ``transfer_examples``; sentemb.evaluate.subsets): at
most N pairs of each STS subset or split and N examples of each transfer split, said by its specs, records, derived
records and captions; the other profiles evaluate on everything, with the specs (and run ids) they had before."""

import dataclasses

import numpy as np
import pytest
from conftest import TINY_SPEC, needs_mirror

from sentemb.data.sts import ALL_TASKS, load_task
from sentemb.data.transfer import TRANSFER_TASKS, Split, TransferTask, load_transfer_task
from sentemb.errors import ConfigError
from sentemb.evaluate.subsets import (
    load_sts_task,
    sample_pairs,
    sample_positions,
    sample_sts_task,
    sample_transfer_task,
)
from sentemb.evaluate.suite import evaluate_model
from sentemb.paper import registry
from sentemb.profiles import PROFILES, get_profile
from sentemb.runs.derived import sample_param
from sentemb.spec import SAMPLE_FIELDS, RunSpec

SMOKE = get_profile("smoke")


def test_a_sample_is_seeded_ordered_and_all_when_small_enough():
    first = sample_positions(1000, 100)
    assert first == sample_positions(1000, 100) and first == sorted(first) and len(set(first)) == 100
    assert sample_positions(1000, 100, seed=1) != first
    assert sample_positions(100, 100) is None and sample_positions(50, 100) is None
    assert sample_positions(9, None) is None


def test_sampled_pairs_keep_their_gold_scores():
    task = load_task("STSBenchmark", synthetic=True)  # 60 generated pairs per split
    full, sampled = task.parts["test"], sample_pairs(task.parts["test"], 10)
    gold = dict(zip(zip(full.sent1, full.sent2), full.scores))
    assert len(sampled) == 10
    assert all(gold[(a, b)] == y for a, b, y in zip(sampled.sent1, sampled.sent2, sampled.scores))
    assert sample_sts_task(task, None) is task and sample_pairs(full, 60) is full


def test_sampled_transfer_splits_keep_their_labels_and_both_sentences_of_a_pair():
    split = Split(tuple(f"a{i}" for i in range(50)), np.arange(50) % 3, tuple(f"b{i}" for i in range(50)))
    task = TransferTask("toy", "split", 3, {"train": split, "test": dataclasses.replace(split, second=None)})
    sampled = sample_transfer_task(task, 20)
    for part in sampled.splits.values():
        assert len(part.first) == len(part.labels) == 20
        assert all(int(s[1:]) % 3 == y for s, y in zip(part.first, part.labels))
    assert [int(s[1:]) for s in sampled.splits["train"].second] == [int(s[1:]) for s in sampled.splits["train"].first]
    assert sampled.splits["test"].second is None and sample_transfer_task(task, None) is task


def test_only_the_profiles_that_exercise_the_code_sample_and_their_specs_say_so():
    assert SMOKE.eval_pairs and SMOKE.transfer_examples
    for name, profile in PROFILES.items():
        if profile.exercises_only:  # smoke and rehearsal: their numbers measure nothing
            assert (profile.eval_pairs, profile.transfer_examples) == (SMOKE.eval_pairs, SMOKE.transfer_examples)
        else:
            assert profile.eval_pairs is None and profile.transfer_examples is None, name
    for paper_name, paper in registry().items():
        for specs in paper.grid("smoke").values():
            for spec in specs:
                assert (spec.eval_pairs, spec.transfer_examples) == (SMOKE.eval_pairs, SMOKE.transfer_examples)
        for specs in paper.grid("small", extended=True).values():
            for spec in specs:  # not in the canonical form: the run ids of the committed records are unchanged
                assert not set(SAMPLE_FIELDS) & set(spec.as_dict()), paper_name


def test_a_sample_is_part_of_the_run_id_and_must_be_a_positive_count():
    plain = RunSpec(**TINY_SPEC)
    sampled = dataclasses.replace(plain, eval_pairs=100)
    assert sampled.run_id != plain.run_id and sampled.as_dict()["eval_pairs"] == 100
    assert RunSpec.from_dict(sampled.as_dict()) == sampled and "eval_pairs" not in plain.as_dict()
    for bad in (0, -5, 2.5, True):
        with pytest.raises(ConfigError, match="eval_pairs"):
            dataclasses.replace(plain, eval_pairs=bad)
    with pytest.raises(ConfigError, match="transfer_examples"):
        dataclasses.replace(plain, transfer_examples=0)


def test_derived_records_name_the_sample_only_when_there_is_one():
    smoke = RunSpec(**{**TINY_SPEC, "eval_pairs": 100, "transfer_examples": 500})
    assert sample_param({"spec": smoke.as_dict()}, "eval_pairs") == {"eval_pairs": 100}
    assert sample_param({"spec": smoke.as_dict()}, "transfer_examples") == {"transfer_examples": 500}
    assert sample_param({"spec": RunSpec(**TINY_SPEC).as_dict()}, "eval_pairs") == {}
    with pytest.raises(ValueError):
        sample_param({"spec": smoke.as_dict()}, "steps")


def test_the_smoke_profile_says_what_it_evaluated_on():
    assert "samples" in SMOKE.description  # the notebooks' banner and the site's index show it with the caveat
    for text in (SMOKE.caveat, SMOKE.substitutes()):  # the caveat: model cards too; substitutes(): captions
        assert f"{SMOKE.eval_pairs} pairs" in text and f"{SMOKE.transfer_examples} examples" in text
    assert "seeded samples" not in get_profile("small").substitutes()


@needs_mirror
def test_smoke_evaluates_at_most_its_pairs_per_sts_subset_or_split():
    encoder_calls = []

    def encode(sentences):
        encoder_calls.append(len(sentences))
        return np.random.default_rng(0).normal(size=(len(sentences), 8)).astype(np.float32)

    results, lookup = evaluate_model(encode, ["sts"], sts_splits=("dev", "test"), sts_pairs=SMOKE.eval_pairs)
    tasks = results["sts_simcse"]["tasks"]
    assert set(tasks) == set(ALL_TASKS)
    for name, result in tasks.items():
        counts = (
            [s["n"] for s in result["subsets"].values()]
            if "subsets" in result
            else [s["n"] for s in result["splits"].values()]
        )
        assert counts and max(counts) <= SMOKE.eval_pairs, name
    assert len(lookup) == encoder_calls[0] <= 2 * SMOKE.eval_pairs * sum(len(load_sts_task(t).parts) for t in ALL_TASKS)
    stsb = load_sts_task("STSBenchmark", pairs=SMOKE.eval_pairs)
    assert {name: len(part) for name, part in stsb.parts.items()} == dict.fromkeys(("train", "dev", "test"), 100)


@needs_mirror
def test_smoke_evaluates_at_most_its_examples_per_transfer_split():
    sampled = sample_transfer_task(load_transfer_task("SST2"), SMOKE.transfer_examples)
    assert {name: len(split.labels) for name, split in sampled.splits.items()} == dict.fromkeys(
        ("train", "dev", "test"), SMOKE.transfer_examples
    )
    assert set(sampled.splits["train"].labels) == {0, 1}
    for name in TRANSFER_TASKS:
        task = sample_transfer_task(load_transfer_task(name), SMOKE.transfer_examples)
        assert max(len(split.labels) for split in task.splits.values()) <= SMOKE.transfer_examples, name


@needs_mirror
def test_mteb_sts_tasks_are_scored_on_the_same_number_of_pairs():
    from sentemb.evaluate.mteb_adapter import _task, sample_sts_pairs

    for name, subsets in (("STS12", None), ("STS17", "en-en")):
        task = _task(name)
        sample_sts_pairs(task, 40)
        splits = task.dataset[subsets] if subsets else task.dataset
        assert len(splits["test"]) == 40, name
    classification = _task("Banking77Classification")
    before = len(classification.dataset["test"])
    sample_sts_pairs(classification, 40)  # only STS tasks are sampled
    assert len(classification.dataset["test"]) == before
