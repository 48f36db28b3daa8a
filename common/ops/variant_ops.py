"""Ops (executor stage): the arithmetic TensorFlow's UnaryVariantOpRegistry gives DT_VARIANT
values — ZEROS_LIKE_VARIANT_UNARY_OP and ADD_VARIANT_BINARY_OP — which ZerosLike and AddN
dispatch to for variant tensors. Gradients of control flow v2 need both: TensorFlow's
Python zero-fills and sums the gradients of TensorList and Optional loop/branch outputs.

The module owning a variant class registers its functions at import time (list_ops for
TensorList, optional_ops for Optional); the tables are read-only afterwards, so lookups are
thread-safe. Every function here returns new values: variants are immutable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from common.errors import InvalidArgumentError

V = TypeVar("V")
ZerosLikeFn = Callable[[Any, str], Any]
AddFn = Callable[[Any, Any, str], Any]

_ZEROS_LIKE: dict[type, ZerosLikeFn] = {}
_ADD: dict[type, AddFn] = {}


def register_variant_ops(cls: type, zeros_like: ZerosLikeFn, add: AddFn) -> None:
    """Registers `zeros_like(x, node_name)` and `add(a, b, node_name)` for variant `cls`."""
    _ZEROS_LIKE[cls] = zeros_like
    _ADD[cls] = add


def variant_scalar(obj: Any) -> np.ndarray:
    """The DT_VARIANT scalar holding `obj` (a TensorList, an Optional, ...)."""
    out = np.empty((), dtype=object)
    out[()] = obj
    return out


def held(value: Any, cls: type[V], not_held: str, node_name: str) -> V:
    """The `cls` a DT_VARIANT input holds; InvalidArgumentError "<not_held> Saw: '<type>'"
    (TensorFlow's wording per variant kind) if it holds something else."""
    v = value.item() if isinstance(value, np.ndarray) and value.dtype == object else value
    if not isinstance(v, cls):
        raise InvalidArgumentError(f"{not_held} Saw: '{type(v).__name__}'", node_name)
    return v


def _type_name(x: Any) -> str:
    return type(x).__name__


def _shape(t: np.ndarray) -> str:
    return "[" + ",".join(str(d) for d in t.shape) + "]"


def zeros_like_element(x: Any, node_name: str = "") -> Any:
    """TF's UnaryOpVariant<ZEROS_LIKE_VARIANT_UNARY_OP> on one variant element."""
    fn = _ZEROS_LIKE.get(type(x))
    if fn is None:
        raise InvalidArgumentError(
            f"No unary variant unary_op function found for op ZEROS_LIKE Variant type_name: "
            f"{_type_name(x)}",
            node_name,
        )
    return fn(x, node_name)


def add_elements(a: Any, b: Any, node_name: str = "") -> Any:
    """TF's BinaryOpVariants<ADD_VARIANT_BINARY_OP> on two variant elements."""
    if type(a) is not type(b):
        raise InvalidArgumentError(
            f"type_index mismatch: {_type_name(a)} vs. {_type_name(b)}", node_name
        )
    fn = _ADD.get(type(a))
    if fn is None:
        raise InvalidArgumentError(
            f"No unary variant binary_op function found for op ADD Variant type_name: "
            f"{_type_name(a)}",
            node_name,
        )
    return fn(a, b, node_name)


def zeros_like_variant(x: np.ndarray, node_name: str = "") -> np.ndarray:
    """ZerosLike of a DT_VARIANT tensor: each element's registered zeros."""
    out = np.empty(x.shape, dtype=object)
    for index, item in np.ndenumerate(x):
        out[index] = zeros_like_element(item, node_name)
    return out


def add_variants(a: np.ndarray, b: np.ndarray, node_name: str = "") -> np.ndarray:
    """Elementwise variant addition of two DT_VARIANT tensors of one shape."""
    out = np.empty(a.shape, dtype=object)
    for index, item in np.ndenumerate(a):
        out[index] = add_elements(item, b[index], node_name)
    return out


def zeros_like_tensor(t: np.ndarray, node_name: str = "") -> np.ndarray:
    """Zeros of a tensor held inside a variant (a list item, an optional's component):
    numbers as np.zeros_like, variants recursively, strings as empty strings."""
    if t.dtype != object:
        return np.zeros_like(t)
    out = np.empty(t.shape, dtype=object)
    for index, item in np.ndenumerate(t):
        out[index] = b"" if isinstance(item, bytes) else zeros_like_element(item, node_name)
    return out


def add_tensors(a: np.ndarray, b: np.ndarray, node_name: str = "") -> np.ndarray:
    """TF's BinaryAddTensors on two tensors held inside variants: same dtype and shape,
    elementwise sum (variants recursively)."""
    if a.dtype != b.dtype:
        raise InvalidArgumentError(
            f"Trying to add two tensors with incompatible element types. One is {a.dtype} "
            f"and the other is {b.dtype}",
            node_name,
        )
    if a.shape != b.shape:
        raise InvalidArgumentError(
            f"Trying to add two tensors with incompatible element shapes. One is "
            f"{_shape(a)} and the other is {_shape(b)}",
            node_name,
        )
    if a.dtype == object:
        return add_variants(a, b, node_name)
    return np.add(a, b)
