"""Ops (executor stage): special functions (TensorFlow's cwise_op_betainc / zeta / polygamma
/ erfinv / ndtri / bessel / special_math kernels): Betainc, Zeta, Polygamma, Erfinv, Ndtri,
the Bessel functions I0 I0e I1 I1e J0 J1 K0 K0e K1 K1e Y0 Y1, Dawsn, Expint, FresnelCos,
FresnelSin and Spence.

Values come from scipy.special (Cephes, the library Eigen's kernels were ported from),
computed in float64 and rounded once to the op's dtype; where Eigen's domain handling
differs from scipy's (K(x<0) = inf, Y(x<0) = -inf, Ei(x<0) = NaN, Zeta at non-positive
integer q, Betainc's x = 0 / x = 1 short cuts) the masks below restate Eigen's branches.
Erfinv is Eigen's ndtri((x + 1) / 2) / sqrt(2) with the half-sum in the op's dtype, so
float32 rounds as TensorFlow does near 0. Pure functions: safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.special as sp

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op

_FLT = "bfloat16, half, float, double"
Fn = Callable[..., np.ndarray]


def _unary_kernel(fn: Fn) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        out = mu.np_type(kc.attr("T"))

        def compute(ctx: OpKernelContext, inputs: list) -> list:
            x = mu.upcast(np.asarray(inputs[0]))  # float32 for half/bfloat16, as Eigen
            with np.errstate(all="ignore"):
                return [mu.as_type(fn(x), out)]

        return compute

    return factory


def _f64(fn: Fn) -> Fn:
    """`fn` evaluated in float64 on an array of the compute dtype."""
    return lambda x: fn(x.astype(np.float64))


def _erfinv(x: np.ndarray) -> np.ndarray:
    half_sum = (x + x.dtype.type(1)) / x.dtype.type(2)  # in the op's dtype, as Eigen
    y = sp.ndtri(half_sum.astype(np.float64)).astype(x.dtype)
    return y * x.dtype.type(np.sqrt(0.5))


def _k(fn: Fn) -> Fn:
    """K0, K1 and their scaled forms: Eigen returns +inf for every x <= 0."""
    return lambda x: np.where(x < 0, np.inf, fn(x.astype(np.float64)))


def _y(fn: Fn, nan_at_zero_f32: bool = False) -> Fn:
    """Y0, Y1: Eigen returns -inf for x < 0; its float Y1 gives NaN at 0."""

    def g(x: np.ndarray) -> np.ndarray:
        y = np.where(x < 0, -np.inf, fn(x.astype(np.float64)))
        if nan_at_zero_f32 and x.dtype == np.float32:
            y = np.where(x == 0, np.nan, y)
        return y

    return g


def _expint(x: np.ndarray) -> np.ndarray:
    # Eigen's Ei is defined for x >= 0 only and its series gives NaN at +inf.
    return np.where((x < 0) | np.isinf(x), np.nan, sp.expi(x.astype(np.float64)))


def _fresnel(which: int) -> Fn:
    return lambda x: sp.fresnel(x.astype(np.float64))[which]


_UNARY: list[tuple[str, Fn]] = [
    ("Erfinv", _erfinv),
    ("Ndtri", _f64(sp.ndtri)),
    ("BesselI0", _f64(sp.i0)),
    ("BesselI0e", _f64(sp.i0e)),
    ("BesselI1", _f64(sp.i1)),
    ("BesselI1e", _f64(sp.i1e)),
    ("BesselJ0", _f64(sp.j0)),
    ("BesselJ1", _f64(sp.j1)),
    ("BesselK0", _k(sp.k0)),
    ("BesselK0e", _k(sp.k0e)),
    ("BesselK1", _k(sp.k1)),
    ("BesselK1e", _k(sp.k1e)),
    ("BesselY0", _y(sp.y0)),
    ("BesselY1", _y(sp.y1, nan_at_zero_f32=True)),
    ("Dawsn", lambda x: sp.dawsn(x.astype(np.float64)) + 0.0),  # Eigen: dawsn(-0) = +0
    ("Expint", _expint),
    ("FresnelCos", _fresnel(1)),
    ("FresnelSin", _fresnel(0)),
    ("Spence", _f64(sp.spence)),
]


def zeta(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hurwitz zeta with Eigen's branches: at a non-positive integer q, +inf for an even
    integer x and NaN otherwise (scipy says +inf); 0 for x = +inf, q > 1."""
    z = sp.zeta(x, q)
    pole = (q <= 0) & (q == np.floor(q)) & ~(x <= 1)  # NaN x passes Eigen's x < 1 test
    even = (x == np.floor(x)) & ((np.fmod(x, 2) == 0) | np.isinf(x))
    z = np.where(pole, np.where(even, np.inf, np.nan), z)
    return np.where(np.isposinf(x) & (q > 1), 0.0, z)


def digamma(x: np.ndarray) -> np.ndarray:
    """psi(x), NaN at every pole as Eigen's (scipy's is -inf at +0 and +inf at -0)."""
    return np.where((x <= 0) & (x == np.floor(x)), np.nan, sp.psi(x))


def _polygamma(dtype: np.dtype) -> Fn:
    """psi^(n)(x) = (-1)^(n+1) n! zeta(n+1, x), n a non-negative integer (else NaN), the
    product taken in the op's dtype as Eigen does (so n! overflows float32 past n = 34)."""

    def fn(n: np.ndarray, x: np.ndarray) -> np.ndarray:
        n, x = np.broadcast_arrays(n, x)
        valid = (n >= 0) & (n == np.floor(n))
        fact = np.exp(sp.gammaln(n + 1)).astype(dtype)
        sign = np.where(np.fmod(n, 2) == 0, -1.0, 1.0).astype(dtype)
        higher = sign * fact * zeta(n + 1, x).astype(dtype)
        out = np.where(n == 0, digamma(x).astype(dtype), higher)
        return np.where(valid, out, np.nan)

    return fn


def _betainc(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """I_x(a, b) with Eigen's order of checks: NaN off the domain, then exactly 0 / 1 at
    x = 0 / 1 (even for a NaN a or b), then NaN for an infinite a or b."""
    z = np.where(np.isinf(a) | np.isinf(b), np.nan, sp.betainc(a, b, x))
    z = np.where(x == 0, 0.0, np.where(x == 1, 1.0, z))
    return np.where((a <= 0) | (b <= 0) | (x < 0) | (x > 1), np.nan, z)


def _binary_kernel(name: str) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        out = mu.np_type(kc.attr("T"))
        fn = zeta if name == "Zeta" else _polygamma(out)

        def compute(ctx: OpKernelContext, inputs: list) -> list:
            x, y = np.asarray(inputs[0]), np.asarray(inputs[1])
            if x.shape != y.shape:
                mu.broadcast_shape(x.shape, y.shape)
            with np.errstate(all="ignore"):
                return [mu.as_type(fn(x.astype(np.float64), y.astype(np.float64)), out)]

        return compute

    return factory


def _check_betainc_shapes(shapes: dict[str, tuple[int, ...]]) -> tuple[int, ...]:
    """BetaincOp: every non-scalar operand must have one shape (no broadcasting)."""
    for p, q in (("a", "b"), ("a", "x"), ("b", "x")):
        if shapes[p] and shapes[q] and shapes[p] != shapes[q]:
            raise InvalidArgumentError(
                f"Shapes of {p} and {q} are inconsistent: "
                f"{mu.shape_str(shapes[p])} vs. {mu.shape_str(shapes[q])}"
            )
    return next((s for s in shapes.values() if s), ())


def _betainc_kernel(kc: KernelConstruction) -> Callable:
    out = mu.np_type(kc.attr("T"))

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        a, b, x = (np.asarray(v, np.float64) for v in inputs)
        shape = _check_betainc_shapes({"a": a.shape, "b": b.shape, "x": x.shape})
        with np.errstate(all="ignore"):
            z = _betainc(*np.broadcast_arrays(a, b, x))
        return [mu.as_type(np.broadcast_to(z, shape), out)]

    return compute


for _name, _fn in _UNARY:
    register_op(_name, ["x: T"], ["y: T"], [f"T: {{{_FLT}}}"])
    register_kernel(_name)(_unary_kernel(_fn))

register_op("Betainc", ["a: T", "b: T", "x: T"], ["z: T"], ["T: {float, double}"])
register_kernel("Betainc")(_betainc_kernel)
for _name, _args in (("Zeta", ("x", "q")), ("Polygamma", ("a", "x"))):
    register_op(_name, [f"{_args[0]}: T", f"{_args[1]}: T"], ["z: T"], ["T: {float, double}"])
    register_kernel(_name)(_binary_kernel(_name))
