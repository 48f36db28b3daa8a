"""Client, tf.compat.v1.distributions: the KL registry (TensorFlow's kullback_leibler.py):
the function registered for the nearest pair of classes along both MROs, run under
"KullbackLeibler/"; the NaN check of allow_nan_stats=False is not built."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.framework import ops as _ops

_DIVERGENCES: dict[tuple[type, type], Callable] = {}


def _registered_kl(type_a: type, type_b: type) -> Callable | None:
    best: tuple[int, Callable] | None = None
    for to_a, parent_a in enumerate(type_a.__mro__):
        for to_b, parent_b in enumerate(type_b.__mro__):
            fn = _DIVERGENCES.get((parent_a, parent_b))
            if fn is not None and (best is None or to_a + to_b < best[0]):
                best = (to_a + to_b, fn)
    return best[1] if best else None


def kl_divergence(a: Any, b: Any, allow_nan_stats: bool = True, name: str | None = None) -> Any:
    kl_fn = _registered_kl(type(a), type(b))
    if kl_fn is None:
        raise NotImplementedError(
            "No KL(distribution_a || distribution_b) registered for distribution_a type "
            f"{type(a).__name__} and distribution_b type {type(b).__name__}"
        )
    with _ops.name_scope("KullbackLeibler"):
        return kl_fn(a, b, name=name)


def cross_entropy(ref: Any, other: Any, allow_nan_stats: bool = True, name: str | None = None):
    with _ops.name_scope(name, "cross_entropy"):
        return ref.entropy() + kl_divergence(ref, other, allow_nan_stats=allow_nan_stats)


class RegisterKL:
    """Decorator registering kl_fn(a, b, name=None) for (dist_cls_a, dist_cls_b)."""

    def __init__(self, dist_cls_a: type, dist_cls_b: type) -> None:
        self._key = (dist_cls_a, dist_cls_b)

    def __call__(self, kl_fn: Callable) -> Callable:
        if not callable(kl_fn):
            raise TypeError(f"kl_fn must be callable, received: {kl_fn}")
        if self._key in _DIVERGENCES:
            a, b = self._key
            raise ValueError(
                f"KL({a.__name__} || {b.__name__}) has already been registered to: "
                f"{_DIVERGENCES[self._key]}"
            )
        _DIVERGENCES[self._key] = kl_fn
        return kl_fn
