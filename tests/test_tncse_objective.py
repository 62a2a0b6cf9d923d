"""TNCSE's two-encoder objective through the core: gradients to both encoders, exact resume of both, the summed
evaluated model (and its saved best/), stage-1 encoders from other runs (init_runs), Table 4's switches, and the
errors for bad parameters."""

import random

import numpy as np
import pytest
import torch
from conftest import needs_mirror

from sentemb import settings
from sentemb.data.sts import load_task
from sentemb.errors import ConfigError
from sentemb.models.encoder import SentenceEncoder
from sentemb.models.saved import is_saved_model, load_saved_model
from sentemb.models.summed_encoders import SummedEncoders
from sentemb.objectives.registry import build_objective
from sentemb.objectives.tensor_norm import interleaved_infonce, tensor_norm_loss
from sentemb.objectives.tncse import TNCSE, interleaved_twice
from sentemb.report.reproduced import deterministic
from sentemb.runs import execute
from sentemb.runs.derived import ensure_derived
from sentemb.spec import RunSpec
from sentemb.train.loop import prepare_objective, train

TINY = dict(
    profile="smoke",
    backbone="tiny-random-bert",
    pooler="cls_before_pooler",
    objective="tncse",
    train_data="wiki_sentences_combined",
    steps=6,
    batch_size=8,
    eval_every=3,
    lr=1e-3,
    max_len=16,
    weight_decay=0.01,
    lr_schedule="constant",
    final_eval="stsb_dev",
    synthetic_data=True,
)
SENTENCES = [f"sentence number {i} is about topic {i % 3}" for i in range(8)]


def _two_encoders(seeds=(0, 0)):
    """Two tiny encoders. With one seed they start equal, as TNCSE's stage-1 pair starts from one pre-trained model:
    two random encoders can have negative [CLS] cosines, where Eq. 6's -log(cos) is NaN (paper form)."""
    return [SentenceEncoder.from_name("tiny-random-bert", "cls_before_pooler", seed=s) for s in seeds]


def test_both_encoders_receive_gradients_and_every_term_counts():
    objective = build_objective("tncse", {}, _two_encoders(), max_len=16).train()
    loss = objective(SENTENCES, random.Random(0))
    loss.backward()
    for encoder in (objective.encoder, objective.encoder_2):
        grads = [p.grad for p in encoder.backbone.parameters() if p.requires_grad]
        assert any(g is not None and g.abs().sum() > 0 for g in grads)
        assert encoder.backbone.pooler.dense.weight.grad.abs().sum() > 0  # the norm terms reach the pooler
    assert {n for n, _ in objective.named_parameters()} >= {
        n for n, _ in objective.encoder_2.named_parameters(prefix="encoder_2")
    }


def _views(n_sentences=4, dim=16):
    """(h1, h2, p1, p2): interleaved rows, two noisy views per sentence and encoder ([CLS] cosines > 0)."""
    base = torch.randn(n_sentences, dim).repeat_interleave(2, dim=0)
    return tuple(base + 0.3 * torch.randn_like(base) for _ in range(4))


def test_table4_switches_select_the_terms_of_eq8():
    torch.manual_seed(0)
    h1, h2, p1, p2 = _views()
    encoders = _two_encoders()
    full = build_objective("tncse", {}, encoders, max_len=16)
    terms = full.loss.terms(h1, h2, p1, p2)
    assert all(torch.isfinite(t) for t in terms.values())
    assert torch.allclose(full.selected_loss(h1, h2, p1, p2), sum(terms.values()))
    ictn_only = build_objective("tncse", {"nce": False, "icnce": False}, encoders, max_len=16)
    assert torch.allclose(ictn_only.selected_loss(h1, h2, p1, p2), terms["tn_1_to_2"] + terms["tn_2_to_1"])
    nce_icnce = build_objective("tncse", {"ictn": False}, encoders, max_len=16)
    assert torch.allclose(nce_icnce.selected_loss(h1, h2, p1, p2), terms["nce_1"] + terms["nce_2"] + terms["icnce"])


def test_the_loss_and_its_gradient_are_fp32_under_bf16_autocast():
    torch.manual_seed(0)
    tensors = _views(8, 32)
    objective = build_objective("tncse", {}, _two_encoders(), max_len=16)
    results = []
    for autocast in (False, True):
        leaves = [t.clone().requires_grad_(True) for t in tensors]
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = objective.selected_loss(*leaves)
        loss.backward()
        results.append((loss.detach(), [leaf.grad for leaf in leaves]))
    (loss_32, grads_32), (loss_bf16, grads_bf16) = results
    assert torch.isfinite(loss_32)
    assert loss_bf16.dtype == torch.float32 and torch.allclose(loss_bf16, loss_32, rtol=1e-6, atol=1e-6)
    for a, b in zip(grads_32, grads_bf16):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-7)


def test_single_encoder_probe_is_infonce_plus_the_norm_term_between_its_views():
    encoder = _two_encoders()[0]
    objective = build_objective("tncse_single", {}, encoder, max_len=16).eval()
    with torch.no_grad():
        h, p = encoder.forward_with_pooler_output(**encoder.tokenize(interleaved_twice(SENTENCES), 16))
        expected = interleaved_infonce(h, h, 0.05) + tensor_norm_loss(h, h, p, p)
        assert torch.allclose(objective(SENTENCES, random.Random(0)), expected)


def _symmetric_2b_infonce(h: torch.Tensor, temperature: float) -> torch.Tensor:
    """Eq. 4 over 2B interleaved rows, row by row: row r's positive is r XOR 1, every other row except r a negative."""
    unit = h / h.norm(dim=-1, keepdim=True)
    losses = []
    for r in range(h.shape[0]):
        others = [j for j in range(h.shape[0]) if j != r]
        logits = torch.stack([unit[r] @ unit[j] for j in others]) / temperature
        losses.append(torch.logsumexp(logits, 0) - logits[others.index(r ^ 1)])
    return torch.stack(losses).mean()


def test_the_single_objective_without_l_tn_is_the_symmetric_2b_row_infonce_and_its_gradient():
    """``tn_weight=0`` (Table 5's SimCSE matched to TNCSE-Single) is Eq. 4 alone: the same value and gradient as a
    row-by-row symmetric InfoNCE over the 2B rows, nothing reaches the pooler output, and a negative [CLS] cosine
    (NaN in Eq. 6 as printed) does not reach the loss."""
    torch.manual_seed(0)
    h_fixed, _, p_fixed, _ = _views(n_sentences=5, dim=16)
    h_fixed[1] = -h_fixed[0]  # sentence 0's two views point apart: -log(cos) of Eq. 6 is NaN without the clamp
    encoder = _two_encoders()[0]
    matched = build_objective("tncse_single", {"tn_weight": 0.0}, encoder, max_len=16)
    paper = build_objective("tncse_single", {}, encoder, max_len=16)
    assert matched.tn_weight == 0.0 and paper.tn_weight == 1.0
    h, p = h_fixed.clone().requires_grad_(True), p_fixed.clone().requires_grad_(True)
    loss = matched.loss(h, p)
    loss.backward()
    h_ref = h_fixed.clone().requires_grad_(True)
    expected = _symmetric_2b_infonce(h_ref, 0.05)
    expected.backward()
    assert torch.isfinite(loss) and torch.allclose(loss, expected, rtol=1e-6, atol=1e-6)
    assert torch.allclose(h.grad, h_ref.grad, rtol=1e-5, atol=1e-7) and h.grad.abs().sum() > 0
    assert p.grad is None
    # the paper's weight adds the norm term (NaN here: Eq. 6 as printed), so the check above can tell them apart
    assert torch.isnan(paper.loss(h_fixed, p_fixed))
    h_ok = h_fixed.clone()
    h_ok[1] = h_fixed[0] + 0.3 * torch.randn(16)
    half = build_objective("tncse_single", {"tn_weight": 0.5}, encoder, max_len=16)
    norm_term = tensor_norm_loss(h_ok, h_ok, p_fixed, p_fixed)
    assert norm_term > 1e-3
    assert torch.allclose(paper.loss(h_ok, p_fixed), _symmetric_2b_infonce(h_ok, 0.05) + norm_term, atol=1e-6)
    assert torch.allclose(half.loss(h_ok, p_fixed), _symmetric_2b_infonce(h_ok, 0.05) + 0.5 * norm_term, atol=1e-6)
    with torch.no_grad():  # and through the encoder, as a training step computes it
        rows = interleaved_twice(SENTENCES)
        h_enc, _ = encoder.eval().forward_with_pooler_output(**encoder.tokenize(rows, 16))
        assert torch.allclose(
            matched.eval()(SENTENCES, random.Random(0)), _symmetric_2b_infonce(h_enc, 0.05), atol=1e-6
        )
    with pytest.raises(ConfigError, match="tn_weight"):
        build_objective("tncse_single", {"tn_weight": -1.0}, encoder, max_len=16)


def test_the_evaluated_embedding_is_the_sum_and_best_reloads_to_it(tmp_path):
    objective = build_objective("tncse", {}, _two_encoders(seeds=(0, 1)), max_len=16)
    model = objective.evaluation_encoder()
    assert isinstance(model, SummedEncoders) and model.dim == 64 and not model.packaged_with_normalize
    expected = objective.encoder.encode(SENTENCES) + objective.encoder_2.encode(SENTENCES)
    assert np.allclose(model.encode(SENTENCES), expected, atol=1e-6)
    model.save(tmp_path / "best")
    assert is_saved_model(tmp_path / "best")
    reloaded = load_saved_model(tmp_path / "best", "cls_before_pooler")
    assert isinstance(reloaded, SummedEncoders)
    assert np.array_equal(reloaded.encode(SENTENCES), model.encode(SENTENCES))


def test_known_member_embeddings_are_reused_and_only_the_rest_is_encoded(monkeypatch):
    members = _two_encoders(seeds=(0, 1))
    plain = SummedEncoders(members).encode(SENTENCES)
    known = [{s: v for s, v in zip(SENTENCES[:5], members[0].encode(SENTENCES[:5]))}, None]
    encoded = []
    original = SentenceEncoder.encode

    def spy(self, sentences, *args, **kwargs):
        encoded.append((self is members[0], list(sentences)))
        return original(self, sentences, *args, **kwargs)

    monkeypatch.setattr(SentenceEncoder, "encode", spy)
    for member in members:
        member.truncated_sentences = 0
    reused = SummedEncoders(members, known=known).encode(SENTENCES)
    assert np.allclose(reused, plain, atol=1e-6)
    assert encoded == [(True, SENTENCES[5:]), (False, SENTENCES)]  # member 1 encodes only what it lacks
    with pytest.raises(ConfigError, match="known embeddings for 1 members"):
        SummedEncoders(members, known=[None])


def test_the_plain_ensemble_of_recorded_runs_reuses_their_evaluation_embeddings(monkeypatch):
    stage1 = [
        RunSpec(**{**TINY, "objective": "simcse_unsup", "lr_schedule": "linear", "weight_decay": 0.0, "seed": seed})
        for seed in (42, 43)
    ]
    records = [execute.ensure(s, progress=False) for s in stage1]
    spec = RunSpec(
        profile="smoke",
        backbone="tiny-random-bert",
        pooler="cls_before_pooler",
        init_runs=tuple(r["run_id"] for r in records),
        final_eval="stsb_dev",
        synthetic_data=True,
    )
    fresh = SummedEncoders([execute.run_model(r, torch.device("cpu"))[0] for r in records])
    expected = execute._stsb_dev(fresh, synthetic=True)
    calls = []
    original = SentenceEncoder.encode
    monkeypatch.setattr(
        SentenceEncoder,
        "encode",
        lambda self, sentences, *a, **k: calls.append(len(sentences)) or original(self, sentences, *a, **k),
    )
    record = execute.ensure(spec, progress=False)
    assert record["metrics"]["stsb_dev_spearman"] == pytest.approx(expected, abs=1e-6)
    assert sum(calls) == 0  # every evaluation sentence was in both runs' saved embeddings
    # another pooler is another model: its embeddings are not the runs' and are not reused
    assert execute._evaluation_embeddings_of(spec, records[0]["run_id"]) is not None
    mean_spec = RunSpec(
        profile="smoke",
        backbone="tiny-random-bert",
        pooler="avg",
        init_runs=spec.init_runs,
        final_eval="stsb_dev",
        synthetic_data=True,
    )
    assert execute._evaluation_embeddings_of(mean_spec, records[0]["run_id"]) is None


def _train(spec, folder, evaluate=None):
    objective = prepare_objective(spec, *execute.initial_encoders(spec, torch.device("cpu")))
    dev = execute._dev_evaluator(spec, load_task("STSBenchmark", synthetic=True), progress=False)
    outcome = train(
        objective, spec, execute._training_rows(spec), evaluate or dev, folder, progress=False, save_state_every_s=0.0
    )
    return objective, outcome


def test_resuming_restores_both_encoders_bit_for_bit(tmp_path):
    spec = RunSpec(**TINY)
    reference, ref_outcome = _train(spec, tmp_path / "reference")
    dev = execute._dev_evaluator(spec, load_task("STSBenchmark", synthetic=True), progress=False)

    def interrupt(model, step):
        if step == 6:
            raise KeyboardInterrupt
        return dev(model, step)

    with pytest.raises(KeyboardInterrupt):
        _train(spec, tmp_path / "resumed", interrupt)
    resumed, outcome = _train(spec, tmp_path / "resumed")
    assert outcome.resumed_from_step == 3 and outcome.losses == ref_outcome.losses
    for (name, a), (_, b) in zip(reference.state_dict().items(), resumed.state_dict().items()):
        assert torch.equal(a, b), name
    assert any(k.startswith("encoder_2.") for k in reference.state_dict())


def test_stage1_encoders_come_from_recorded_runs_by_id():
    stage1 = [
        RunSpec(**{**TINY, "objective": "simcse_unsup", "lr_schedule": "linear", "weight_decay": 0.0, "seed": seed})
        for seed in (42, 43)
    ]
    records = [execute.ensure(s, progress=False) for s in stage1]
    # random tiny stage-1 encoders of different seeds have negative [CLS] cosines: the official clamp keeps Eq. 6 finite
    spec = RunSpec(
        **{
            **TINY,
            "init_runs": tuple(r["run_id"] for r in records),
            "dropout": 0.00025,
            "objective_params": {"clamp_negative_cosine": True},
        }
    )
    assert spec.as_dict()["init_runs"] == [r["run_id"] for r in records]
    record = execute.ensure(spec, progress=False)
    # step 0 of the TNCSE run is the plain ensemble of the two stage-1 models
    models = [execute.run_model(r, torch.device("cpu"))[0] for r in records]
    dev = load_task("STSBenchmark", synthetic=True).parts["dev"]
    ensemble = SummedEncoders(models)
    score = execute._stsb_dev(ensemble, synthetic=True)
    assert record["training"]["dev_curve"][0]["stsb_dev_spearman"] == pytest.approx(score, abs=1e-6)
    assert len(dev.sentences()) > 0
    # the saved best/ is a sum of two encoders, and a derived analysis gets it back whole
    best = settings.checkpoints_root() / spec.run_id / "best"
    assert is_saved_model(best) and (best / "encoder_2" / "config.json").is_file()
    derived = ensure_derived(record, "n_members", {}, lambda model, s: {"n": len(model.members)})
    assert derived["result"] == {"n": 2} and derived["model"]["source"] == "checkpoint"
    # the plain ensemble (Table 3/4 "None") is a run that does not train: its record scores the sum of the pair
    ensemble_spec = RunSpec(
        profile="smoke",
        backbone="tiny-random-bert",
        init_runs=spec.init_runs,
        final_eval="stsb_dev",
        synthetic_data=True,
    )
    ensemble_record = execute.ensure(ensemble_spec, progress=False)
    assert ensemble_record["metrics"]["stsb_dev_spearman"] == pytest.approx(score, abs=1e-6)
    assert not deterministic(ensemble_record) and ensemble_record["training"] is None
    model, origin = execute.run_model(ensemble_record, torch.device("cpu"))
    assert isinstance(model, SummedEncoders) and origin == {"source": "ensemble"}


def test_a_lost_stage2_checkpoint_is_retrained_from_its_stage1_runs():
    stage1 = [
        RunSpec(**{**TINY, "objective": "simcse_unsup", "lr_schedule": "linear", "weight_decay": 0.0, "seed": seed})
        for seed in (42, 43)
    ]
    records = [execute.ensure(s, progress=False) for s in stage1]
    spec = RunSpec(
        **{
            **TINY,
            "init_runs": tuple(r["run_id"] for r in records),
            "objective_params": {"clamp_negative_cosine": True},
        }
    )
    record = execute.ensure(spec, progress=False)
    import shutil

    for run_id in (spec.run_id, records[0]["run_id"]):  # lose the stage-2 and one stage-1 checkpoint
        shutil.rmtree(settings.checkpoints_root() / run_id)
    model, origin = execute.run_model(record, torch.device("cpu"))
    assert isinstance(model, SummedEncoders) and origin["source"] == "retrained"
    assert origin["dev_check"]["abs_difference"] < 1e-6


@pytest.mark.parametrize(
    "change, message",
    [
        ({"objective_params": {"nce": False, "icnce": False, "ictn": False}}, "at least one of nce, icnce and ictn"),
        ({"objective_params": {"lambda": 1.0}}, r"objective 'tncse': unknown parameter\(s\) \['lambda'\]"),
        ({"objective_params": {"ictn": "yes"}}, "ictn: expected true or false"),
        ({"init_runs": ("0123456789abcdef",)}, r"init_runs names 1 run\(s\), but objective 'tncse' trains 2"),
        ({"init_runs": ("not-a-run-id", "0123456789abcdef")}, "16-hex-digit run ids"),
        ({"lr_schedule": "cosine"}, "lr_schedule 'cosine' is not one of"),
        ({"warmup_steps": 3}, "'constant' has no warm-up"),
        ({"objective": "none", "init_runs": ("0123456789abcdef",)}, "at least two run ids"),
    ],
)
def test_bad_tncse_specs_get_a_clear_error(change, message):
    with pytest.raises(ConfigError, match=message):
        RunSpec(**{**TINY, **change})


def test_a_missing_stage1_record_names_the_run_and_the_fix():
    spec = RunSpec(**{**TINY, "init_runs": ("0123456789abcdef", "fedcba9876543210")})
    with pytest.raises(execute.NotRun, match="starts from the model of run 0123456789abcdef, which has no record"):
        execute.initial_encoders(spec, torch.device("cpu"))


def test_the_objective_needs_two_encoders():
    with pytest.raises(ConfigError, match="trains 2 encoder"):
        build_objective("tncse", {}, _two_encoders()[0], max_len=16)
    assert TNCSE.n_encoders == 2


def test_the_sickr_suffix_maps_to_the_mirror_and_is_checked():
    from sentemb.profiles import mirror_corpus

    assert mirror_corpus("wiki1m_for_simcse+sickr") == "wiki_sentences_combined+sickr"
    assert mirror_corpus("wiki1m_for_simcse") == "wiki_sentences_combined"
    from sentemb.data.corpora import load_sentences

    with pytest.raises(ConfigError, match=r"unknown sentence corpus 'wiki'.*may end in '\+sickr'"):
        load_sentences("wiki+sickr")


@needs_mirror
def test_wiki_plus_sickr_is_the_wiki_corpus_then_every_distinct_sickr_sentence():
    from sentemb.data.corpora import load_sentences

    wiki, both = load_sentences("wiki_sentences_combined"), load_sentences("wiki_sentences_combined+sickr")
    sick = load_task("SICKRelatedness")
    distinct = set(s for part in sick.parts.values() for s in part.sentences())
    assert both[: len(wiki)] == wiki and set(both[len(wiki) :]) == distinct and len(both) == len(wiki) + len(distinct)
    assert len(distinct) > 5000


def test_tncse_dropout_reaches_every_dropout_of_a_reloaded_real_encoder(tmp_path):
    """Stage-1 encoders are reloaded from their runs' best/ with TNCSE's dropout (0.00025, the official override):
    on the real all-MiniLM-L6-v2 it must reach the hidden dropouts and the attention modules' own dropout p
    (transformers 5 applies attention dropout from the attention module, not an nn.Dropout child of the layer)."""
    SentenceEncoder.from_name("all-MiniLM-L6-v2", "cls_before_pooler").save(tmp_path / "stage1")
    encoder = load_saved_model(tmp_path / "stage1", "cls_before_pooler", dropout=0.00025)
    config = encoder.backbone.config
    assert config.hidden_dropout_prob == 0.00025 and config.attention_probs_dropout_prob == 0.00025
    dropouts = [m.p for m in encoder.backbone.modules() if isinstance(m, torch.nn.Dropout)]
    attention = [m for m in encoder.backbone.modules() if type(m).__name__.endswith("SelfAttention")]
    assert dropouts and set(dropouts) == {0.00025}
    assert attention and {getattr(m.dropout, "p", m.dropout) for m in attention} == {0.00025}


def test_the_mteb_adapter_encodes_a_sum_of_encoders_as_its_sum():
    from sentemb.evaluate.mteb_adapter import make_mteb_encoder

    model = SummedEncoders(_two_encoders(seeds=(0, 1)))
    adapter = make_mteb_encoder(model, name="tncse-test")
    vectors = adapter.encode(
        [{"text": SENTENCES[:3]}, {"text": SENTENCES[3:]}], task_metadata=None, hf_split="test", hf_subset="default"
    )
    assert np.allclose(vectors, model.encode(SENTENCES), atol=1e-6)
    meta = adapter.mteb_model_meta
    assert meta.embed_dim == 64 and meta.n_parameters == sum(p.numel() for p in model.parameters())
    assert meta.name == "sentemb/tncse-test-sum2-cls_before_pooler" and not adapter.normalize
