"""Client, graph building: tf.concat and tf.stack of RaggedTensors along axis 0, as TF's
ragged_concat_ops.py builds them (the flat values concatenated, each level's row_splits
joined with the offsets of the tensors before it; stack adds a level of one row per
input). TF's axis 1 (row by row interleaving), mixing dense tensors in and raising
ragged ranks are not built here (ValueError). Stateless."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.framework import ops as _ops
from client.framework.ragged_tensor import RaggedTensor, from_nested_row_splits
from client.ops import array_ops, math_ops
from client.ops.ragged_math_ops import get_positive_axis


def concat(values: Any, axis: Any, name: str | None = None) -> Any:
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    with _ops.name_scope(name, "RaggedConcat", values):
        return _stack_concat(values, axis, stack_values=False)


def stack(values: Any, axis: Any = 0, name: str | None = None) -> Any:
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    with _ops.name_scope(name, "RaggedConcat", values):
        return _stack_concat(values, axis, stack_values=True)


def _stack_concat(rts: list[Any], axis: Any, stack_values: bool) -> Any:
    if not rts:
        raise ValueError("rt_inputs may not be empty.")
    if not all(isinstance(rt, RaggedTensor) for rt in rts):
        raise ValueError("This client concatenates RaggedTensors with RaggedTensors only")
    dtypes_seen = {rt.row_splits.dtype for rt in rts}
    if len(dtypes_seen) > 1:
        raise ValueError(
            "Input RaggedTensors have mismatched row_splits dtypes; use "
            "RaggedTensor.with_row_splits_dtype() to convert them to compatible dtypes."
        )
    if len(rts) == 1 and not stack_values:
        return rts[0]
    ndims = rts[0].shape.ndims
    for rt in rts[1:]:
        if ndims is not None:
            rt.shape.assert_has_rank(ndims)
    out_ndims = ndims if (ndims is None or not stack_values) else ndims + 1
    axis = get_positive_axis(axis, out_ndims)
    if len({rt.ragged_rank for rt in rts}) > 1:
        raise ValueError("This client concatenates RaggedTensors of one ragged_rank only")
    if axis != 0:
        raise ValueError("This client concatenates RaggedTensors along axis 0 only")
    return _along_axis_0(rts, stack_values)


def _along_axis_0(rts: list[RaggedTensor], stack_values: bool) -> RaggedTensor:
    flat = array_ops.concat([rt.flat_values for rt in rts], axis=0)
    nested = [rt.nested_row_splits for rt in rts]
    splits = [_concat_splits([ns[dim] for ns in nested]) for dim in range(rts[0].ragged_rank)]
    if stack_values:
        lengths = array_ops.stack([rt.nrows() for rt in rts])
        splits.insert(0, array_ops.concat([[0], math_ops.cumsum(lengths)], axis=-1))
    return from_nested_row_splits(flat, splits, validate=False)


def _concat_splits(splits_list: list[Any]) -> Any:
    """One level's splits: each later tensor's splits past the values before it."""
    pieces = [splits_list[0]]
    offset = splits_list[0][-1]
    for splits in splits_list[1:]:
        pieces.append(splits[1:] + offset)
        offset += splits[-1]
    return array_ops.concat(pieces, axis=0)


def dispatching(dense: Callable[..., Any], ragged: Callable[..., Any]) -> Callable[..., Any]:
    """`dense` unless a value is a RaggedTensor (TF's dispatch passes the caller's own
    arguments on, so an omitted name stays None: the "RaggedConcat" scope)."""

    def api(values: Any, *args: Any, **kwargs: Any) -> Any:
        listed = values if isinstance(values, (list, tuple)) else [values]
        if any(isinstance(v, RaggedTensor) for v in listed):
            return ragged(values, *args, **kwargs)
        return dense(values, *args, **kwargs)

    api.__name__ = getattr(dense, "__name__", "concat")
    api.__doc__ = dense.__doc__
    return api


def install(namespace: dict[str, Any]) -> None:
    namespace["concat"] = dispatching(namespace["concat"], concat)
    namespace["stack"] = dispatching(namespace["stack"], stack)
