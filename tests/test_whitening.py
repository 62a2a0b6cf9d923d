"""Whitening (Su et al., 2021): the fitted embeddings come out with zero mean and identity covariance."""

import numpy as np
import pytest

from sentemb.errors import ConfigError
from sentemb.evaluate.whitening import Whitening


def _anisotropic(n=500, d=8, seed=0):
    rng = np.random.default_rng(seed)
    mixing = rng.normal(size=(d, d)) * np.linspace(0.1, 3.0, d)
    return rng.normal(size=(n, d)) @ mixing + 5.0  # a common offset, correlated and unequal dimensions


def test_fitted_embeddings_are_white():
    x = _anisotropic()
    white = Whitening.fit(x).transform(x)
    np.testing.assert_allclose(white.mean(0), 0.0, atol=1e-5)
    np.testing.assert_allclose(np.cov(white, rowvar=False), np.eye(8), atol=1e-4)


def test_kernel_written_out_for_a_diagonal_covariance():
    x = np.array([[1.0, 10.0], [3.0, 10.0], [2.0, 14.0], [2.0, 6.0]])  # var 2/3 and 32/3, uncorrelated
    w = Whitening.fit(x)
    np.testing.assert_allclose(w.mean, [2.0, 10.0])
    transformed = w.transform(np.array([[3.0, 10.0], [2.0, 14.0]]))
    # the larger-variance dimension is the first principal component (sign of U is arbitrary)
    np.testing.assert_allclose(np.abs(transformed), [[0.0, 1 / np.sqrt(2 / 3)], [4 / np.sqrt(32 / 3), 0.0]], atol=1e-6)


def test_dimension_reduction_keeps_the_leading_components():
    x = _anisotropic(d=8)
    full, reduced = Whitening.fit(x), Whitening.fit(x, dim=3)
    np.testing.assert_allclose(reduced.transform(x), full.transform(x)[:, :3], atol=1e-5)
    np.testing.assert_allclose(np.cov(reduced.transform(x), rowvar=False), np.eye(3), atol=1e-4)


def test_clear_errors():
    with pytest.raises(ConfigError, match="more sentences than dimensions"):
        Whitening.fit(np.ones((4, 8)))
    with pytest.raises(ConfigError, match="singular"):
        Whitening.fit(np.hstack([_anisotropic(d=3), np.zeros((500, 1))]), dim=4)
    with pytest.raises(ConfigError, match="dim must be in"):
        Whitening.fit(_anisotropic(), dim=9)


def test_singular_covariance_is_whitened_on_its_support():
    """A constant fourth coordinate (zero variance) is dropped, not divided by zero; the rest is white."""
    x = np.hstack([_anisotropic(d=3), np.full((500, 1), 2.0)])
    w = Whitening.fit(x)
    assert w.kernel.shape == (4, 3)
    np.testing.assert_allclose(np.cov(w.transform(x), rowvar=False), np.eye(3), atol=1e-4)
