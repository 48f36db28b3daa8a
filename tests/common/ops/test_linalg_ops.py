"""Linear algebra kernels (linalg_ops, linalg_solve_ops, matrix_diag_ops, fft_ops):
signatures against TensorFlow's OpDefs, and TensorFlow 2.21's raw ops as the oracle: bit
for bit where TF's kernel is indexing (diagonals, bands, Cross), within float tolerance
where TF runs another LAPACK/Eigen algorithm, and the same error class and message on
bad input."""

from __future__ import annotations

import numpy as np
import pytest

from common import dtypes
from common.errors import FailedPreconditionError, InvalidArgumentError

from .kernel_harness import assert_same_as_tf, ours_run, run1, tf_run
from .signatures import assert_signature_matches_tensorflow, module_ops

MY_OPS = module_ops(
    "common.ops.linalg_extra_ops",
    "common.ops.linalg_ops",
    "common.ops.linalg_solve_ops",
    "common.ops.matrix_diag_ops",
    "common.ops.fft_ops",
)
RNG = np.random.default_rng(7)


def _rand(shape, dtype=np.float32):
    x = RNG.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _spd(shape, dtype=np.float32):
    a = _rand(shape, dtype)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def _close(op, inputs, attrs=None, rtol=None):
    """Our outputs equal TF's in dtype and shape, and in value within tolerance."""
    expected = tf_run(op, inputs, attrs or {})
    got = ours_run(op, inputs, attrs or {})
    assert len(got) == len(expected)
    for g, x in zip(got, expected):
        g = np.asarray(g)
        assert (g.dtype, g.shape) == (x.dtype, x.shape), op
        tol = rtol or (
            1e-2
            if x.dtype == np.float16
            else 2e-4
            if x.dtype in (np.float32, np.complex64)
            else 1e-9
        )
        np.testing.assert_allclose(g, x, rtol=tol, atol=tol, err_msg=op)


def test_registered_the_whole_family():
    for name in ("MatrixInverse", "Svd", "MatrixSolveLs", "MatrixDiagPartV3", "IRFFT3D", "Cross"):
        assert name in MY_OPS
    assert len(MY_OPS) == 37


@pytest.mark.parametrize("name", MY_OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


# -- decompositions ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2), (2, 0, 0)])
def test_inverse_determinant_cholesky_match_tensorflow(dtype, shape):
    pytest.importorskip("tensorflow")
    x = _spd(shape, dtype)
    for adjoint in (False, True):
        _close("MatrixInverse", {"input": x}, {"adjoint": adjoint})
    _close("Cholesky", {"input": x})
    _close("MatrixDeterminant", {"input": x})
    _close("LogMatrixDeterminant", {"input": x})
    general = _rand(shape, dtype)
    _close("MatrixDeterminant", {"input": general})
    _close("LogMatrixDeterminant", {"input": general})


def test_cholesky_of_a_matrix_not_positive_definite_is_nan_below_the_diagonal():
    pytest.importorskip("tensorflow")
    x = np.array([[[4, 2], [2, 1]], [[4, 1], [1, 3]]], np.float32)
    got, expected = run1("Cholesky", x), tf_run("Cholesky", {"input": x}, {})[0]
    lower = np.tril(np.ones((2, 2), bool))
    assert np.isnan(got[0][lower]).all() and np.isnan(expected[0][lower]).all()
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3)])
def test_svd_matches_tensorflow_up_to_vector_signs(dtype, shape):
    pytest.importorskip("tensorflow")
    x = _rand(shape, dtype)
    s_only = {"compute_uv": False}  # u and v: scalars TF leaves unset
    s, u, v = tf_run("Svd", {"input": x}, s_only)
    s2, u2, v2 = ours_run("Svd", {"input": x}, s_only)
    assert (s2.dtype, s2.shape, u2.shape, v2.shape) == (s.dtype, s.shape, u.shape, v.shape)
    np.testing.assert_allclose(s2, s, rtol=1e-4)
    for full in (False, True):
        s, u, v = tf_run("Svd", {"input": x}, {"full_matrices": full})
        s2, u2, v2 = ours_run("Svd", {"input": x}, {"full_matrices": full})
        assert (u2.shape, v2.shape, u2.dtype) == (u.shape, v.shape, u.dtype)
        np.testing.assert_allclose(s2, s, rtol=1e-4)
        k = min(shape[-2:])  # the singular vectors: equal up to a phase per pair
        phase = np.sum(np.conj(u[..., :k]) * u2[..., :k], axis=-2, keepdims=True)
        np.testing.assert_allclose(np.abs(phase), 1, rtol=1e-3)
        np.testing.assert_allclose(u2[..., :k], u[..., :k] * phase, atol=1e-3)
        np.testing.assert_allclose(v2[..., :k], v[..., :k] * phase, atol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_self_adjoint_eig_matches_tensorflow_up_to_vector_signs(dtype):
    pytest.importorskip("tensorflow")
    x = _spd((2, 4, 4), dtype)
    x[..., 0, 3] = 99  # the upper triangle is never read
    e, v = tf_run("SelfAdjointEigV2", {"input": x}, {"compute_v": False})
    e2, v2 = ours_run("SelfAdjointEigV2", {"input": x}, {"compute_v": False})
    assert (e2.dtype, e2.shape, v2.shape) == (e.dtype, e.shape, v.shape)
    np.testing.assert_allclose(e2, e, rtol=1e-4)
    e, v = tf_run("SelfAdjointEigV2", {"input": x}, {})
    e2, v2 = ours_run("SelfAdjointEigV2", {"input": x}, {})
    np.testing.assert_allclose(e2, e, rtol=1e-4)
    phase = np.sum(np.conj(v) * v2, axis=-2, keepdims=True)
    np.testing.assert_allclose(v2, v * phase, atol=1e-3)


@pytest.mark.parametrize(
    "op,x",
    [
        ("MatrixInverse", np.ones(3, np.float32)),
        ("MatrixInverse", np.ones((2, 3), np.float32)),
        ("MatrixInverse", np.ones((2, 2), np.float32)),
        ("MatrixDeterminant", np.ones((2, 3), np.float64)),
        ("Svd", np.ones(3, np.float32)),
        ("SelfAdjointEigV2", np.ones((2, 3), np.float32)),
    ],
)
def test_decomposition_errors_match_tensorflow(op, x):
    pytest.importorskip("tensorflow")
    assert_same_as_tf(op, {"input": x})


# -- solvers ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_solvers_match_tensorflow(dtype):
    pytest.importorskip("tensorflow")
    a, b = _spd((2, 3, 3), dtype), _rand((2, 3, 2), dtype)
    for adjoint in (False, True):
        _close("MatrixSolve", {"matrix": a, "rhs": b}, {"adjoint": adjoint})
        for lower in (False, True):
            attrs = {"lower": lower, "adjoint": adjoint}
            _close("MatrixTriangularSolve", {"matrix": a, "rhs": b}, attrs)
    tall, wide = _rand((2, 5, 3), dtype), _rand((2, 2, 3), dtype)
    for m in (tall, wide):
        rhs = _rand(m.shape[:-1] + (2,), dtype)
        for l2 in (0.0, 0.5):
            inputs = {"matrix": m, "rhs": rhs, "l2_regularizer": np.float64(l2)}
            _close("MatrixSolveLs", inputs, rtol=1e-3)
        inputs = {"matrix": m, "rhs": rhs, "l2_regularizer": np.float64(0)}
        _close("MatrixSolveLs", inputs, {"fast": False}, rtol=1e-3)


def test_triangular_solve_broadcasts_batches_and_divides_by_zero_as_tensorflow():
    pytest.importorskip("tensorflow")
    a, b = _spd((2, 1, 3, 3)), _rand((4, 3, 1))
    _close("MatrixTriangularSolve", {"matrix": a, "rhs": b})
    inputs = {"matrix": np.zeros((2, 2), np.float32), "rhs": np.ones((2, 1), np.float32)}
    np.testing.assert_array_equal(
        ours_run("MatrixTriangularSolve", inputs, {})[0],
        tf_run("MatrixTriangularSolve", inputs, {})[0],
    )


@pytest.mark.parametrize(
    "op,matrix,rhs",
    [
        ("MatrixSolve", np.ones((2, 2)), np.ones((2, 1))),
        ("MatrixSolve", np.eye(2), np.ones((3, 1))),
        ("MatrixSolve", np.ones(2), np.ones((2, 1))),
        ("MatrixSolve", np.eye(2), np.ones(2)),
        ("MatrixSolve", np.ones((2, 2, 2)) + np.eye(2), np.ones((1, 2, 1))),
        ("MatrixTriangularSolve", np.eye(2), np.ones((3, 1))),
        ("MatrixTriangularSolve", np.ones(2), np.ones((2, 1))),
        ("MatrixTriangularSolve", np.ones((2, 3)), np.ones((2, 1))),
        ("MatrixTriangularSolve", np.ones((2, 2, 2)), np.ones((3, 2, 1))),
    ],
)
def test_solver_errors_match_tensorflow(op, matrix, rhs):
    pytest.importorskip("tensorflow")
    assert_same_as_tf(op, {"matrix": matrix.astype(np.float32), "rhs": rhs.astype(np.float32)})


def test_solve_ls_errors_match_tensorflow():
    pytest.importorskip("tensorflow")
    for m, r in (((3, 2), (2, 1)), ((2, 3, 2), (1, 3, 1)), ((3, 2), (3,))):
        inputs = {"matrix": np.ones(m, np.float32), "rhs": np.ones(r, np.float32)}
        assert_same_as_tf("MatrixSolveLs", {**inputs, "l2_regularizer": np.float64(0)})
    deficient = {"matrix": np.ones((3, 2), np.float32), "rhs": np.ones((3, 1), np.float32)}
    assert_same_as_tf("MatrixSolveLs", {**deficient, "l2_regularizer": np.float64(0)})


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.float16])
def test_cross_matches_tensorflow_bit_for_bit(dtype):
    pytest.importorskip("tensorflow")
    a, b = (RNG.integers(-50, 50, (2, 4, 3)).astype(dtype) for _ in range(2))
    assert_same_as_tf("Cross", {"a": a, "b": b})


def test_cross_errors_match_tensorflow():
    pytest.importorskip("tensorflow")
    assert_same_as_tf("Cross", {"a": np.ones(3, np.float32), "b": np.ones((2, 3), np.float32)})
    assert_same_as_tf("Cross", {"a": np.float32(1), "b": np.float32(1)})
    with pytest.raises(FailedPreconditionError, match="3-element vectors"):
        run1("Cross", np.ones(2, np.float32), np.ones(2, np.float32))
    assert_same_as_tf("Cross", {"a": np.ones(2, np.float32), "b": np.ones(2, np.float32)})


# -- diagonals and bands ---------------------------------------------------------------------
@pytest.mark.parametrize("lower,upper", [(0, 0), (1, 0), (-1, 0), (0, -1), (2, 1), (3, 4)])
def test_band_part_matches_tensorflow_bit_for_bit(lower, upper):
    pytest.importorskip("tensorflow")
    x = _rand((2, 3, 4))
    for idx in (np.int32, np.int64):
        inputs = {"input": x, "num_lower": idx(lower), "num_upper": idx(upper)}
        assert_same_as_tf("MatrixBandPart", inputs)


def test_band_part_errors_match_tensorflow():
    pytest.importorskip("tensorflow")
    one = np.int64(1)
    assert_same_as_tf("MatrixBandPart", {"input": np.ones(3), "num_lower": one, "num_upper": one})
    big = {"input": np.ones((3, 3)), "num_lower": np.int64(5), "num_upper": one}
    assert_same_as_tf("MatrixBandPart", big)
    assert_same_as_tf("MatrixBandPart", {**big, "num_lower": one, "num_upper": np.int64(5)})


ALIGNS = ["LEFT_RIGHT", "RIGHT_LEFT", "LEFT_LEFT", "RIGHT_RIGHT"]
BANDS = [0, 1, -2, [-1, 2], [-2, 0], [1, 3], [-2, -1]]


@pytest.mark.parametrize("align", ALIGNS)
@pytest.mark.parametrize("k", BANDS)
@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 3), (3, 3)])
def test_diag_part_diag_and_set_diag_match_tensorflow_bit_for_bit(align, k, shape):
    pytest.importorskip("tensorflow")
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1
    k32 = np.array(k, np.int32)
    pad = np.float32(-7)
    inputs = {"input": x, "k": k32, "padding_value": pad}
    assert_same_as_tf("MatrixDiagPartV3", inputs, {"align": align})
    assert_same_as_tf("MatrixDiagPartV2", inputs)
    if not -shape[-2] < np.min(k) <= np.max(k) < shape[-1]:
        return  # out of bounds: the error compared above
    diagonal = tf_run("MatrixDiagPartV3", inputs, {"align": align})[0]
    for rows, cols in ((-1, -1), (shape[-2], shape[-1]), (shape[-2], -1), (-1, shape[-1])):
        d_inputs = {
            "diagonal": diagonal,
            "k": k32,
            "num_rows": np.int32(rows),
            "num_cols": np.int32(cols),
            "padding_value": pad,
        }
        assert_same_as_tf("MatrixDiagV3", d_inputs, {"align": align})
        assert_same_as_tf("MatrixDiagV2", d_inputs)
    s_inputs = {"input": x, "diagonal": diagonal * 10, "k": k32}
    assert_same_as_tf("MatrixSetDiagV3", s_inputs, {"align": align})
    assert_same_as_tf("MatrixSetDiagV2", s_inputs)


@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.complex64, np.float16])
def test_v1_diag_ops_match_tensorflow_bit_for_bit(dtype):
    pytest.importorskip("tensorflow")
    x = RNG.integers(0, 2, (2, 3, 4)).astype(dtype)
    assert_same_as_tf("MatrixDiagPart", {"input": x})
    diagonal = RNG.integers(0, 2, (2, 3)).astype(dtype)
    assert_same_as_tf("MatrixSetDiag", {"input": x, "diagonal": diagonal})
    assert_same_as_tf("MatrixSetDiag", {"input": x, "diagonal": diagonal[:, :2]})
    assert_same_as_tf("MatrixDiagPart", {"input": np.ones(3, dtype)})


def test_diag_errors_match_tensorflow():
    pytest.importorskip("tensorflow")
    x, pad = np.ones((3, 4), np.float32), np.float32(0)
    for k in ([2, 1], [-3, 1], [0, 4], [0, 1, 2]):
        assert_same_as_tf("MatrixDiagPartV3", {"input": x, "k": np.int32(k), "padding_value": pad})
    for d, k, rows, cols in (
        ((2, 3), [0, 2], -1, -1),
        ((3,), 0, 2, -1),
        ((3,), 0, -1, 2),
        ((3,), 0, 4, 5),
        ((), 0, -1, -1),
    ):
        inputs = {
            "diagonal": np.ones(d, np.float32),
            "k": np.int32(k),
            "num_rows": np.int32(rows),
            "num_cols": np.int32(cols),
            "padding_value": pad,
        }
        assert_same_as_tf("MatrixDiagV3", inputs)
    for d, k in (((2,), 0), ((2, 3), [0, 2]), ((3,), [0, 2]), ((3,), [5, 5])):
        inputs = {"input": x, "diagonal": np.ones(d, np.float32), "k": np.int32(k)}
        assert_same_as_tf("MatrixSetDiagV3", inputs)
    with pytest.raises(InvalidArgumentError, match="at least 2-dim"):
        run1("MatrixSetDiagV3", np.ones(3, np.float32), np.ones(3, np.float32), np.int32(0))


# -- FFT ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("suffix,rank", [("", 1), ("2D", 2), ("3D", 3)])
def test_complex_ffts_match_tensorflow(dtype, suffix, rank):
    pytest.importorskip("tensorflow")
    for shape in ((2, 3, 4, 5), (0, 4, 4, 4)):
        x = _rand(shape, dtype)
        _close(f"FFT{suffix}", {"input": x})
        _close(f"IFFT{suffix}", {"input": x})


@pytest.mark.parametrize("real,complex_", [(np.float32, np.complex64), (np.float64, np.complex128)])
@pytest.mark.parametrize("suffix,rank", [("", 1), ("2D", 2), ("3D", 3)])
def test_real_ffts_match_tensorflow(real, complex_, suffix, rank):
    pytest.importorskip("tensorflow")
    x = _rand((2, 4, 6, 8), real)
    treal = {"Treal": dtypes.from_numpy(np.dtype(real))}
    tcomplex = {"Tcomplex": dtypes.from_numpy(np.dtype(complex_))}
    spectrum = _rand((2, 4, 6, 5), complex_)
    for lengths in ((4, 6, 8), (3, 5, 7), (2, 3, 4)):
        n = np.array(lengths[-rank:], np.int32)
        _close(f"RFFT{suffix}", {"input": x, "fft_length": n}, tcomplex)
        _close(f"IRFFT{suffix}", {"input": spectrum, "fft_length": n}, treal)
    too_long = np.array((5, 7, 10)[-rank:], np.int32)
    assert_same_as_tf(f"RFFT{suffix}", {"input": x, "fft_length": too_long}, tcomplex)
    assert_same_as_tf(f"IRFFT{suffix}", {"input": spectrum, "fft_length": too_long}, treal)


def test_fft_errors_match_tensorflow():
    pytest.importorskip("tensorflow")
    assert_same_as_tf("FFT", {"input": np.complex64(1)})
    assert_same_as_tf("FFT2D", {"input": np.ones(3, np.complex64)})
    bad_length = {"input": np.ones(5, np.float32), "fft_length": np.int32([1, 2])}
    assert_same_as_tf("RFFT", bad_length)


# -- Lu, MatrixExponential, CholeskyGrad, tridiagonal ---------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_lu_matches_tensorflow(dtype):
    pytest.importorskip("tensorflow")
    x = _rand((2, 4, 4), dtype)
    from common import dtypes as _dt

    for idx in (np.int32, np.int64):
        attrs = {"output_idx_type": _dt.from_numpy(np.dtype(idx))}
        lu_tf, p_tf = tf_run("Lu", {"input": x}, attrs)
        lu_ours, p_ours = ours_run("Lu", {"input": x}, attrs)
        np.testing.assert_array_equal(p_ours, p_tf)
        assert p_ours.dtype == p_tf.dtype and lu_ours.dtype == lu_tf.dtype
        np.testing.assert_allclose(lu_ours, lu_tf, rtol=1e-4, atol=1e-5)
    assert_same_as_tf("Lu", {"input": np.ones((2, 2), np.float32)})
    assert_same_as_tf("Lu", {"input": np.ones((2, 3), np.float32)})


def test_matrix_exponential_fails_as_tensorflow_removed_it():
    pytest.importorskip("tensorflow")
    assert_same_as_tf("MatrixExponential", {"input": np.eye(2, dtype=np.float32)})


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cholesky_grad_matches_tensorflow(dtype):
    pytest.importorskip("tensorflow")
    chol = np.linalg.cholesky(_spd((2, 4, 4), np.float64)).astype(dtype)
    _close("CholeskyGrad", {"l": chol, "grad": _rand((2, 4, 4), dtype)}, rtol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_tridiagonal_ops_match_tensorflow(dtype):
    pytest.importorskip("tensorflow")
    sup, main, sub = (_rand((2, 1, 5), dtype) for _ in range(3))
    main = main + 4
    rhs = _rand((2, 5, 3), dtype)
    inputs = {"superdiag": sup, "maindiag": main, "subdiag": sub, "rhs": rhs}
    _close("TridiagonalMatMul", inputs)
    diagonals = np.concatenate([sup, main, sub], axis=-2)
    _close("TridiagonalSolve", {"diagonals": diagonals, "rhs": rhs})
    assert_same_as_tf("TridiagonalSolve", {"diagonals": diagonals[..., :2, :], "rhs": rhs})
