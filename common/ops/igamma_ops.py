"""Ops (executor stage): the regularized incomplete gamma family (TensorFlow's
cwise_op_igammas.cc and random_ops' RandomGammaGrad): Igamma P(a, x), Igammac Q(a, x),
IgammaGradA dP/da and RandomGammaGrad (the reparameterization gradient of a gamma sample
with respect to alpha), elementwise with broadcasting.

P and Q are scipy.special's gammainc/gammaincc. dP/da is computed in float64: by its
power series where x < a + 1 (all terms positive) and from Q's integral representation
dQ/da = (1/G(a)) * int_x^inf log(t) t^(a-1) e^-t dt - psi(a) Q elsewhere (no cancellation
where P is close to 1). Pure functions: safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.integrate
import scipy.special as sp

from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op

_SERIES_TERMS = 2000  # x < a + 1: the ratio x / (a + n) falls below 1 from the start


def _der_a_series(a: float, x: float) -> float:
    """dP/da from P = x^a e^-x / G(a+1) * sum_n x^n / ((a+1)...(a+n))."""
    term, total, d_total, harmonic = 1.0, 1.0, 0.0, 0.0
    for n in range(1, _SERIES_TERMS):
        term *= x / (a + n)
        harmonic += 1.0 / (a + n)
        total += term
        d_total -= term * harmonic
        if term < 1e-17 * total and term * harmonic < 1e-17 * abs(d_total):
            break
    pref = np.exp(a * np.log(x) - x - sp.gammaln(a + 1))
    return float(pref * total * (np.log(x) - sp.digamma(a + 1)) + pref * d_total)


def _der_a_integral(a: float, x: float) -> float:
    """dP/da = -dQ/da = psi(a) Q - (1/G(a)) int_x^inf log(t) t^(a-1) e^-t dt."""
    lg = sp.gammaln(a)

    def integrand(t: float) -> float:
        return float(np.log(t) * np.exp((a - 1) * np.log(t) - t - lg))

    integral, _ = scipy.integrate.quad(integrand, x, np.inf, epsabs=0.0, epsrel=1e-13, limit=200)
    return float(sp.digamma(a) * sp.gammaincc(a, x) - integral)


def _igamma_der_a_scalar(a: float, x: float) -> float:
    if x == 0 and not np.isnan(a):
        return 0.0
    if np.isnan(a) or np.isnan(x) or a <= 0 or x < 0:
        return np.nan
    if np.isinf(x):
        return 0.0
    return _der_a_series(a, x) if x < a + 1 else _der_a_integral(a, x)


def igamma_der_a(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    out = np.empty(a.shape, np.float64)
    for i, (ai, xi) in enumerate(zip(a.flat, x.flat)):
        out.flat[i] = _igamma_der_a_scalar(float(ai), float(xi))
    return out


def random_gamma_grad(alpha: np.ndarray, sample: np.ndarray) -> np.ndarray:
    """d sample / d alpha = -(dP/dalpha) / pdf(sample; alpha), 0 at sample 0 and inf."""
    alpha, sample = np.broadcast_arrays(
        np.asarray(alpha, np.float64), np.asarray(sample, np.float64)
    )
    with np.errstate(all="ignore"):
        log_pdf = (alpha - 1) * np.log(sample) - sample - sp.gammaln(alpha)
        out = -igamma_der_a(alpha, sample) / np.exp(log_pdf)
    return np.where((sample == 0) | (np.isinf(sample) & (alpha > 0)), 0.0, out)


def _kernel(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]):
    def factory(kc: KernelConstruction) -> Callable:
        out = mu.np_type(kc.attr("T"))

        def compute(ctx: OpKernelContext, inputs: list) -> list:
            a, x = np.asarray(inputs[0]), np.asarray(inputs[1])
            if a.shape != x.shape:
                mu.broadcast_shape(a.shape, x.shape)
            with np.errstate(all="ignore"):
                z = fn(a.astype(np.float64), x.astype(np.float64))
            return [np.asarray(z).astype(out)]

        return compute

    return factory


def _special(name: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """scipy's P or Q with Eigen's domain: NaN for x < 0 or a <= 0, except P(a, 0) = 0."""

    def fn(a: np.ndarray, x: np.ndarray) -> np.ndarray:
        z = getattr(sp, name)(a, x)
        z = np.where((x < 0) | (a <= 0) | np.isnan(a) | np.isnan(x), np.nan, z)
        return np.where((x == 0) & (name == "gammainc"), 0.0, z)

    return fn


_FAMILY = [
    ("Igamma", ("a", "x", "z"), "bfloat16, half, float, double", _special("gammainc")),
    ("Igammac", ("a", "x", "z"), "bfloat16, half, float, double", _special("gammaincc")),
    ("IgammaGradA", ("a", "x", "z"), "float, double", igamma_der_a),
    ("RandomGammaGrad", ("alpha", "sample", "output"), "float, double", random_gamma_grad),
]

for _name, (_x, _y, _z), _types, _fn in _FAMILY:
    register_op(_name, [f"{_x}: T", f"{_y}: T"], [f"{_z}: T"], [f"T: {{{_types}}}"])
    register_kernel(_name)(_kernel(_fn))
