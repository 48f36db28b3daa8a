"""Clustering kernels against TensorFlow 2.21: k-means++ and k-MC2 choose TF's points
for the same seed; nearest neighbours give TF's indices and its distances (exactly for
integer-valued data, within float rounding otherwise: numpy's matmul sums in another
order than Eigen's). Skipped without TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import InvalidArgumentError

from .signatures import assert_signature_matches_tensorflow
from .test_random_ops import Kernel

tf = pytest.importorskip("tensorflow")

OPS = ["NearestNeighbors", "KmeansPlusPlusInitialization", "KMC2ChainInitialization"]


def _points(kind: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "integer":
        return rng.integers(-20, 20, size=(37, 3)).astype(np.float32)
    return rng.normal(size=(50, 4)).astype(np.float32)


def _run(op: str, *inputs):
    return [np.asarray(v) for v in Kernel(op, list(inputs)).compute(None, list(inputs))]


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


@pytest.mark.parametrize("kind", ["integer", "normal"])
@pytest.mark.parametrize("k,retries", [(5, -1), (3, 0), (1, 2), (7, 4)])
@pytest.mark.parametrize("seed", [1, 8, 2**40 + 3])
def test_kmeans_plus_plus(kind, k, retries, seed):
    pts = _points(kind, seed % 97)
    args = [pts, np.int64(k), np.int64(seed), np.int64(retries)]
    want = tf.raw_ops.KmeansPlusPlusInitialization(
        points=pts, num_to_sample=k, seed=seed, num_retries_per_sample=retries
    )
    np.testing.assert_array_equal(_run("KmeansPlusPlusInitialization", *args)[0], want.numpy())


@pytest.mark.parametrize("seed", [1, 2, 99, -5])
@pytest.mark.parametrize("n", [1, 2, 100, 1001])
def test_kmc2_chain(seed, n):
    d = np.abs(np.random.default_rng(n).normal(size=n)).astype(np.float32)
    want = tf.raw_ops.KMC2ChainInitialization(distances=d, seed=seed).numpy()
    assert int(_run("KMC2ChainInitialization", d, np.int64(seed))[0]) == int(want)


@pytest.mark.parametrize("kind", ["integer", "normal"])
@pytest.mark.parametrize("k", [0, 1, 3, 10])
def test_nearest_neighbors(kind, k):
    pts = _points(kind, 3)
    centers = pts[:6] + 0.5
    idx, dist = _run("NearestNeighbors", pts, centers, np.int64(k))
    want_idx, want_dist = tf.raw_ops.NearestNeighbors(points=pts, centers=centers, k=k)
    np.testing.assert_array_equal(idx, want_idx.numpy())
    if kind == "integer":
        np.testing.assert_array_equal(dist, want_dist.numpy())
    else:
        np.testing.assert_allclose(dist, want_dist.numpy(), rtol=1e-5, atol=1e-5)


def test_errors_like_tensorflow():
    pts = _points("integer", 1)
    with pytest.raises(InvalidArgumentError, match="Expected num_to_sample <= points.rows"):
        _run("KmeansPlusPlusInitialization", pts, np.int64(99), np.int64(1), np.int64(0))
    with pytest.raises(InvalidArgumentError, match="Input distances should be a vector"):
        _run("KMC2ChainInitialization", pts, np.int64(1))
    with pytest.raises(InvalidArgumentError, match="Expected point_dimensions == center"):
        _run("NearestNeighbors", pts, np.zeros((2, 5), np.float32), np.int64(1))
