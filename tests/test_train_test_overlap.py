"""The SNLI dev+test training stand-in shares about 1 % of its sentences with STS-B test and SICK test."""

from conftest import needs_mirror

from sentemb.analysis.train_test_overlap import normalise, sentence_overlap
from sentemb.data.corpora import load_nli_triples
from sentemb.data.sts import load_task


def test_normalise_ignores_case_punctuation_and_spacing():
    assert (
        normalise("A Man  is playing, a Guitar.")
        == normalise("a man is playing a guitar")
        == "a man is playing a guitar"
    )
    assert sentence_overlap(["A dog runs.", "A cat."], ["a dog runs", "A bird.", "a dog runs"]) == {
        "test_sentences": 2,
        "in_training": 1,
    }


@needs_mirror
def test_snli_devtest_overlaps_stsb_and_sick_test():
    training = [s for triple in load_nli_triples("snli_devtest_for_simcse") for s in triple]
    counts = {
        task: sentence_overlap(training, load_task(task).parts["test"].sentences())
        for task in ("STSBenchmark", "SICKRelatedness")
    }
    assert counts["STSBenchmark"] == {"test_sentences": 2549, "in_training": 31}
    assert counts["SICKRelatedness"] == {"test_sentences": 5007, "in_training": 60}
