"""Ops (executor stage): the update rules of the less common optimizers (Adadelta,
AdagradDA, Ftrl/FtrlV2, ProximalGradientDescent, ProximalAdagrad) for training_ops.

Each rule is TensorFlow's CPU functor body (training_ops.cc) in its evaluation order, in
the variable's dtype, so float32 results agree with TF's kernels. A rule gets the slot
arrays (var first; writeable, updated in place), the scalar inputs by name, the gradient
and the node's attrs. Pure functions of their arguments: safe from any thread.
"""

from __future__ import annotations

import numpy as np

Arrays = list[np.ndarray]

FTRL_ATTRS = ("use_locking: bool = false", "multiply_linear_by_lr: bool = false")


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return x.dtype.type(1) / np.sqrt(x)


def adadelta(s: Arrays, a: dict, g: np.ndarray, attrs: dict) -> None:
    var, accum, accum_update = s
    one = accum.dtype.type(1)
    accum[...] = accum * a["rho"] + g * g * (one - a["rho"])
    update = np.sqrt(accum_update + a["epsilon"]) * _rsqrt(accum + a["epsilon"]) * g
    var -= update * a["lr"]
    accum_update[...] = accum_update * a["rho"] + update * update * (one - a["rho"])


def adagrad_da(s: Arrays, a: dict, g: np.ndarray, attrs: dict) -> None:
    """w = -sign(ga) * lr * max(|ga| - l1*T, 0) / (l2*T*lr + sqrt(gga)); T = global step."""
    var, ga, gga = s
    ga += g
    gga += g * g
    lr, l1, l2, step = a["lr"], a["l1"], a["l2"], a["global_step"]
    neg = var.dtype.type(-1)
    denom = l2 * (step * lr) + np.sqrt(gga)
    if l1 > 0:
        var[...] = lr * neg * np.sign(ga) * np.maximum(np.abs(ga) - step * l1, 0) / denom
    else:
        var[...] = lr * ga * neg / denom


def sparse_adagrad_da(s: Arrays, a: dict, g: np.ndarray, attrs: dict) -> None:
    """SparseApplyAdagradDA's rows: the same rule written over ga / T."""
    var, ga, gga = s
    ga += g
    gga += g * g
    lr, l1, l2, step = a["lr"], a["l1"], a["l2"], a["global_step"]
    neg = var.dtype.type(-1)
    denom = l2 + np.sqrt(gga) / (step * lr)
    if l1 > 0:
        var[...] = neg * np.sign(ga) * np.maximum(np.abs(ga) / step - l1, 0) / denom
    else:
        var[...] = neg * (ga / step) / denom


def ftrl(s: Arrays, a: dict, g: np.ndarray, attrs: dict) -> None:
    """Ftrl-proximal; FtrlV2 when `l2_shrinkage` is an input (it shrinks only the gradient
    that enters `linear`, not the one that enters `accum`)."""
    var, accum, linear = s
    lr, l1, l2, power = a["lr"], a["l1"], a["l2"], a["lr_power"]
    two = var.dtype.type(2)
    shrunk = g + two * a["l2_shrinkage"] * var if "l2_shrinkage" in a else g
    new_accum = accum + g * g
    if power == var.dtype.type(-0.5):
        step = np.sqrt(new_accum) - np.sqrt(accum)
        scale = np.sqrt(new_accum)
    else:
        step = np.power(new_accum, -power) - np.power(accum, -power)
        scale = np.power(new_accum, -power)
    if attrs.get("multiply_linear_by_lr"):
        linear += shrunk * lr - step * var
        bound = l1 * lr
        y = scale + two * l2 * lr
    else:
        linear += shrunk - step / lr * var
        bound = l1
        y = scale / lr + two * l2
    x = np.clip(linear, -bound, bound) - linear
    var[...] = x / y
    accum += g * g


def _shrink(prox: np.ndarray, threshold, denom) -> np.ndarray:
    return np.sign(prox) * np.maximum(np.abs(prox) - threshold, 0) / denom


def proximal_gradient_descent(s: Arrays, a: dict, g: np.ndarray, attrs: dict) -> None:
    var = s[0]
    alpha, l1, l2 = a["alpha"], a["l1"], a["l2"]
    var -= g * alpha
    denom = var.dtype.type(1) + alpha * l2
    var[...] = _shrink(var, alpha * l1, denom) if l1 > 0 else var / denom


def proximal_adagrad(s: Arrays, a: dict, g: np.ndarray, attrs: dict) -> None:
    var, accum = s
    l1, l2 = a["l1"], a["l2"]
    accum += g * g
    lr = a["lr"] * _rsqrt(accum)
    var -= g * lr
    denom = var.dtype.type(1) + l2 * lr
    var[...] = _shrink(var, lr * l1, denom) if l1 > 0 else var / denom
