"""DeCLUTR's objective through the core: documents and their length check, the anchor-major layout of positives,
NT-Xent against pytorch-metric-learning's, the tied MLM head, float32 losses under bf16 autocast, and a training
run that resumes bit for bit."""

import json
import random

import pytest
import torch
from conftest import needs_mirror

from sentemb.augment.span_sampler import DocumentTooShortError
from sentemb.data.documents import Document, HubCorpus, TokenisedDocument, load_documents, synthetic_documents
from sentemb.errors import ConfigError, DataError
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives.declutr import DeclutrContrastiveLoss, nt_xent, nt_xent_official
from sentemb.objectives.masked_lm import MaskedLMLoss, tied_mlm_head
from sentemb.objectives.registry import build_objective
from sentemb.spec import RunSpec

SPANS = {"min_span_len": 4, "max_span_len": 16}
TINY = dict(
    profile="smoke",
    backbone="tiny-random-bert",
    pooler="avg",
    objective="declutr",
    objective_params=SPANS,
    train_data="wikitext2_articles",
    steps=6,
    batch_size=4,
    eval_every=3,
    lr=1e-3,
    max_len=18,
    weight_decay=0.1,
    final_eval="stsb_dev",
    synthetic_data=True,
)


def _objective(**params):
    encoder = SentenceEncoder.from_name("tiny-random-bert", "avg", seed=0)
    return build_objective("declutr", {**SPANS, **params}, encoder, max_len=18)


def test_nt_xent_equals_pytorch_metric_learning_ntxent():
    from pytorch_metric_learning.losses import NTXentLoss

    generator = torch.Generator().manual_seed(0)
    first, second = torch.randn(6, 32, generator=generator), torch.randn(6, 32, generator=generator)
    labels = torch.arange(6).repeat(2)  # embedding i and i + M share a label: the positive pair
    expected = NTXentLoss(temperature=0.05)(torch.cat([first, second]), labels)
    assert torch.allclose(nt_xent(first, second, 0.05), expected, atol=1e-5)


@pytest.mark.parametrize("tau", [5e-4, 0.05])
def test_the_official_form_is_pytorch_metric_learning_ntxent(tau):
    from pytorch_metric_learning.losses import NTXentLoss

    generator = torch.Generator().manual_seed(0)
    first, second = torch.randn(8, 32, generator=generator), torch.randn(8, 32, generator=generator)
    labels = torch.arange(8).repeat(2)
    expected = NTXentLoss(temperature=tau)(torch.cat([first, second]), labels)
    assert torch.equal(nt_xent_official(first, second, tau), expected)
    positives = torch.stack([second, second], dim=1)  # P = 2 copies: the mean positive is ``second``
    assert torch.equal(DeclutrContrastiveLoss(tau, "official")(first, positives), expected)
    exact = nt_xent(first, second, tau)
    if tau == 0.05:  # no term near the cap: the two forms agree
        assert torch.allclose(exact, expected, atol=1e-5)
    else:  # random directions at tau = 5e-4: most terms are far past -log(tiny), where the official form stops
        logits = torch.nn.functional.normalize(torch.cat([first, second]), dim=-1)
        logits = (logits @ logits.T / tau).fill_diagonal_(float("-inf"))
        terms = torch.nn.functional.cross_entropy(
            logits, torch.cat([torch.arange(8) + 8, torch.arange(8)]), reduction="none"
        )
        cap = -torch.log(torch.tensor(torch.finfo(torch.float32).tiny))  # 87.34
        assert (terms > cap).any() and float(expected) <= float(cap) + 1e-4 < float(exact)


def test_a_capped_pair_has_no_gradient_in_the_official_form():
    """Each embedding's partner is orthogonal to it and a negative is parallel: at tau = 5e-4 every term is -log(tiny)
    in the official form (its gradient exactly 0), 2000 in the exact one (whose gradient does not vanish)."""
    first = torch.tensor([[1.0, 0.0], [0.0, 1.0]], requires_grad=True)
    second = torch.tensor([[0.0, 1.0], [1.0, 0.0]], requires_grad=True)
    official = nt_xent_official(first, second, 5e-4)
    official.backward()
    assert official.item() == pytest.approx(-torch.log(torch.tensor(torch.finfo(torch.float32).tiny)).item())
    assert official.item() == pytest.approx(87.3365, abs=1e-3)
    assert torch.count_nonzero(first.grad) == 0 and torch.count_nonzero(second.grad) == 0
    first.grad, second.grad = None, None
    exact = nt_xent(first, second, 5e-4)
    exact.backward()
    assert exact.item() == pytest.approx(2000.0, rel=1e-4) and first.grad.abs().sum() > 0
    with pytest.raises(ValueError, match="loss_form must be one of"):
        DeclutrContrastiveLoss(0.05, "pml")


def test_each_positive_belongs_to_its_anchor_in_the_anchor_major_layout():
    """Token ids equal to their positions: each sampled span says where it lies, so a positive's anchor is known."""
    objective = _objective(num_anchors=2, num_positives=3)
    documents = [TokenisedDocument(f"d{i}", tuple(range(1000 * i, 1000 * i + 300))) for i in range(3)]
    anchors, positives = objective.sample_spans(documents, random.Random(1))
    assert len(anchors) == 6 and [len(p) for p in positives] == [3] * 6
    for anchor, own in zip(anchors, positives):
        for positive in own:  # overlapping, adjacent, subsumed or containing: never apart from its own anchor
            assert positive[0] <= anchor[-1] + 1 and positive[-1] + 1 >= anchor[0]
            assert positive[0] // 1000 == anchor[0] // 1000  # and from the same document
    # the loss reads row i of (AN, P, d) as anchor i's positives: equal to NT-Xent over the per-anchor means
    generator = torch.Generator().manual_seed(0)
    a, p = torch.randn(6, 8, generator=generator), torch.randn(6, 3, 8, generator=generator)
    flat = p.reshape(18, 8)  # anchor-major flat order, as DeCLUTR.forward encodes the positives
    assert torch.equal(flat.view(6, 3, 8), p)
    assert torch.allclose(DeclutrContrastiveLoss(0.05)(a, p), nt_xent(a, p.mean(dim=1), 0.05))


def test_a_short_document_is_named_with_its_length_in_tokens():
    objective = _objective(num_anchors=2)
    with pytest.raises(DocumentTooShortError, match=r"document 'tiny-doc'.*has 40 tokens.*at least 64"):
        objective(
            objective.select_rows([Document("ok", "word " * 100)]) + [TokenisedDocument("tiny-doc", tuple(range(40)))],
            random.Random(0),
        )
    with pytest.raises(DataError, match=r"no document .* has 64 subword tokens \(the longest has 3"):
        objective.select_rows([Document("short", "three words here")])


def test_documents_too_short_for_the_anchors_are_left_out():
    objective = _objective(num_anchors=2)  # 2 * A * l_max = 64 subword tokens
    kept = objective.select_rows([Document("long", "word " * 64), Document("short", "word " * 63)])
    assert [d.id for d in kept] == ["long"] and len(kept[0].token_ids) == 64


def test_min_document_tokens_fixes_the_document_set_whatever_a():
    documents = [Document(f"d{n}", "word " * n) for n in (20, 31, 32, 50, 63, 64, 65, 100, 300)]
    ids = lambda objective: [d.id for d in objective.select_rows(documents)]  # noqa: E731
    assert ids(_objective(num_anchors=1)) == ["d32", "d50", "d63", "d64", "d65", "d100", "d300"]  # 2 * 1 * 16
    fixed = [ids(_objective(num_anchors=a, min_document_tokens=64)) for a in (1, 2)]
    assert fixed[0] == fixed[1] == ids(_objective(num_anchors=2)) == ["d64", "d65", "d100", "d300"]
    assert ids(_objective(num_anchors=1, min_document_tokens=100)) == ["d100", "d300"]
    assert _objective(num_anchors=1, min_document_tokens=64).min_document_tokens == 64
    assert _objective(num_anchors=2).min_document_tokens == 64  # 0 (the default): the sampler's 2 * A * l_max
    needs = r"min_document_tokens 63 is below the 64 tokens the span sampler needs \(2 \* num_anchors \* max_span_len"
    with pytest.raises(ConfigError, match=needs + r" = 2 \* 2 \* 16\): set it to at least 64, or 0 for exactly that"):
        _objective(num_anchors=2, min_document_tokens=63)
    with pytest.raises(ConfigError, match="min_document_tokens: -1 is not int in"):
        _objective(min_document_tokens=-1)
    at_default = RunSpec(**TINY)
    assert (
        RunSpec(**{**TINY, "objective_params": {**SPANS, "min_document_tokens": 0, "loss_form": "exact"}}).run_id
        == at_default.run_id
    )  # added parameters at their defaults leave run ids alone
    assert "min_document_tokens" not in at_default.objective_params and "loss_form" not in at_default.objective_params


def test_a_step_trains_the_encoder_and_the_tied_mlm_head():
    objective = _objective().train()
    head = objective.mlm_loss.head
    assert head.decoder.weight is objective.encoder.backbone.get_input_embeddings().weight
    assert float(head.decoder.bias.detach().abs().max()) == 0.0
    loss = objective(objective.select_rows(synthetic_documents()[:4]), random.Random(0))
    loss.backward()
    assert torch.isfinite(loss) and head.transform.dense.weight.grad.abs().sum() > 0
    assert objective.encoder.backbone.encoder.layer[0].attention.self.query.weight.grad.abs().sum() > 0
    assert objective.sequences_per_row == 6  # A (1 + P) spans per document
    rows = objective.select_rows(synthetic_documents()[:4])
    contrastive_only = _objective(mlm_weight=0.0)
    assert contrastive_only.mlm_loss is None and torch.isfinite(contrastive_only(rows, random.Random(0)))
    assert torch.isfinite(_objective(contrastive=False)(rows, random.Random(0)))  # Figure 3's MLM only
    with pytest.raises(ConfigError, match="leaves no loss"):
        _objective(contrastive=False, mlm_weight=0.0)
    with pytest.raises(ConfigError, match="min_span_len 20 > max_span_len 16"):
        _objective(min_span_len=20)


def test_the_losses_are_fp32_under_bf16_autocast():
    generator = torch.Generator().manual_seed(0)
    anchors, positives = torch.randn(4, 16, generator=generator), torch.randn(4, 2, 16, generator=generator)
    states, labels = (
        torch.randn(2, 5, 64, generator=generator),
        torch.tensor([[-100, 3, -100, 7, -100], [5, -100, -100, -100, 9]]),
    )
    head = tied_mlm_head(SentenceEncoder.from_name("tiny-random-bert", "avg", seed=0))
    for loss, inputs in (
        (DeclutrContrastiveLoss(0.05), (anchors, positives)),
        (MaskedLMLoss(head), (states, labels)),
        (DeclutrContrastiveLoss(0.05, "official"), (anchors, positives)),
        (DeclutrContrastiveLoss(5e-4, "official"), (anchors, positives)),
    ):
        low = [x.bfloat16().requires_grad_() if x.is_floating_point() else x for x in inputs]
        high = [x.detach().float().requires_grad_() if x.is_floating_point() else x for x in low]
        with torch.autocast("cpu", dtype=torch.bfloat16):
            value = loss(*low)
        reference = loss(*high)
        assert value.dtype == torch.float32 and torch.allclose(value, reference, atol=1e-6)
        value.backward(), reference.backward()
        assert torch.allclose(low[0].grad.float(), high[0].grad.bfloat16().float(), atol=1e-2)
        assert low[0].grad.abs().sum() > 0


def _resumes_bit_for_bit(tmp_path, params):
    from sentemb.data.sts import load_task
    from sentemb.runs import execute
    from sentemb.train.loop import prepare_objective, train

    spec = RunSpec(**{**TINY, "objective_params": {**SPANS, **params}})
    dev = execute._dev_evaluator(spec, load_task("STSBenchmark", synthetic=True), progress=False)

    def run(folder, evaluate):
        objective = prepare_objective(spec, *execute.initial_encoders(spec, torch.device("cpu")))
        return objective, train(
            objective, spec, execute._training_rows(spec), evaluate, folder, progress=False, save_state_every_s=0.0
        )

    reference, ref = run(tmp_path / "reference", dev)

    def interrupt(model, step):
        if step == 6:
            raise KeyboardInterrupt
        return dev(model, step)

    with pytest.raises(KeyboardInterrupt):
        run(tmp_path / "resumed", interrupt)
    resumed, res = run(tmp_path / "resumed", dev)
    assert res.resumed_from_step == 3 and res.losses == ref.losses and res.n_rows == len(synthetic_documents())
    for (name, a), (_, b) in zip(reference.state_dict().items(), resumed.state_dict().items()):
        assert torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b, name
    return resumed, res


def test_training_resumes_bit_for_bit(tmp_path):
    _resumes_bit_for_bit(tmp_path, {})


def test_documents_through_the_datasets_package_from_a_local_file(tmp_path):
    """The full profile's OpenWebText loader, exercised offline on a local JSON-lines file."""
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"text": f"document {i} " * 50}) + "\n" for i in range(3)))
    documents = list(HubCorpus("json", data_files=str(path)))
    assert [d.id for d in documents] == ["json:0", "json:1", "json:2"] and documents[1].text.startswith("document 1")
    with pytest.raises(DataError, match="no 'body' column"):
        list(HubCorpus("json", data_files=str(path), text_field="body"))
    with pytest.raises(DataError, match="cannot load documents"):
        list(HubCorpus("json", data_files=str(tmp_path / "missing.jsonl")))


@needs_mirror
def test_the_mirror_articles_load_and_half_are_long_enough_for_the_paper_spans():
    documents = load_documents("wikitext2_articles")
    assert len(documents) == 722 and documents[0].id == "wt2tok-train-0000"
    objective = build_objective("declutr", {}, SentenceEncoder.from_name("tiny-random-bert", "avg"), max_len=514)
    kept = objective.select_rows(documents)
    assert 300 < len(kept) < 722 and all(len(d.token_ids) >= 2048 for d in kept)


def test_slanted_triangular_rises_to_the_peak_at_the_cut_and_falls_to_a_32nd():
    from sentemb.train.loop import _schedule

    factor = _schedule("slanted_triangular", warmup=10, total=100)
    values = [factor(step) for step in range(101)]
    assert (
        values[0] == pytest.approx(1 / 32) and values[10] == pytest.approx(1.0) and values[100] == pytest.approx(1 / 32)
    )
    assert values[5] == pytest.approx((1 + 0.5 * 31) / 32) and values[55] == pytest.approx((1 + 0.5 * 31) / 32)
    assert all(a < b for a, b in zip(values[:10], values[1:11])) and all(
        a > b for a, b in zip(values[10:100], values[11:])
    )
    with pytest.raises(ConfigError, match="needs its cut"):
        RunSpec(**{**TINY, "lr_schedule": "slanted_triangular"})


def test_the_last_checkpoint_is_kept_whatever_the_dev_score(tmp_path):
    from sentemb.runs import execute
    from sentemb.train.loop import prepare_objective, train

    spec = RunSpec(**{**TINY, "checkpoint": "last", "lr_schedule": "slanted_triangular", "warmup_steps": 1})
    assert spec.run_id != RunSpec(**TINY).run_id and "checkpoint" not in RunSpec(**TINY).as_dict()
    scores = iter([0.0, 0.9, 0.1])  # step 3 scores best; the last step (6) is kept anyway
    objective = prepare_objective(spec, *execute.initial_encoders(spec, torch.device("cpu")))
    outcome = train(
        objective,
        spec,
        execute._training_rows(spec),
        lambda model, step: {"stsb_dev_spearman": next(scores), "alignment": 0.0, "uniformity": 0.0},
        tmp_path,
        progress=False,
    )
    assert outcome.best_step == 6 and outcome.best_dev == pytest.approx(0.1)
    with pytest.raises(ConfigError, match="checkpoint 'best' is not one of"):
        RunSpec(**{**TINY, "checkpoint": "best"})


@pytest.mark.parametrize("views", ["adjacent", "subsumed"])
def test_one_view_positives_are_that_view(views):
    from sentemb.augment.span_sampler import sample_anchor_positive_spans

    rng = random.Random(3)
    for _ in range(200):
        spans = sample_anchor_positive_spans(
            list(range(400)),
            rng,
            num_anchors=1,
            num_positives=2,
            min_span_len=8,
            max_span_len=100,
            positive_views=views,
        )
        ((a_start, a_end),) = spans.anchor_spans
        for start, end in spans.positive_spans[0]:
            if views == "adjacent":
                assert end == a_start or start == a_end
            else:
                assert a_start <= start and end <= a_end and end > start
    with pytest.raises(ValueError, match="positive_views must be one of"):
        sample_anchor_positive_spans(list(range(400)), rng, max_span_len=100, positive_views="nearby")


def test_the_projection_head_is_trained_and_not_evaluated():
    objective = _objective(projection="mlp", projection_dim=8)
    assert isinstance(objective.projection[1], torch.nn.ReLU) and objective.projection[2].out_features == 8
    assert isinstance(_objective(projection="linear").projection[1], torch.nn.Identity)
    rows = objective.select_rows(synthetic_documents()[:4])
    objective.train()(rows, random.Random(0)).backward()
    assert objective.projection[0].weight.grad.abs().sum() > 0
    assert objective.evaluation_encoder() is objective.encoder


def test_the_memory_bank_is_pytorch_metric_learning_xbm_and_starts_as_nt_xent():
    from sentemb.objectives.declutr import MemoryBankContrastiveLoss

    generator = torch.Generator().manual_seed(0)
    bank = MemoryBankContrastiveLoss(0.05, dim=16, memory_size=24)
    anchors, positives = torch.randn(4, 16, generator=generator), torch.randn(4, 2, 16, generator=generator)
    first = bank(anchors, positives)  # empty queue: the batch alone
    assert torch.allclose(first, nt_xent(anchors, positives.mean(dim=1), 0.05), atol=1e-5)
    second = bank(anchors, positives)  # the same embeddings again, now also in the queue as negatives
    assert second > first and bank.pairs_seen == 8 and bank.memory.queue_idx == 16
    state = bank.state_dict()
    copy = MemoryBankContrastiveLoss(0.05, dim=16, memory_size=24)
    copy.load_state_dict(state)
    assert copy.memory.queue_idx == 16 and copy.pairs_seen == 8
    assert torch.equal(copy(anchors, positives), bank(anchors, positives))
    with pytest.raises(ConfigError, match="memory_size 4 is smaller than a step's 8 embeddings"):
        MemoryBankContrastiveLoss(0.05, dim=16, memory_size=4)(anchors, positives)


def test_training_with_a_memory_bank_resumes_bit_for_bit(tmp_path):
    resumed, outcome = _resumes_bit_for_bit(tmp_path, {"memory_size": 64, "projection": "mlp", "projection_dim": 8})
    # the kept weights come with the queue as it was at their step: 4 documents x 2 anchors per step
    assert resumed.contrastive_loss.pairs_seen == outcome.best_step * 4 * 2
