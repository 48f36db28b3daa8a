"""Client, graph building: special functions (tf.math.betainc, zeta, polygamma, erfinv,
erfcinv, ndtri, lbeta, igamma, igammac, xlog1py, xdivy, tf.math.special.*), named as
TensorFlow's math_ops / special_math_ops / gen_math_ops name them (a raw op keeps its type
as its name; a wrapper opens its snake_case scope)."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import ops as _ops
from client.framework import shape_fns
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import math_ops

_UNARY_OPS = [
    "Lgamma",
    "Digamma",
    "Erfc",
    "Erfinv",
    "Ndtri",
    "Dawsn",
    "Expint",
    "FresnelCos",
    "FresnelSin",
    "Spence",
]
_UNARY_OPS += [f"Bessel{f}" for f in ("I0", "I0e", "I1", "I1e", "J0", "J1")]
_UNARY_OPS += [f"Bessel{f}" for f in ("K0", "K0e", "K1", "K1e", "Y0", "Y1")]


def _betainc_shape(op: Any) -> list[Any]:
    """TF's Betainc shape function: the non-scalar inputs merged (no broadcasting), the
    one non-scalar input when the others are scalars, unknown with an unknown rank."""
    shapes = [t.shape for t in op.inputs]
    output, some_non_scalar, scalars = TensorShape(None), TensorShape(None), 0
    for s in shapes:
        if s.ndims is None:
            some_non_scalar = s
        elif s.ndims == 0:
            scalars += 1
        else:
            try:
                output = output.merge_with(s)
            except ValueError as e:
                raise shape_fns.ShapeError(str(e)) from None
            some_non_scalar = output
    if scalars == len(shapes) - 1:
        return [some_non_scalar]
    return [shapes[0] if scalars == len(shapes) else output]


for _op in _UNARY_OPS:
    shape_fns.SHAPE_FNS[_op] = lambda op: [op.inputs[0].shape]
for _op in ("Zeta", "Polygamma", "Igamma", "Igammac", "IgammaGradA", "Xlog1py"):
    shape_fns.SHAPE_FNS[_op] = lambda op: [
        shape_fns.broadcast_shapes(op.inputs[0].shape, op.inputs[1].shape)
    ]
shape_fns.SHAPE_FNS["Betainc"] = _betainc_shape


def _raw(op_type: str):
    """A generated op: inputs by position, the node named after the op type."""

    def fn(*args: Any, name: str | None = None) -> Any:
        return apply_op(op_type, list(args), {}, name).outputs[0]

    fn.__name__ = op_type
    return fn


betainc = _raw("Betainc")
zeta = _raw("Zeta")
polygamma = _raw("Polygamma")
igamma = _raw("Igamma")
igammac = _raw("Igammac")


def _scoped(op_type: str, scope_name: str):
    """TF's wrappers: `with name_scope(name, scope_name): gen_op(x)`."""

    def fn(x: Any, name: str | None = None) -> Any:
        with _ops.name_scope(name, scope_name, [x]):
            return apply_op(op_type, [x], {}).outputs[0]

    fn.__name__ = scope_name
    return fn


erfinv = _scoped("Erfinv", "erfinv")
ndtri = _scoped("Ndtri", "ndtri")
dawsn = _scoped("Dawsn", "dawsn")
expint = _scoped("Expint", "expint")
fresnel_cos = _scoped("FresnelCos", "fresnel_cos")
fresnel_sin = _scoped("FresnelSin", "fresnel_sin")
spence = _scoped("Spence", "spence")
bessel_i0 = _scoped("BesselI0", "bessel_i0")
bessel_i0e = _scoped("BesselI0e", "bessel_i0e")
bessel_i1 = _scoped("BesselI1", "bessel_i1")
bessel_i1e = _scoped("BesselI1e", "bessel_i1e")
bessel_j0 = _scoped("BesselJ0", "bessel_j0")
bessel_j1 = _scoped("BesselJ1", "bessel_j1")
bessel_k0 = _scoped("BesselK0", "bessel_k0")
bessel_k0e = _scoped("BesselK0e", "bessel_k0e")
bessel_k1 = _scoped("BesselK1", "bessel_k1")
bessel_k1e = _scoped("BesselK1e", "bessel_k1e")
bessel_y0 = _scoped("BesselY0", "bessel_y0")
bessel_y1 = _scoped("BesselY1", "bessel_y1")


def _scoped_binary(op_type: str, scope_name: str):
    def fn(x: Any, y: Any, name: str | None = None) -> Any:
        with _ops.name_scope(name, scope_name, [x]):
            return apply_op(op_type, [x, y], {}).outputs[0]

    fn.__name__ = scope_name
    return fn


xlog1py = _scoped_binary("Xlog1py", "xlog1py")
xdivy = _scoped_binary("Xdivy", "xdivy")


def erfcinv(x: Any, name: str | None = None) -> Any:
    """tf.math.erfcinv: -ndtri(x / 2) / sqrt(2)."""
    with _ops.name_scope(name, "erfcinv", [x]):
        x = convert_to_tensor(x, name="start")
        return -ndtri(0.5 * x) * np.sqrt(0.5)


def lbeta(x: Any, name: str | None = None) -> Any:
    """tf.math.lbeta: log|Beta(x)| over the last axis, sum(lgamma(x)) - lgamma(sum(x))."""
    with _ops.name_scope(name, "lbeta", [x]):
        x = convert_to_tensor(x, name="x")
        log_prod_gamma_x = math_ops.reduce_sum(math_ops.lgamma(x), axis=[-1])
        sum_x = math_ops.reduce_sum(x, axis=[-1])
        log_gamma_sum_x = math_ops.lgamma(sum_x)
        return log_prod_gamma_x - log_gamma_sum_x
