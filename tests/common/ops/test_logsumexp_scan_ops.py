"""CumulativeLogsumexp against TensorFlow 2.21: signature, values within float
tolerance (numpy's logaddexp rounds unlike Eigen's reducer) over dtypes, axes,
exclusive/reverse, -inf and empty inputs, and TF's errors. Skipped without TensorFlow."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from common.errors import InvalidArgumentError

from .kernel_harness import ours_run, tf_run
from .signatures import assert_signature_matches_tensorflow

tf = pytest.importorskip("tensorflow")

_X = np.random.default_rng(7).normal(scale=4.0, size=(3, 4, 5))
_TOL = {np.float64: 1e-12, np.float32: 1e-5, np.float16: 2e-3, ml_dtypes.bfloat16: 2e-2}


def test_signature_matches_tensorflow():
    assert_signature_matches_tensorflow("CumulativeLogsumexp")


def _compare(x: np.ndarray, axis, **attrs) -> None:
    inputs = {"x": x, "axis": axis}
    want = tf_run("CumulativeLogsumexp", inputs, attrs)[0]
    got = np.asarray(ours_run("CumulativeLogsumexp", inputs, attrs)[0])
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = _TOL[x.dtype.type]
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", list(_TOL))
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_values(dtype, exclusive, reverse):
    _compare(_X.astype(dtype), np.int32(1), exclusive=exclusive, reverse=reverse)


@pytest.mark.parametrize("axis", [np.int32(0), np.int32(-1), np.int64(2), np.int64(-3)])
def test_axes(axis):
    _compare(_X.astype(np.float32), axis, exclusive=True)


def test_minus_infinity_and_empty():
    x = np.array([[-np.inf, 0.0, -np.inf, 3.0], [-np.inf] * 4], np.float64)
    _compare(x, np.int32(1))
    _compare(x, np.int32(1), exclusive=True, reverse=True)
    _compare(np.zeros((0, 3), np.float32), np.int32(1))


@pytest.mark.parametrize("axis", [np.int32(3), np.int32(-4), np.array([0], np.int32)])
def test_errors_like_tensorflow(axis):
    inputs = {"x": _X.astype(np.float32), "axis": axis}
    with pytest.raises(tf.errors.InvalidArgumentError) as want:
        tf_run("CumulativeLogsumexp", inputs, {})
    with pytest.raises(InvalidArgumentError) as got:
        ours_run("CumulativeLogsumexp", inputs, {})
    assert str(got.value) in want.value.message
