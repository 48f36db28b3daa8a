"""Client, tf.compat.v1.distributions: ndtr, log_ndtr and ndtri (TensorFlow's
distributions/special_math.py): erf/erfc by segment, log_ndtr's asymptotic series below
-20 (float64) / -10 (float32), ndtri's rational approximations, all as graph ops so the
values and nodes are TF's."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import ops as _ops
from client.framework.op_builder import constant, convert_to_tensor
from client.ops import array_ops, math_ops

_LOWER = {np.float64: -20.0, np.float32: -10.0}
_UPPER = {np.float64: 8.0, np.float32: 5.0}


def ndtr(x: Any, name: str = "ndtr") -> Any:
    with _ops.name_scope(name, values=[x]):
        return _ndtr(convert_to_tensor(x, name="x"))


def _ndtr(x: Any) -> Any:
    half_sqrt_2 = constant(0.5 * np.sqrt(2.0), dtype=x.dtype, name="half_sqrt_2")
    w = x * half_sqrt_2
    z = math_ops.abs(w)
    y = array_ops.where_v2(
        math_ops.less(z, half_sqrt_2),
        1.0 + math_ops.erf(w),
        array_ops.where_v2(math_ops.greater(w, 0.0), 2.0 - math_ops.erfc(z), math_ops.erfc(z)),
    )
    return 0.5 * y


def log_ndtr(x: Any, series_order: int = 3, name: str = "log_ndtr") -> Any:
    with _ops.name_scope(name, values=[x]):
        x = convert_to_tensor(x, name="x")
        np_dtype = x.dtype.as_numpy_dtype
        if np_dtype not in _LOWER:
            raise TypeError(f"x.dtype={x.dtype} is not supported.")
        lower = np.array(_LOWER[np_dtype], np_dtype)
        upper = np.array(_UPPER[np_dtype], np_dtype)
        return array_ops.where_v2(
            math_ops.greater(x, upper),
            -_ndtr(-x),  # log(1 - e) ~ -e for a tiny e
            array_ops.where_v2(
                math_ops.greater(x, lower),
                math_ops.log(_ndtr(math_ops.maximum(x, lower))),
                _log_ndtr_lower(math_ops.minimum(x, lower), series_order),
            ),
        )


def _log_ndtr_lower(x: Any, series_order: int) -> Any:
    x_2 = math_ops.square(x)
    log_scale = -0.5 * x_2 - math_ops.log(-x) - 0.5 * np.log(2.0 * np.pi)
    return log_scale + math_ops.log(_asymptotic_series(x, series_order))


def _asymptotic_series(x: Any, series_order: int) -> Any:
    np_dtype = x.dtype.as_numpy_dtype
    if series_order <= 0:
        return np.array(1, np_dtype)
    x_2 = math_ops.square(x)
    even_sum = array_ops.zeros_like(x)
    odd_sum = array_ops.zeros_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        y = np.array(np.prod(np.arange(2 * n - 1, 1, -2)), np_dtype) / x_2n
        if n % 2:
            odd_sum += y
        else:
            even_sum += y
        x_2n *= x_2
    return 1.0 + even_sum - odd_sum


# Cephes' ndtri coefficients, as TF's special_math lists them: p/q 0 for p near 1/2, p/q 2
# for z >= 8 and p/q 1 otherwise (z = sqrt(-2 log p)).
_P0 = [-1.2391658386738125, 13.931260938727968, -56.67628574690703, 98.00107541859997]
_P0 += [-59.96335010141079]
_Q0 = [-1.1833162112133, 15.90562251262117, -82.03722561683334, 200.26021238006066]
_Q0 += [-225.46268785411937, 86.36024213908905, 4.676279128988815, 1.9544885833814176, 1.0]
_P1 = [-0.0008574567851546854, -0.03504246268278482, -0.1402560791713545]
_P1 += [2.1866330685079025, 14.684956192885803, 44.08050738932008, 57.16281922464213]
_P1 += [31.525109459989388, 4.0554489230596245]
_Q1 = [-0.0009332594808954574, -0.03808064076915783, -0.14218292285478779]
_Q1 += [2.504649462083094, 15.04253856929075, 41.3172038254672, 45.39076351288792]
_Q1 += [15.779988325646675, 1.0]
_P2 = [6.239745391849833e-09, 2.6580697468673755e-06, 0.00030158155350823543]
_P2 += [0.012371663481782003, 0.20148538954917908, 1.3330346081580755, 3.9388102529247444]
_P2 += [6.915228890689842, 3.2377489177694603]
_Q2 = [6.790194080099813e-09, 2.8924786474538068e-06, 0.00032801446468212774]
_Q2 += [0.013420400608854318, 0.21623699359449663, 1.3770209948908132, 3.6798356385616087]
_Q2 += [6.02427039364742, 1.0]


def ndtri(p: Any, name: str = "ndtri") -> Any:
    """TF's distributions special_math.ndtri: Cephes' algorithm in graph ops (not the
    Ndtri kernel), so Normal.quantile builds and computes as TF's."""
    with _ops.name_scope(name, values=[p]):
        p = convert_to_tensor(p, name="p")
        if p.dtype.as_numpy_dtype not in _LOWER:
            raise TypeError(f"p.dtype={p.dtype} is not handled, see docstring for supported types.")
        return _ndtri(p)


def _polynomial(var: Any, coeffs: list[float]) -> Any:
    """Horner's method, built innermost-last as TF's recursion builds it."""
    c = np.array(coeffs, var.dtype.as_numpy_dtype)
    if not c.size:
        return array_ops.zeros_like(var)
    return c[0] + _polynomial(var, list(c[1:])) * var


def _ndtri(p: Any) -> Any:
    np_dtype = p.dtype.as_numpy_dtype
    maybe_complement_p = array_ops.where_v2(p > -np.expm1(-2.0), 1.0 - p, p)
    sanitized_mcp = array_ops.where_v2(
        maybe_complement_p <= 0.0,
        array_ops.fill(array_ops.shape(p), np.array(0.5, np_dtype)),
        maybe_complement_p,
    )
    w = sanitized_mcp - 0.5
    ww = w**2
    x_for_big_p = w + w * ww * (_polynomial(ww, _P0) / _polynomial(ww, _Q0))
    x_for_big_p *= -np.sqrt(2.0 * np.pi)
    z = math_ops.sqrt(-2.0 * math_ops.log(sanitized_mcp))
    first_term = z - math_ops.log(z) / z
    second_term_small_p = _polynomial(1.0 / z, _P2) / _polynomial(1.0 / z, _Q2) / z
    second_term_otherwise = _polynomial(1.0 / z, _P1) / _polynomial(1.0 / z, _Q1) / z
    x_for_small_p = first_term - second_term_small_p
    x_otherwise = first_term - second_term_otherwise
    x = array_ops.where_v2(
        sanitized_mcp > np.exp(-2.0),
        x_for_big_p,
        array_ops.where_v2(z >= 8.0, x_for_small_p, x_otherwise),
    )
    x = array_ops.where_v2(p > 1.0 - np.exp(-2.0), x, -x)
    infinity_scalar = constant(np.inf, dtype=p.dtype)
    infinity = array_ops.fill(array_ops.shape(p), infinity_scalar)
    return array_ops.where_v2(p <= 0.0, -infinity, array_ops.where_v2(p >= 1.0, infinity, x))
