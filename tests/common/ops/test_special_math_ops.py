"""Special functions (Betainc, Zeta, Polygamma, Erfinv, Ndtri, Bessel*, Dawsn, Expint,
Fresnel*, Spence): signatures and values against TensorFlow's kernels, edge cases included."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import InvalidArgumentError

from .kernel_harness import run1
from .signatures import assert_signature_matches_tensorflow, module_ops

UNARY = [
    "Erfinv",
    "Ndtri",
    "BesselI0",
    "BesselI0e",
    "BesselI1",
    "BesselI1e",
    "BesselJ0",
    "BesselJ1",
    "BesselK0",
    "BesselK0e",
    "BesselK1",
    "BesselK1e",
    "BesselY0",
    "BesselY1",
    "Dawsn",
    "Expint",
    "FresnelCos",
    "FresnelSin",
    "Spence",
]
OPS = UNARY + ["Betainc", "Zeta", "Polygamma"]

EDGES = [0.0, -0.0, 1e-30, 1e-5, 0.3, 0.5, 0.999999, 1.0, 1.0000001, 2.5, 10.0, 50.0]
EDGES += [-0.3, -0.999999, -1.0, -2.5, -50.0, np.inf, -np.inf, np.nan]
# Arguments where every kernel keeps float32 accuracy: Eigen's float Bessel J/Y and Fresnel
# reduce large arguments in float32 (an absolute error near |x| * 2^-24 there), which
# scipy's float64 evaluation does not share.
LARGE = [100.0, 700.0, 1e4, 1e30]


def _tf():
    return pytest.importorskip("tensorflow")


_OSCILLATING = {"BesselJ0", "BesselJ1", "BesselY0", "BesselY1"}


def _tolerance(dtype, op: str = "") -> dict:
    if dtype == np.float64:
        return {"rtol": 1e-11, "atol": 1e-300}
    # TF flushes float32 denormals to zero; near a zero of J/Y, the float32 argument
    # reduction's absolute error (~|x| 2^-24 times the amplitude) dominates.
    return {"rtol": 3e-6, "atol": 1e-6 if op in _OSCILLATING else 1e-38}


def test_module_registers_exactly_these_ops():
    assert module_ops("common.ops.special_math_ops") == sorted(OPS)


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_against_tensorflow(op, dtype):
    tf = _tf()
    x = np.array(EDGES, dtype)
    got = run1(op, x)
    assert got.dtype == dtype
    want = getattr(tf.raw_ops, op)(x=x).numpy()
    np.testing.assert_allclose(got, want, equal_nan=True, err_msg=op, **_tolerance(dtype, op))
    np.testing.assert_array_equal(np.signbit(got[got == 0]), np.signbit(want[got == 0]))


@pytest.mark.parametrize("op", UNARY)
def test_unary_large_arguments(op):
    tf = _tf()
    for dtype, atol in ((np.float64, 1e-12), (np.float32, 3e-5)):
        x = np.array(LARGE + [-v for v in LARGE], dtype)
        want = getattr(tf.raw_ops, op)(x=x).numpy()
        got = run1(op, x)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=atol, equal_nan=True, err_msg=op)


@pytest.mark.parametrize("op", [op for op in UNARY if op.startswith("Bessel")])
def test_bessel_half_computed_in_float32(op):
    # TensorFlow's CPU kernels take half for the Bessel functions only (no bfloat16).
    tf = _tf()
    x = np.array([0.1, 0.5, 0.9, 2.0, 7.0, 20.0], np.float16)
    want = getattr(tf.raw_ops, op)(x=x).numpy()
    got = run1(op, x)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want)


_GRID = np.array([-3, -2.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3, 10, 50, np.inf, -np.inf, np.nan])


@pytest.mark.parametrize("op", ["Zeta", "Polygamma"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_zeta_polygamma_grid_against_tensorflow(op, dtype):
    tf = _tf()
    a, b = (v.astype(dtype) for v in np.meshgrid(_GRID, _GRID, indexing="ij"))
    names = ("x", "q") if op == "Zeta" else ("a", "x")
    want = getattr(tf.raw_ops, op)(**dict(zip(names, (a, b)))).numpy()
    got = run1(op, a, b)
    if dtype == np.float32 and op == "Polygamma":
        # Eigen sums zeta(11, -2.5)'s terms +-2^11 in float32 and keeps its rounding error.
        cancel = (a == 10) & (b == -2.5)
        assert np.count_nonzero(cancel) == 1
        got, want = got[~cancel], want[~cancel]
    np.testing.assert_allclose(got, want, equal_nan=True, err_msg=op, **_tolerance(dtype))


def test_zeta_polygamma_broadcast_and_error():
    tf = _tf()
    x = np.array([[2.0], [3.5], [4.0]])
    q = np.array([0.5, 1.0, 7.0, 30.0])
    np.testing.assert_allclose(run1("Zeta", x, q), tf.raw_ops.Zeta(x=x, q=q).numpy(), rtol=1e-12)
    n = np.array([[0.0], [1.0], [2.0], [3.0], [1.5], [-1.0]])
    want = tf.raw_ops.Polygamma(a=n, x=q).numpy()
    np.testing.assert_allclose(run1("Polygamma", n, q), want, rtol=1e-12, equal_nan=True)
    with pytest.raises(InvalidArgumentError, match=r"Incompatible shapes: \[2\] vs. \[3\]"):
        run1("Zeta", np.ones(2), np.ones(3))


_AB = np.array([-1, 0, 1e-3, 0.5, 1, 2.5, 30, 1e3, np.inf, np.nan])
_X = np.array([-0.1, 0, 1e-6, 0.3, 0.5, 0.9, 1, 1.1, np.nan])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_betainc_grid_against_tensorflow(dtype):
    tf = _tf()
    # Eigen's float32 continued fraction loses ~1e-3 relative once a or b is ~1e3; scipy
    # (float64, rounded) is the accurate one there, so float32 stops at 30.
    ab = _AB if dtype == np.float64 else _AB[_AB != 1e3]
    a, b, x = (v.astype(dtype) for v in np.meshgrid(ab, ab, _X, indexing="ij"))
    want = tf.raw_ops.Betainc(a=a, b=b, x=x).numpy()
    got = run1("Betainc", a, b, x)
    assert got.dtype == dtype
    tol = {"rtol": 1e-10, "atol": 1e-300} if dtype == np.float64 else {"rtol": 2e-5, "atol": 1e-38}
    np.testing.assert_allclose(got, want, equal_nan=True, **tol)


def test_betainc_scalars_broadcast_to_the_non_scalar_shape():
    tf = _tf()
    a, b = np.float64(2.0), np.array([[0.5, 1.0, 3.0]])
    x = np.array([[0.1, 0.5, 0.9]])
    got = run1("Betainc", a, b, x)
    np.testing.assert_allclose(got, tf.raw_ops.Betainc(a=a, b=b, x=x).numpy(), rtol=1e-12)
    got = run1("Betainc", a, np.float64(3.0), x)
    assert got.shape == (1, 3)


@pytest.mark.parametrize(
    "shapes, message",
    [
        (((2,), (3,), (2,)), r"Shapes of a and b are inconsistent: \[2\] vs. \[3\]"),
        (((2, 1), (), (2,)), r"Shapes of a and x are inconsistent: \[2,1\] vs. \[2\]"),
        (((), (3,), (2,)), r"Shapes of b and x are inconsistent: \[3\] vs. \[2\]"),
    ],
)
def test_betainc_does_not_broadcast_errors_as_tensorflow(shapes, message):
    tf = _tf()
    args = [np.full(s, 0.5) for s in shapes]
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        tf.raw_ops.Betainc(a=args[0], b=args[1], x=args[2])
    with pytest.raises(InvalidArgumentError, match=message):
        run1("Betainc", *args)


def test_digamma_is_nan_at_its_poles_as_tensorflow():
    tf = _tf()
    from . import run1 as run_cwise  # Digamma's kernel needs the output types filled

    for dtype in (np.float32, np.float64):
        x = np.array([0.0, -0.0, -1.0, -2.5, 0.3, 7.0, np.inf, -np.inf, np.nan], dtype)
        want = tf.raw_ops.Digamma(x=x).numpy()
        np.testing.assert_allclose(run_cwise("Digamma", x), want, rtol=3e-6, equal_nan=True)
