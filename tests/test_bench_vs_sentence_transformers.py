"""benchmarks/bench_vs_sentence_transformers.py at tiny scale on a CPU: every variant runs in its own process and
reports real steps, the archive's and sentence-transformers' unsupervised steps are measured alike, and both train."""

import importlib.util
import json
import math

import pytest

from sentemb import settings

SCRIPT = settings.REPO_ROOT / "benchmarks" / "bench_vs_sentence_transformers.py"
BATCH, SUP_BATCH, MAX_LEN = 4, 8, 16
TINY_LAYERS, TINY_HIDDEN, TINY_INTERMEDIATE = 2, 64, 128


def tiny_flops_per_step(sequences: int) -> int:
    """The docstring's formula for the tiny BERT, its layer parameters counted by hand: 4 attention projections,
    the feed-forward pair and 2 LayerNorms per layer."""
    h, i = TINY_HIDDEN, TINY_INTERMEDIATE
    per_layer = 4 * (h * h + h) + (h * i + i) + (i * h + h) + 2 * 2 * h
    tokens = MAX_LEN  # the generated sentences are longer than MAX_LEN word pieces: every batch is cut to it
    return sequences * (6 * TINY_LAYERS * per_layer * tokens + 12 * TINY_LAYERS * tokens**2 * h)


@pytest.mark.slow
def test_every_variant_times_real_steps_and_both_unsupervised_steps_train(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.syspath_prepend(str(SCRIPT.parent))  # the script imports its folder's modules
    loader = importlib.util.spec_from_file_location("bench_vs_sentence_transformers", SCRIPT)
    script = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(script)
    output = tmp_path / "summary.json"
    argv = ["--device", "cpu", "--model-size", "tiny", "--batch", str(BATCH), "--sup-batch", str(SUP_BATCH)]
    argv += ["--max-len", str(MAX_LEN), "--warmup", "1", "--steps", "2", "--output", str(output)]
    assert script.main([*argv, "--same-process"]) == 0  # in this process: a measurement runs one process a variant
    summary = json.loads(output.read_text())
    variants = summary["variants"]
    assert list(variants) == ["archive_unsup", "st_unsup", "archive_sup", "archive_simcsepp"]
    assert summary["device"].startswith("cpu") and summary["packages"]["sentence-transformers"]

    for name, result in variants.items():
        assert result["variant"] == name and result["precision"] == "fp32" and result["max_len"] == MAX_LEN
        assert result["ms_per_step"] > 0 and result["sentences_per_second"] > 0
        assert result["sentences_per_second"] == pytest.approx(result["batch"] / result["ms_per_step"] * 1000, rel=0.01)
        assert result["peak_memory_mib"] is None and result["mfu"] is None  # CUDA only
        assert result["flops_per_step"] == tiny_flops_per_step(result["sequences_per_step"])
        assert math.isfinite(result["first_loss"]) and math.isfinite(result["last_loss"])
        assert result["weight_update_norm"] > 0  # the optimizer moved the first layer's query weights

    archive, st = variants["archive_unsup"], variants["st_unsup"]
    same = ("model_size", "batch", "max_len", "precision", "warmup_steps", "timed_steps", "sequences_per_step")
    assert {key: archive[key] for key in same} == {key: st[key] for key in same}
    assert (archive["batch"], archive["sequences_per_step"], archive["tokens_per_sequence"]) == (BATCH, 8, MAX_LEN)
    assert st["tokens_per_sequence"] == MAX_LEN
    # an untrained encoder on identical pairs: every cosine is close, so InfoNCE over B rows starts near log B
    for result in (archive, st):
        assert 0.25 * math.log(BATCH) < result["first_loss"] < math.log(BATCH) + 1.0, result
    with_trainer = importlib.util.find_spec("accelerate") is not None
    assert st["loop"] == (
        "SentenceTransformerTrainer.train" if with_trainer else "the trainer's inner step, written out"
    )
    assert "fused" in st["optimizer"] and "clipped at norm 1.0" in st["optimizer"]

    assert (variants["archive_sup"]["batch"], variants["archive_sup"]["sequences_per_step"]) == (
        SUP_BATCH,
        3 * SUP_BATCH,
    )
    simcse_pp = variants["archive_simcsepp"]
    assert simcse_pp["objective_params"]["negatives"] == "off_dropout" and simcse_pp["objective_params"]["dcl_weight"]
    assert simcse_pp["sequences_per_step"] == 3 * BATCH  # two dropout views and the off-dropout pass
