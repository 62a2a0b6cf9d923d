"""benchmarks/bench_vs_sentence_transformers.py at tiny scale on a CPU: every kind of variant reports real steps, the
archive's and sentence-transformers' unsupervised steps are measured alike, both train, the speed-ups change the
step's settings and not its first loss, and gpu_plan.py scales the plan by the ratios."""

import importlib.util
import json
import math

import pytest

from sentemb import settings

SCRIPT = settings.REPO_ROOT / "benchmarks" / "bench_vs_sentence_transformers.py"
BATCH, SUP_BATCH, MAX_LEN, DECLUTR_BATCH, SPAN = 4, 8, 16, 2, 16
VARIANTS = [
    "archive_unsup",
    "st_unsup",
    "archive_unsup+all",
    "archive_sup",
    "archive_simcsepp",
    "archive_declutr",
    "archive_declutr+all",
    "archive_encode+eval_batch=512",
]
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
    monkeypatch.setenv("SENTEMB_COMPILE_BACKEND", "aot_eager")  # compile's graph capture, without codegen
    monkeypatch.syspath_prepend(str(SCRIPT.parent))  # the script imports its folder's modules
    loader = importlib.util.spec_from_file_location("bench_vs_sentence_transformers", SCRIPT)
    script = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(script)
    output = tmp_path / "summary.json"
    argv = ["--device", "cpu", "--model-size", "tiny", "--batch", str(BATCH), "--sup-batch", str(SUP_BATCH)]
    argv += ["--max-len", str(MAX_LEN), "--warmup", "1", "--steps", "2", "--output", str(output)]
    argv += ["--declutr-batch", str(DECLUTR_BATCH), "--declutr-max-span", str(SPAN), "--encode-sentences", "40"]
    with pytest.raises(SystemExit):
        script.parse_args([*argv, "--variants", "archive_unsup+fused"])  # an unknown speed-up is refused
    assert script.main([*argv, "--same-process", "--variants", *VARIANTS]) == 0  # a measurement: a process each
    summary = json.loads(output.read_text())
    variants = summary["variants"]
    assert list(variants) == VARIANTS
    assert summary["device"].startswith("cpu") and summary["packages"]["sentence-transformers"]
    encode = variants.pop("archive_encode+eval_batch=512")
    assert encode["sentences"] == 40 and encode["eval_batch"] == 512 and encode["ms_per_1000_sentences"] > 0
    declutr, fast_declutr = variants.pop("archive_declutr"), variants.pop("archive_declutr+all")
    assert [p["sequences"] for p in declutr["passes"]] == [2 * DECLUTR_BATCH, 4 * DECLUTR_BATCH]  # anchors, positives
    assert all(p["padded_length"] <= SPAN + 2 for p in declutr["passes"])
    assert fast_declutr["speedups"] == ["fused_adamw", "sync_free", "compile", "pad_multiple=64"]
    assert fast_declutr["first_loss"] == pytest.approx(declutr["first_loss"], rel=0.05)  # dropout masks differ
    fast = variants.pop("archive_unsup+all")
    assert (
        fast["speedups"] == ["fused_adamw", "sync_free", "compile", "pad_multiple=8"] and "(fused)" in fast["optimizer"]
    )
    assert set(summary["speedup_over_plain"]) == {"archive_unsup+all", "archive_declutr+all"}
    assert summary["archive_unsup_over_st_unsup_ms"] > 0 and summary["archive_unsup+all_over_st_unsup_ms"] > 0

    for name, result in variants.items():
        assert result["variant"] == name and result["precision"] == "fp32" and result["max_len"] == MAX_LEN
        assert result["ms_per_step"] > 0 and result["sentences_per_second"] > 0
        assert result["sentences_per_second"] == pytest.approx(result["batch"] / result["ms_per_step"] * 1000, rel=0.01)
        assert result["peak_memory_mib"] is None and result["mfu"] is None  # CUDA only
        assert result["flops_per_step"] == tiny_flops_per_step(result["sequences_per_step"])
        assert math.isfinite(result["first_loss"]) and math.isfinite(result["last_loss"])
        assert result["weight_update_norm"] > 0  # the optimizer moved the first layer's query weights

    archive, st = variants["archive_unsup"], variants["st_unsup"]
    assert archive["speedups"] == [] and "clipped at norm 1.0" in archive["optimizer"]
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

    plan = importlib.util.spec_from_file_location("gpu_plan", SCRIPT.parent / "gpu_plan.py")
    gpu_plan = importlib.util.module_from_spec(plan)
    plan.loader.exec_module(gpu_plan)
    ratios, against_st = gpu_plan.speedup_ratios(str(output), "+all")
    assert set(ratios) == {"unsup", "declutr"}  # the kinds measured with and without
    assert ratios["unsup"] == pytest.approx(fast["ms_per_step"] / archive["ms_per_step"])
    assert against_st["archive_over_st_after"] == summary["archive_unsup+all_over_st_unsup_ms"]
