"""Client, gradients: special functions (the part of TensorFlow's math_grad.py for Xlogy,
Xlog1py, Xdivy, Lgamma, Digamma, Igamma/Igammac, Betainc (w.r.t. x only), Zeta and
Polygamma (w.r.t. their second argument), Erfinv, Ndtri, Dawsn, Expint, Fresnel*, Spence
and the Bessel functions), the same ops in the same order so values agree with TF's."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import ops as _ops
from client.framework.gradient_registry import RegisterGradient
from client.framework.op_builder import apply_op, constant
from client.ops import array_ops, math_ops
from client.ops import special_math_ops as sm
from client.ops.gradients.util import op1, reduce_to


def _unary(op_type: str, fn: Any) -> None:
    """Registers fn(grad, x, y) under a control dependency on grad, as TF's."""

    @RegisterGradient(op_type)
    def _grad(op: Any, grad: Any) -> Any:
        with _ops.control_dependencies([grad]):
            return fn(grad, op.inputs[0], op.outputs[0])


def _bessel_at_zero(value: float, x: Any, elsewhere: Any) -> Any:
    """TF's where_v2(x == 0, value, elsewhere()): the limit where y / x is 0 / 0 (the
    condition built first, as TF's argument order builds it)."""
    at_zero = math_ops.equal(x, 0.0)
    return array_ops.where_v2(at_zero, math_ops.cast(value, x.dtype), elsewhere())


_unary("Lgamma", lambda g, x, y: g * math_ops.digamma(x))
_unary("Digamma", lambda g, x, y: g * sm.polygamma(constant(1, dtype=x.dtype), x))
_unary("Dawsn", lambda g, x, y: g * (1.0 - 2 * x * y))
_unary("Expint", lambda g, x, y: g * math_ops.exp(x) / x)
_unary("FresnelCos", lambda g, x, y: g * math_ops.cos((np.pi / 2.0) * math_ops.square(x)))
_unary("FresnelSin", lambda g, x, y: g * math_ops.sin((np.pi / 2.0) * math_ops.square(x)))
_unary("BesselI0", lambda g, x, y: g * sm.bessel_i1(x))
_unary("BesselI0e", lambda g, x, y: g * (sm.bessel_i1e(x) - math_ops.sign(x) * y))
_unary(
    "BesselI1",
    lambda g, x, y: g * _bessel_at_zero(1.0, x, lambda: sm.bessel_i0(x) - math_ops.div(y, x)),
)
_unary(
    "BesselI1e",
    lambda g, x, y: (
        g
        * _bessel_at_zero(
            0.5, x, lambda: sm.bessel_i0e(x) - y * (math_ops.sign(x) + math_ops.reciprocal(x))
        )
    ),
)
_unary("BesselK0", lambda g, x, y: g * -sm.bessel_k1(x))
_unary("BesselK0e", lambda g, x, y: g * (y - sm.bessel_k1e(x)))
_unary("BesselK1", lambda g, x, y: g * (-sm.bessel_k0(x) - math_ops.div(y, x)))
_unary("BesselK1e", lambda g, x, y: g * (y * (1.0 - math_ops.reciprocal(x)) - sm.bessel_k0e(x)))
_unary("BesselJ0", lambda g, x, y: g * -sm.bessel_j1(x))
_unary(
    "BesselJ1",
    lambda g, x, y: g * _bessel_at_zero(0.5, x, lambda: sm.bessel_j0(x) - math_ops.div(y, x)),
)
_unary("BesselY0", lambda g, x, y: g * -sm.bessel_y1(x))
_unary("BesselY1", lambda g, x, y: g * (sm.bessel_y0(x) - math_ops.div(y, x)))


@RegisterGradient("Erfinv")
def _erfinv_grad(op: Any, grad: Any) -> Any:
    root_pi_over_two = constant(np.sqrt(np.pi) / 2, dtype=grad.dtype)
    with _ops.control_dependencies([grad]):
        return grad * root_pi_over_two * math_ops.exp(math_ops.square(op.outputs[0]))


@RegisterGradient("Ndtri")
def _ndtri_grad(op: Any, grad: Any) -> Any:
    root_two_pi = constant(np.sqrt(2 * np.pi), dtype=grad.dtype)
    with _ops.control_dependencies([grad]):
        return grad * root_two_pi * math_ops.exp(math_ops.square(op.outputs[0]) / 2.0)


@RegisterGradient("Spence")
def _spence_grad(op: Any, grad: Any) -> Any:
    x = op.inputs[0]
    with _ops.control_dependencies([grad]):
        partial_x = math_ops.log(x) / (1 - x)
        partial_x = array_ops.where(
            math_ops.equal(x, 1.0), -array_ops.ones_like(x), partial_x
        )  # log(x) / (1 - x) -> -1 at x = 1
        return grad * partial_x


def _broadcast_args(a: Any, b: Any) -> tuple[Any, Any, Any, Any]:
    sa, sb = array_ops.shape(a), array_ops.shape(b)
    ra, rb = apply_op("BroadcastGradientArgs", [sa, sb]).outputs
    return sa, sb, ra, rb


@RegisterGradient("Igamma")
def _igamma_grad(op: Any, grad: Any) -> Any:
    a, x = op.inputs
    sa, sx, ra, rx = _broadcast_args(a, x)
    with _ops.control_dependencies([grad]):
        partial_a = op1("IgammaGradA", [a, x])
        partial_x = math_ops.exp(-x + (a - 1) * math_ops.log(x) - math_ops.lgamma(a))
        return reduce_to(partial_a * grad, ra, sa), reduce_to(partial_x * grad, rx, sx)


@RegisterGradient("Igammac")
def _igammac_grad(op: Any, grad: Any) -> Any:
    ga, gx = _igamma_grad(op, grad)
    return -ga, -gx


@RegisterGradient("Betainc")
def _betainc_grad(op: Any, grad: Any) -> Any:
    a, b, x = op.inputs
    sa, sx = array_ops.shape(a), array_ops.shape(x)
    _, rx = apply_op("BroadcastGradientArgs", [sa, sx]).outputs
    log_beta = op1("Lgamma", [a]) + op1("Lgamma", [b]) - op1("Lgamma", [a + b])
    partial_x = math_ops.exp(
        sm.xlog1py(b - 1, -x) + math_ops.xlogy(a - 1, x) - log_beta
    )  # the integrand x^(a-1) (1-x)^(b-1) / B(a, b)
    return None, None, reduce_to(partial_x * grad, rx, sx)


@RegisterGradient("Zeta")
def _zeta_grad(op: Any, grad: Any) -> Any:
    x, q = op.inputs
    _, sq, _, rq = _broadcast_args(x, q)
    with _ops.control_dependencies([grad]):
        partial_q = -x * sm.zeta(x + 1, q)
        return None, reduce_to(partial_q * grad, rq, sq)


@RegisterGradient("Polygamma")
def _polygamma_grad(op: Any, grad: Any) -> Any:
    n, x = op.inputs
    _, sx, _, rx = _broadcast_args(n, x)
    with _ops.control_dependencies([grad]):
        partial_x = sm.polygamma(n + 1, x)
        return None, reduce_to(partial_x * grad, rx, sx)


def _x_op_grad(partial_x: str, partial_y: Any) -> Any:
    """TF's _XLogyGrad / _XLog1pyGrad / _XDivyGrad: d/dx is `partial_x`(x != 0, y)."""

    def grad_fn(op: Any, grad: Any) -> Any:
        x, y = op.inputs
        sx, sy, rx, ry = _broadcast_args(x, y)
        with _ops.control_dependencies([grad]):
            not_zero_x = math_ops.cast(
                math_ops.not_equal(x, math_ops.cast(0.0, dtype=x.dtype)), dtype=x.dtype
            )
            px = op1(partial_x, [not_zero_x, y])
            py = partial_y(x, y)
            return reduce_to(px * grad, rx, sx), reduce_to(py * grad, ry, sy)

    return grad_fn


RegisterGradient("Xlogy")(_x_op_grad("Xlogy", lambda x, y: op1("Xdivy", [x, y])))
RegisterGradient("Xlog1py")(_x_op_grad("Xlog1py", lambda x, y: op1("Xdivy", [x, y + 1.0])))
RegisterGradient("Xdivy")(
    _x_op_grad("Xdivy", lambda x, y: op1("Xdivy", [math_ops.negative(x), y**2]))
)
