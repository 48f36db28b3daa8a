"""Ops: coefficient-wise math (TensorFlow's cwise_ops): binary with broadcasting, unary,
comparisons, logical ops and Select.

Signatures are TensorFlow's (names, type sets in TF's order, attrs and defaults, checked
against TF's OpDefs by tests/common/ops/test_math_ops.py). Kernels are stateless numpy
functions, cheap (run inline by the executor), safe from any thread. Half and bfloat16 are
computed in float32 and rounded once; results always have the op's output dtype.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np
import scipy.special as sp

from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops import special_math_ops
from common.ops.registry import KernelConstruction, register_kernel, register_op

# Type sets, spelled and ordered as in TensorFlow's math_ops.cc.
_FLT = "bfloat16, half, float, double"
_FLT_CPLX = _FLT + ", complex64, complex128"
_SIGNED = _FLT + ", int8, int16, int32, int64"
_SIGNED_CPLX = _SIGNED + ", complex64, complex128"
_BINARY_ARITH = (
    "bfloat16, half, float, double, uint8, int8, uint16, int16, int32, uint32, uint64, "
    "int64, complex64, complex128"
)
_INTS = "int8, int16, int32, int64, uint8, uint16, uint32, uint64"
_REAL = "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64"
_MINMAX = "bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64"

Fn = Callable[..., np.ndarray]


def _check_int_div(y: np.ndarray, x: np.ndarray) -> None:
    # An empty result divides nothing (TF raises only for an element it computes).
    if x.size == 0:
        return
    if mu.is_integer(y.dtype) and np.any(y == 0):
        raise InvalidArgumentError("Integer division by zero")


# ---------------------------------------------------------------------------------------
# Binary elementwise
# ---------------------------------------------------------------------------------------


_NUMPY_VALUES = (np.ndarray, np.generic)

# Ufuncs whose Python operator on two numpy scalars of one type gives the same value and
# type (numpy's scalar math: ~40 ns against ~400 ns for the ufunc on scalars).
_SCALAR_OPS: dict[Callable, Callable] = {
    np.add: operator.add,
    np.subtract: operator.sub,
    np.multiply: operator.mul,
}


def quietly(fn: Callable[..., np.ndarray], *args) -> np.ndarray:
    """fn(*args) with floating-point errors silent (see math_util.FpErrorsIgnored)."""
    if mu.fp_errors_ignored():
        return fn(*args)
    with np.errstate(all="ignore"):
        return fn(*args)


def _binary_kernel(fn: Fn) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        out = mu.np_type(kc.output_types[0])
        inp = mu.np_type(kc.input_types[0]) if kc.input_types else out
        # Operands already of the input dtype need no conversion (not half/bfloat16, which
        # are computed in float32); numpy scalars of that dtype may take scalar math.
        fast = mu.compute_type(inp) == inp
        scalar_t = inp.type if fast else None
        scalar_op = _SCALAR_OPS.get(fn) if fast and inp == out else None
        fp_errors_ignored = mu.fp_errors_ignored

        def compute(ctx, inputs: list) -> list:
            x, y = inputs[0], inputs[1]
            # Fast paths (benchmarks: a scalar AddV2 ~0.3 us instead of ~2 us): two numpy
            # scalars, or two arrays, of the input dtype and the same shape go straight to
            # the operator or `fn`.
            tx, ty = type(x), type(y)
            if fast:  # 0-d arrays (fed, received, Const) as scalars
                if tx is np.ndarray and x.shape == () and x.dtype.type is scalar_t:
                    x, tx = x[()], scalar_t
                if ty is np.ndarray and y.shape == () and y.dtype.type is scalar_t:
                    y, ty = y[()], scalar_t
            if tx is scalar_t and ty is tx:
                if scalar_op is not None:
                    if fp_errors_ignored():
                        z = scalar_op(x, y)
                    else:
                        with np.errstate(all="ignore"):
                            z = scalar_op(x, y)
                    return [z if type(z) is tx else mu.as_type(z, out)]
            elif not (fast and tx is ty and tx is np.ndarray):
                # An array and a scalar of its dtype (an LSTM's f + 1.0) broadcast always.
                if not (
                    (tx is np.ndarray and ty is scalar_t and x.dtype == inp)
                    or (ty is np.ndarray and tx is scalar_t and y.dtype == inp)
                ):
                    return _binary_general(fn, out, x, y)
            elif x.dtype != inp or y.dtype != inp or x.shape != y.shape:
                return _binary_general(fn, out, x, y)
            if fp_errors_ignored():
                z = fn(x, y)
            else:
                with np.errstate(all="ignore"):
                    z = fn(x, y)
            return [z if z.dtype == out else mu.as_type(z, out)]

        return compute

    return factory


def _binary_general(fn: Fn, out: np.dtype, x, y) -> list:
    """Any operands: converted to arrays, shapes checked, computed in the compute type."""
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape:
        mu.broadcast_shape(x.shape, y.shape)
    return [quietly(_compute_as, fn, out, mu.upcast(x), mu.upcast(y))]


def _compute_as(fn: Fn, out: np.dtype, *args: np.ndarray) -> np.ndarray:
    # The cast back to `out` (half, bfloat16) may overflow too: it is silent as well.
    return mu.as_type(fn(*args), out)


def _binary(name: str, types: str, fn: Fn, *, x: str = "x", y: str = "y", **flags) -> None:
    register_op(name, [f"{x}: T", f"{y}: T"], ["z: T"], [f"T: {{{types}}}"], **flags)
    register_kernel(name)(_binary_kernel(fn))


def _trunc_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if mu.is_integer(x.dtype):
        _check_int_div(y, x)
        q = np.floor_divide(x, y)
        fix = (np.remainder(x, y) != 0) & ((x < 0) != (y < 0))
        return q + fix.astype(q.dtype)
    if x.dtype.kind == "c":
        return x / y
    return np.trunc(x / y)


def _div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # Div and RealDiv: C++ `/`, which truncates integers toward zero.
    return _trunc_div(x, y) if mu.is_integer(x.dtype) else x / y


def _floor_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if mu.is_integer(x.dtype):
        _check_int_div(y, x)
        return np.floor_divide(x, y)
    if x.dtype.kind == "c":
        return x / y
    return np.floor(x / y)


def _floor_mod(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if mu.is_integer(x.dtype):
        _check_int_div(y, x)
        return np.remainder(x, y)
    r = np.fmod(x, y)  # google_floor_fmod
    return np.where((r != 0) & ((y < 0) != (r < 0)), r + y, r)


def _trunc_mod(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    _check_int_div(y, x)
    return np.fmod(x, y)


def _pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if mu.is_integer(y.dtype) and np.any(y < 0):
        raise InvalidArgumentError("Integers to negative integer powers are not allowed")
    return np.power(x, y)


def _zero_where_zero(fn: Fn, on: str) -> Fn:
    """x op y, but 0 wherever the named operand is 0 (DivNoNan, MulNoNan, Xlogy ...)."""

    def g(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        z = fn(x, y)
        zero = (y if on == "y" else x) == 0
        return np.where(zero, np.zeros((), z.dtype), z)

    return g


def _squared_difference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    d = x - y
    return d * np.conj(d)


def _shift(left: bool) -> Fn:
    def g(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        bits = x.dtype.itemsize * 8
        y = np.clip(y, 0, bits - 1).astype(x.dtype)  # TF clamps the shift amount
        if left:  # shift the unsigned representation, as TF does
            u = np.dtype(f"u{x.dtype.itemsize}")
            x, y = np.broadcast_arrays(x, y)
            return np.left_shift(x.astype(u), y.astype(u)).astype(x.dtype)
        return np.right_shift(x, y)

    return g


def _register_binary() -> None:
    add_types = (
        "bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, "
        "complex128, string"
    )
    _binary("Add", add_types, np.add)
    _binary(
        "AddV2",
        "bfloat16, half, float, double, uint8, uint16, uint32, uint64, int8, int16, int32, "
        "int64, complex64, complex128",
        np.add,
        commutative=True,
        aggregate=True,
    )
    _binary(
        "Sub",
        "bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, complex64, "
        "complex128, uint32, uint64",
        np.subtract,
    )
    _binary("Mul", _BINARY_ARITH, np.multiply, commutative=True)
    _binary("Div", _BINARY_ARITH, _div)
    _binary("RealDiv", _BINARY_ARITH, _div)
    _binary(
        "DivNoNan",
        "half, float, bfloat16, double, complex64, complex128",
        _zero_where_zero(np.divide, "y"),
    )
    _binary("MulNoNan", _FLT_CPLX, _zero_where_zero(np.multiply, "y"))
    _binary("FloorDiv", _BINARY_ARITH, _floor_div)
    _binary("FloorMod", _INTS + ", bfloat16, half, float, double", _floor_mod)
    _binary("Mod", "int32, int64, half, half, bfloat16, float, double", _trunc_mod)
    _binary("TruncateDiv", _BINARY_ARITH, _trunc_div)
    _binary("TruncateMod", "int32, int64, bfloat16, half, float, double", _trunc_mod)
    _binary(
        "Pow",
        "bfloat16, float, half, double, int8, int16, int32, int64, complex64, complex128",
        _pow,
    )
    _binary("Maximum", _MINMAX, np.maximum)
    _binary("Minimum", _MINMAX, np.minimum)
    _binary(
        "SquaredDifference",
        "bfloat16, half, float, double, int32, int64, complex64, complex128",
        _squared_difference,
        commutative=True,
    )
    _binary("Atan2", _FLT, np.arctan2, x="y", y="x")
    xfn = "half, bfloat16, float, double, complex64, complex128"
    _binary("Xdivy", xfn, _zero_where_zero(np.divide, "x"))
    _binary("Xlogy", xfn, _zero_where_zero(lambda x, y: x * np.log(y), "x"))
    _binary("Xlog1py", xfn, _zero_where_zero(lambda x, y: x * np.log1p(y), "x"))
    _binary("BitwiseAnd", _INTS, np.bitwise_and, commutative=True)
    _binary("BitwiseOr", _INTS, np.bitwise_or, commutative=True)
    _binary("BitwiseXor", _INTS, np.bitwise_xor, commutative=True)
    _binary("LeftShift", _INTS, _shift(left=True))
    _binary("RightShift", _INTS, _shift(left=False))


# ---------------------------------------------------------------------------------------
# Unary elementwise
# ---------------------------------------------------------------------------------------


def _unary_kernel(fn: Fn) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        out = mu.np_type(kc.output_types[0])
        inp = mu.np_type(kc.input_types[0]) if kc.input_types else out
        fast = mu.compute_type(inp) == inp
        fp_errors_ignored = mu.fp_errors_ignored

        def compute(ctx, inputs: list) -> list:
            x = inputs[0]
            if fast and type(x) is np.ndarray and x.dtype == inp and fp_errors_ignored():
                z = fn(x)  # the executor's case: an array of the input dtype, errors quiet
                return [z if z.dtype == out else mu.as_type(z, out)]
            return [quietly(_compute_as, fn, out, mu.upcast(np.asarray(x)))]

        return compute

    return factory


def _unary(
    name: str,
    types: str | None,
    fn: Fn,
    *,
    out: str = "y: T",
    arg: str = "x",
    attrs: tuple[str, ...] = (),
) -> None:
    type_attr = (f"T: {{{types}}}",) if types else ()
    register_op(name, [f"{arg}: {'T' if types else 'bool'}"], [out], type_attr + attrs)
    register_kernel(name)(_unary_kernel(fn))


def _reciprocal(x: np.ndarray) -> np.ndarray:
    if mu.is_integer(x.dtype):
        return _trunc_div(np.ones((), x.dtype), x)
    return 1 / x


def _round(x: np.ndarray) -> np.ndarray:
    return x if mu.is_integer(x.dtype) else np.round(x)  # half to even, as TF


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # 1 / (1 + exp(-x)) in one buffer (the same operations in the same order).
    if x.ndim == 0 or x.dtype.kind not in "fc":
        return 1 / (1 + np.exp(-x))
    t = np.negative(x)
    np.exp(t, out=t)
    np.add(t, 1, out=t)
    return np.divide(1, t, out=t)


def _popcount(x: np.ndarray) -> np.ndarray:
    return np.bitwise_count(x.view(f"u{x.dtype.itemsize}"))


def _register_unary() -> None:
    simple: list[tuple[str, str, Fn]] = [
        ("Abs", _SIGNED, np.abs),
        ("Neg", _SIGNED_CPLX, np.negative),
        ("Exp", _FLT_CPLX, np.exp),
        ("Expm1", _FLT_CPLX, np.expm1),
        ("Log", _FLT_CPLX, np.log),
        ("Log1p", _FLT_CPLX, np.log1p),
        ("Sqrt", _FLT_CPLX, np.sqrt),
        ("Rsqrt", _FLT_CPLX, lambda x: 1 / np.sqrt(x)),
        ("Square", _FLT + ", " + _INTS + ", complex64, complex128", lambda x: x * x),
        ("Sin", _FLT_CPLX, np.sin),
        ("Cos", _FLT_CPLX, np.cos),
        ("Tan", _FLT_CPLX, np.tan),
        ("Asin", _FLT_CPLX, np.arcsin),
        ("Acos", _FLT_CPLX, np.arccos),
        ("Atan", _FLT_CPLX, np.arctan),
        ("Sinh", _FLT_CPLX, np.sinh),
        ("Cosh", _FLT_CPLX, np.cosh),
        ("Tanh", _FLT_CPLX, np.tanh),
        ("Asinh", _FLT_CPLX, np.arcsinh),
        ("Acosh", _FLT_CPLX, np.arccosh),
        ("Atanh", _FLT_CPLX, np.arctanh),
        ("Sigmoid", _FLT_CPLX, _sigmoid),
        ("Sign", _SIGNED_CPLX, np.sign),
        ("Round", _SIGNED_CPLX, _round),
        ("Rint", _FLT, np.rint),
        ("Floor", _FLT, np.floor),
        ("Ceil", _FLT, np.ceil),
        ("Reciprocal", _SIGNED_CPLX, _reciprocal),
        ("Inv", _SIGNED_CPLX, _reciprocal),
        ("Erf", _FLT, sp.erf),
        ("Erfc", _FLT, sp.erfc),
        ("Lgamma", _FLT, sp.gammaln),
        ("Digamma", _FLT, special_math_ops.digamma),
        ("Invert", _INTS, np.invert),
    ]
    for name, types, fn in simple:
        _unary(name, types, fn)
    for name, fn in (("IsNan", np.isnan), ("IsInf", np.isinf), ("IsFinite", np.isfinite)):
        _unary(name, _FLT, fn, out="y: bool")
    _unary("LogicalNot", None, np.logical_not, out="y: bool")
    _unary("PopulationCount", _INTS, _popcount, out="y: uint8")
    cplx_in = "T: {complex64, complex128} = complex64"
    real_out = "Tout: {float, double} = float"
    register_op("ComplexAbs", ["x: T"], ["y: Tout"], [cplx_in, real_out])
    register_kernel("ComplexAbs")(_unary_kernel(np.abs))
    register_op(
        "Conj", ["input: T"], ["output: T"], ["T: {complex64, complex128, variant} = complex64"]
    )
    register_kernel("Conj")(_unary_kernel(np.conj))
    for name, fn in (("Real", np.real), ("Imag", np.imag), ("Angle", np.angle)):
        register_op(name, ["input: T"], ["output: Tout"], [cplx_in, real_out])
        register_kernel(name)(_unary_kernel(fn))
    register_op(
        "Complex",
        ["real: T", "imag: T"],
        ["out: Tout"],
        ["T: {float, double} = float", "Tout: {complex64, complex128} = complex64"],
    )
    register_kernel("Complex")(_binary_kernel(_complex))


def _complex(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    re, im = np.broadcast_arrays(re, im)
    z = np.empty(re.shape, np.complex128 if re.dtype == np.float64 else np.complex64)
    z.real, z.imag = re, im
    return z


# ---------------------------------------------------------------------------------------
# Comparisons, logical ops, Select
# ---------------------------------------------------------------------------------------


def _compare(name: str, fn: Fn) -> None:
    register_op(name, ["x: T", "y: T"], ["z: bool"], [f"T: {{{_REAL}}}"])
    register_kernel(name)(_binary_kernel(fn))


def _equality_kernel(fn: Fn, mismatch: bool) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        strict = kc.attrs.get("incompatible_shape_error", True)

        def compute(ctx, inputs: list) -> list:
            x, y = np.asarray(inputs[0]), np.asarray(inputs[1])
            if x.shape != y.shape:
                try:
                    mu.broadcast_shape(x.shape, y.shape)
                except InvalidArgumentError:
                    if strict:
                        raise
                    return [np.asarray(mismatch)]  # TF: a scalar when shapes differ
            return [np.asarray(quietly(fn, mu.upcast(x), mu.upcast(y)), dtype=np.bool_)]

        return compute

    return factory


def _approximate_equal(kc: KernelConstruction) -> Callable:
    tol = np.float32(kc.attrs.get("tolerance", 1e-5))

    def compute(ctx, inputs: list) -> list:
        x, y = np.asarray(inputs[0]), np.asarray(inputs[1])
        if x.shape != y.shape:
            raise InvalidArgumentError(
                f"x and y must be of the same shape. x shape: {mu.shape_str(x.shape)}. "
                f"y shape: {mu.shape_str(y.shape)}"
            )
        with np.errstate(all="ignore"):
            d = np.abs(mu.upcast(x) - mu.upcast(y))
        return [np.asarray(d < tol.astype(d.dtype) if d.dtype.kind == "f" else d < tol)]

    return compute


def _select(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        c, t, e = (np.asarray(v) for v in inputs)
        if c.ndim == 0:
            return [t if c else e]
        if t.shape != e.shape:
            raise InvalidArgumentError(
                "'then' and 'else' must have the same size.  but received: "
                f"{mu.shape_str(t.shape)} vs. {mu.shape_str(e.shape)}"
            )
        if c.ndim == 1 and t.ndim > 1:
            if c.shape[0] != t.shape[0]:
                raise InvalidArgumentError(
                    "Number of batches of 'then' must match size of 'cond', but saw: "
                    f"{t.shape[0]} vs. {c.shape[0]}"
                )
            c = c.reshape(c.shape + (1,) * (t.ndim - 1))
        elif c.shape != t.shape:
            raise InvalidArgumentError(
                "'then' and 'else' must have the same size.  but received: "
                f"{mu.shape_str(c.shape)} vs. {mu.shape_str(t.shape)}"
            )
        return [np.where(c, t, e).astype(t.dtype, copy=False)]

    return compute


def _select_v2(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        c, t, e = (np.asarray(v) for v in inputs)
        mu.broadcast_shape(c.shape, t.shape, e.shape)
        return [np.where(c, t, e).astype(t.dtype, copy=False)]

    return compute


def _register_comparisons() -> None:
    _compare("Less", np.less)
    _compare("LessEqual", np.less_equal)
    _compare("Greater", np.greater)
    _compare("GreaterEqual", np.greater_equal)
    for name, fn, mismatch in (("Equal", np.equal, False), ("NotEqual", np.not_equal, True)):
        register_op(
            name,
            ["x: T", "y: T"],
            ["z: bool"],
            ["T: type", "incompatible_shape_error: bool = true"],
            commutative=True,
        )
        register_kernel(name)(_equality_kernel(fn, mismatch))
    for name, logical in (("LogicalAnd", np.logical_and), ("LogicalOr", np.logical_or)):
        register_op(name, ["x: bool", "y: bool"], ["z: bool"], commutative=True)
        register_kernel(name)(_binary_kernel(logical))
    register_op(
        "ApproximateEqual",
        ["x: T", "y: T"],
        ["z: bool"],
        [
            (
                "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, "
                "qint32, bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}"
            ),
            "tolerance: float = 1e-05",
        ],
        commutative=True,
    )
    register_kernel("ApproximateEqual")(_approximate_equal)
    for name, kernel in (("Select", _select), ("SelectV2", _select_v2)):
        register_op(name, ["condition: bool", "t: T", "e: T"], ["output: T"], ["T: type"])
        register_kernel(name)(kernel)


_register_binary()
_register_unary()
_register_comparisons()
