"""Eig, MatrixSquareRoot, MatrixLogarithm (linalg_eig_ops): signatures against
TensorFlow's OpDefs, values against TensorFlow 2.21's raw ops within float tolerance
(eigenvalues compared as sets, eigenvectors up to a phase), errors class and message."""

from __future__ import annotations

import numpy as np
import pytest

from common import dtypes

from .kernel_harness import assert_same_as_tf, ours_run, tf_run
from .signatures import assert_signature_matches_tensorflow, module_ops

MY_OPS = module_ops("common.ops.linalg_eig_ops")
RNG = np.random.default_rng(5)
TOUT = {np.float32: np.complex64, np.float64: np.complex128}


def _rand(shape, dtype):
    x = RNG.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _tol(dtype) -> float:
    return 1e-3 if np.dtype(dtype) in (np.float32, np.complex64, np.float16) else 1e-8


def test_family_and_signatures():
    assert MY_OPS == ["Eig", "MatrixLogarithm", "MatrixSquareRoot"]
    for name in MY_OPS:
        assert_signature_matches_tensorflow(name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_eig_matches_tensorflow_up_to_order_and_phase(dtype):
    pytest.importorskip("tensorflow")
    x = _rand((3, 4, 4), dtype)
    tout = np.dtype(TOUT.get(dtype, dtype))
    attrs = {"Tout": dtypes.from_numpy(tout)}
    e, v = tf_run("Eig", {"input": x}, attrs)
    e2, v2 = ours_run("Eig", {"input": x}, attrs)
    assert (e2.dtype, e2.shape, v2.shape) == (e.dtype, e.shape, v.shape)
    for b in range(x.shape[0]):
        order, order2 = np.lexsort((e[b].imag, e[b].real)), np.lexsort((e2[b].imag, e2[b].real))
        np.testing.assert_allclose(e2[b][order2], e[b][order], rtol=_tol(dtype), atol=_tol(dtype))
        vs, vs2 = v[b][:, order], v2[b][:, order2]
        phase = np.sum(np.conj(vs2) * vs, axis=0, keepdims=True)
        np.testing.assert_allclose(vs2 * phase, vs, atol=10 * _tol(dtype))
    vals = ours_run("Eig", {"input": x}, {**attrs, "compute_v": False})
    np.testing.assert_allclose(np.sort_complex(vals[0][0]), np.sort_complex(e2[0]), rtol=1e-5)
    assert_same_as_tf("Eig", {"input": np.ones((0, 2, 2), dtype)}, attrs)


@pytest.mark.parametrize(
    "inputs,tout",
    [
        (np.ones((2, 3)), np.complex128),
        (np.ones(3), np.complex128),
        (np.ones((2, 2)), np.complex64),
        (np.ones((2, 2), np.float32), np.complex128),
    ],
)
def test_eig_errors_match_tensorflow(inputs, tout):
    pytest.importorskip("tensorflow")
    assert_same_as_tf("Eig", {"input": inputs}, {"Tout": dtypes.from_numpy(np.dtype(tout))})


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64, np.complex128])
def test_matrix_square_root_matches_tensorflow(dtype):
    pytest.importorskip("tensorflow")
    a = RNG.standard_normal((2, 4, 4))
    spd = a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4)
    cases = [spd, np.array([[4.0, 1.0], [0.0, 4.0]]), np.array([[1.0, -2.0], [3.0, 1.0]])]
    if np.issubdtype(dtype, np.complexfloating):
        cases.append(np.array([[1.0, 2.0], [3.0, -4.0]]) + 0.5j)
    else:
        cases.append(np.array([[1.0, 2.0], [3.0, -4.0]]))  # negative eigenvalue: NaN
    for x in cases:
        x = x.astype(dtype)
        # TF registers no half CPU kernel: ours (float32 inside) against its float32.
        ref = x.astype(np.float32) if dtype == np.float16 else x
        want = tf_run("MatrixSquareRoot", {"input": ref}, {})[0].astype(dtype)
        got = ours_run("MatrixSquareRoot", {"input": x}, {})[0]
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        tol = 2e-2 if dtype == np.float16 else _tol(dtype)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    if dtype != np.float16:
        assert_same_as_tf("MatrixSquareRoot", {"input": np.ones((2, 0, 0), dtype)})


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_matrix_logarithm_matches_tensorflow(dtype):
    pytest.importorskip("tensorflow")
    a = RNG.standard_normal((2, 4, 4))
    spd = a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4)
    general = _rand((3, 3), np.complex128) + 3 * np.eye(3)
    for x in (spd, general, np.array([[4.0, 1.0], [0.0, 4.0]]), np.zeros((2, 2))):
        x = x.astype(dtype)
        want = tf_run("MatrixLogarithm", {"input": x}, {})[0]
        got = ours_run("MatrixLogarithm", {"input": x}, {})[0]
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        np.testing.assert_allclose(got, want, rtol=_tol(dtype), atol=_tol(dtype))


@pytest.mark.parametrize(
    "op,x",
    [
        ("MatrixSquareRoot", np.ones((2, 3))),
        ("MatrixSquareRoot", np.ones(3)),
        ("MatrixLogarithm", np.ones((2, 3), np.complex64)),
        ("MatrixLogarithm", np.ones(2, np.complex128)),
    ],
)
def test_matrix_function_errors_match_tensorflow(op, x):
    pytest.importorskip("tensorflow")
    assert_same_as_tf(op, {"input": x})
