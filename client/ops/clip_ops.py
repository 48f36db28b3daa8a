"""Client, graph building: tf.clip_by_norm, tf.global_norm and tf.clip_by_global_norm
(TF's clip_ops), which take IndexedSlices as TensorFlow does: their `values` are what is
measured and scaled, their indices and dense_shape pass through."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.indexed_slices import IndexedSlices
from client.framework.op_builder import constant, convert_to_tensor
from client.ops import array_ops, math_ops, nn_ops


def _values(t: Any, name: str) -> Any:
    return convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t, name=name)


def _like(t: Any, values: Any) -> Any:
    """`values` in `t`'s form: IndexedSlices with t's indices, or the Tensor itself."""
    if isinstance(t, IndexedSlices):
        return IndexedSlices(values, t.indices, t.dense_shape)
    return values


def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None, name: str | None = None) -> Any:
    """`t * clip_norm / max(l2norm(t), clip_norm)`, the norm over `axes` (all by default)."""
    with _ops.name_scope(name, "clip_by_norm", [t, clip_norm]) as scope:
        values = _values(t, "t")
        if isinstance(clip_norm, (int, float, np.integer, np.floating)):
            clip_norm = clip_norm if clip_norm >= 0 else 0
        else:
            clip_norm = math_ops.cast(math_ops.maximum(clip_norm, 0), values.dtype)
        l2sum = math_ops.reduce_sum(values * values, axes, keepdims=True)
        pred = l2sum > 0
        l2sum_safe = array_ops.where(pred, l2sum, array_ops.ones_like(l2sum))
        l2norm = array_ops.where(pred, math_ops.sqrt(l2sum_safe), l2sum)
        intermediate = values * clip_norm
        values_clip = array_ops.identity(
            intermediate / math_ops.maximum(l2norm, clip_norm), name=scope
        )
        return _like(t, values_clip)


def global_norm(t_list: Any, name: str | None = None) -> Any:
    """sqrt(sum of squared L2 norms) of the tensors (None entries ignored)."""
    if not isinstance(t_list, (list, tuple)):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")
    t_list = list(t_list)
    with _ops.name_scope(name, "global_norm", [t for t in t_list if t is not None]):
        values = [None if t is None else _values(t, f"t_{i}") for i, t in enumerate(t_list)]
        half_squared_norms = []
        for v in values:
            if v is not None:
                with _ops.colocate_with(v):
                    half_squared_norms.append(nn_ops.l2_loss(v))
        half_squared_norm = math_ops.reduce_sum(array_ops.stack(half_squared_norms))
        two = constant(2.0, dtype=half_squared_norm.dtype)
        return math_ops.sqrt(half_squared_norm * two, name="global_norm")


def clip_by_global_norm(
    t_list: Any, clip_norm: Any, use_norm: Any = None, name: str | None = None
) -> tuple[list[Any], Any]:
    """Each tensor scaled by clip_norm / max(global_norm, clip_norm); (list, norm)."""
    if not isinstance(t_list, (list, tuple)):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")
    t_list = list(t_list)
    use_norm = global_norm(t_list, name) if use_norm is None else use_norm
    present = [t for t in t_list if t is not None]
    with _ops.name_scope(name, "clip_by_global_norm", present + [clip_norm]) as scope:
        one = constant(1.0, dtype=use_norm.dtype)
        scale_for_finite = clip_norm * math_ops.minimum(1.0 / use_norm, one / clip_norm)
        # A finite norm leaves the scale as it is; inf or NaN makes it NaN (as TF).
        scale = scale_for_finite + (use_norm - use_norm)
        clipped: list[Any] = []
        for i, t in enumerate(t_list):
            if t is None:
                clipped.append(None)
                continue
            v = _values(t, f"t_{i}")
            with _ops.colocate_with(v):
                c = array_ops.identity(
                    v * math_ops.cast(scale, v.dtype), name=f"{scope.rstrip('/')}_{i}"
                )
            clipped.append(_like(t, c))
    return clipped, use_norm


def clip_by_average_norm(t: Any, clip_norm: Any, name: str | None = None) -> Any:
    """t * clip_norm / max(l2norm(t) / size(t), clip_norm): TF1's clip by the norm
    averaged over t's elements."""
    with _ops.name_scope(name, "clip_by_average_norm", [t, clip_norm]) as scope:
        t = convert_to_tensor(t, name="t")
        n_element = math_ops.cast(array_ops.size(t), dtypes.float32)
        l2norm_inv = math_ops.rsqrt(math_ops.reduce_sum(t * t, math_ops.range(array_ops.rank(t))))
        return array_ops.identity(
            t * clip_norm * math_ops.minimum(l2norm_inv * n_element, constant(1.0) / clip_norm),
            name=scope,
        )
