"""Alignment, uniformity, singular spectrum and cosine groups against hand computation."""

import math

import numpy as np
import pytest

from sentemb.analysis.alignment_uniformity import alignment, uniformity
from sentemb.analysis.cosine_groups import cosine_by_rating, group_of
from sentemb.analysis.spectrum import normalised_singular_values


def test_alignment_by_hand():
    x = np.array([[1.0, 0.0], [0.0, 2.0]])
    y = np.array([[0.0, 3.0], [0.0, 1.0]])
    # normalised: (1,0)-(0,1) has squared distance 2; (0,1)-(0,1) has 0 -> mean 1.
    assert alignment(x, y) == pytest.approx(1.0)
    assert alignment(x, x) == pytest.approx(0.0)


def test_uniformity_by_hand_and_chunking():
    x = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    # pairwise squared distances: 2, 4, 2 -> log(mean(exp(-2 d^2)))
    expected = math.log((math.exp(-4) + math.exp(-8) + math.exp(-4)) / 3)
    assert uniformity(x) == pytest.approx(expected)
    rng = np.random.default_rng(0)
    cloud = rng.normal(size=(50, 5))
    assert uniformity(cloud, chunk=7) == pytest.approx(uniformity(cloud, chunk=1000))


def test_spectrum_is_normalised_and_sorted():
    rng = np.random.default_rng(1)
    values = normalised_singular_values(rng.normal(size=(30, 6)))
    assert values[0] == pytest.approx(1.0)
    assert np.all(np.diff(values) <= 1e-12)
    collapsed = normalised_singular_values(np.tile([[1.0, 2.0, 3.0]], (10, 1)))
    assert collapsed[1] == pytest.approx(0.0, abs=1e-9)


def test_cosine_groups():
    assert [group_of(s) for s in (0.0, 0.99, 1.0, 3.5, 4.0, 5.0)] == [0, 0, 1, 3, 4, 4]
    groups = cosine_by_rating(np.array([0.1, 0.2, 0.9]), np.array([0.5, 0.7, 4.8]))
    assert [g["n"] for g in groups] == [2, 0, 0, 0, 1]
    assert groups[0]["mean"] == pytest.approx(0.15)
    assert groups[1]["mean"] is None
