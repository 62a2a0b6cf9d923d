"""BERT-flow (sentemb.evaluate.flow): the density is a proper change of variables, fitting raises the likelihood,
and a fit is reproducible (same seed, fresh process, under autocast)."""

import ast
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from sentemb.errors import ConfigError, SentembError
from sentemb.evaluate.flow import BertFlow, FlowConfig, GlowFlow


def _correlated(n: int, dim: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    mixing = rng.normal(size=(dim, dim)) / math.sqrt(dim)
    return (rng.normal(size=(n, dim)) @ mixing * 0.05 + 0.3).astype(np.float32)  # small-scale, off-centre, like MiniLM


def test_log_likelihood_is_the_change_of_variables_with_the_true_jacobian():
    """log p(x) = log N(f(x)) + log|det df/dx|, with the determinant from autograd's full Jacobian (after the
    data-dependent ActNorm initialisation and a few steps, so that no layer is the identity)."""
    torch.manual_seed(0)
    fitted = BertFlow.fit(_correlated(256, 8), seed=1, config=FlowConfig(batch_size=16, epochs=2))
    flow = fitted.flow.double()
    x = torch.as_tensor(_correlated(3, 8, seed=5), dtype=torch.float64)
    with torch.no_grad():
        z, log_likelihood = flow(x)
    for i in range(len(x)):
        jacobian = torch.autograd.functional.jacobian(lambda v: flow(v[None])[0][0], x[i])
        log_prior = -0.5 * float((z[i] ** 2).sum()) - 4 * math.log(2 * math.pi)
        assert float(log_likelihood[i]) == pytest.approx(log_prior + float(torch.linalg.slogdet(jacobian)[1]), abs=1e-8)
    assert z.shape == (3, 8)


def test_fitting_lowers_the_negative_log_likelihood_and_decorrelates_the_features():
    x = _correlated(4096, 16)
    fitted = BertFlow.fit(x, seed=0)
    first, last = np.mean(fitted.losses[:5]), np.mean(fitted.losses[-5:])
    assert last < first - 0.3  # bits per dimension
    assert len(fitted.losses) == 4096 // 64  # one epoch of full batches
    z = fitted.transform(x)
    assert z.dtype == np.float32 and z.shape == x.shape

    def off_diagonal(a):
        return np.linalg.norm(np.corrcoef(a, rowvar=False) - np.eye(a.shape[1]))

    assert off_diagonal(z) < 0.7 * off_diagonal(x)  # 3.73 -> 2.12 after one epoch
    assert np.abs(z.mean(0)).mean() < 0.15 and 0.6 < z.std(0).min() and z.std(0).max() < 1.4


def test_a_fit_is_reproducible_and_depends_on_its_seed_only():
    x = _correlated(512, 8)
    config = FlowConfig(batch_size=32)
    a, b = BertFlow.fit(x, seed=3, config=config), BertFlow.fit(x, seed=3, config=config)
    assert np.array_equal(a.transform(x), b.transform(x))
    assert not np.array_equal(a.transform(x), BertFlow.fit(x, seed=4, config=config).transform(x))
    with torch.autocast("cpu", dtype=torch.bfloat16):  # a caller's autocast does not lower the fit's precision
        c = BertFlow.fit(x, seed=3, config=config)
        latents = c.transform(x)
    assert latents.dtype == np.float32 and np.array_equal(latents, a.transform(x))


def test_a_fit_in_a_fresh_process_gives_the_same_latents():
    """Two fresh processes (other hash seeds, 1 and 2 threads) reproduce this process's fit bit for bit."""
    code = (
        "import sys; sys.path.insert(0, 'tests'); from test_bert_flow import _correlated; "
        "from sentemb.evaluate.flow import BertFlow, FlowConfig; x = _correlated(512, 8); "
        "print(repr(BertFlow.fit(x, seed=3, config=FlowConfig(batch_size=32)).transform(x)[:2].tolist()))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(k), "OMP_NUM_THREADS": str(k)},
        ).stdout
        for k in (1, 2)
    }
    assert len(outputs) == 1
    x = _correlated(512, 8)
    here = BertFlow.fit(x, seed=3, config=FlowConfig(batch_size=32)).transform(x)[:2]
    assert np.array_equal(np.array(ast.literal_eval(outputs.pop()), dtype=np.float32), here)


def test_constant_features_are_left_out_and_odd_sizes_split_unevenly():
    """all-MiniLM-L6-v2 has three features that are ~1e-32 for every sentence: with them in, data-dependent ActNorm
    scales them by ~1e6 and the loss reaches inf within two steps. They are left out; 13 features split 13 -> 7 -> 4."""
    x = _correlated(1024, 13)
    x[:, 3] = 1e-32 * np.random.default_rng(1).normal(size=len(x))
    x[:, 7] = 0.25
    fitted = BertFlow.fit(x, seed=0)
    assert list(fitted.features) == [i for i in range(13) if i not in (3, 7)]
    assert np.isfinite(fitted.losses).all() and fitted.transform(x).shape == (1024, 11)
    z, _ = fitted.flow(torch.as_tensor(x[:4, fitted.features]))
    assert z.shape == (4, 11)


def test_a_diverging_fit_raises_instead_of_recording_nan_and_broken_input_is_refused():
    with pytest.raises(SentembError, match="diverged: loss (inf|nan) at step"):  # lr 10 without clipping: step 2
        BertFlow.fit(_correlated(256, 8), seed=0, config=FlowConfig(batch_size=32, lr=10.0, clip_norm=1e9))
    x = _correlated(256, 8)
    x[100] = np.inf
    with pytest.raises(ConfigError, match="1 of the 256 fit embeddings hold NaN or inf"):
        BertFlow.fit(x, seed=0, config=FlowConfig(batch_size=32))


def test_bad_shapes_are_refused_with_what_to_change():
    with pytest.raises(ConfigError, match="at least 8 features"):
        GlowFlow(6, FlowConfig(), torch.Generator())
    with pytest.raises(ConfigError, match="batches of 64"):
        BertFlow.fit(_correlated(10, 8), seed=0)
    with pytest.raises(ConfigError, match="constant"):
        BertFlow.fit(np.ones((100, 8), dtype=np.float32), seed=0)
