"""Client, graph building: tf.ragged.constant (nested Python lists of any ragged rank, as
TF's ragged_factory_ops.py: Consts for the flat values and for each level's row_splits,
under "RaggedConstant") and tf.ragged.range (the RaggedRange op, as TF's
ragged_math_ops.range)."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.op_builder import constant as _constant
from client.framework.ragged_tensor import RaggedTensor, from_row_splits
from client.framework.tensor_shape import TensorShape
from client.ops import math_ops


def _is_nested(item: Any) -> bool:
    return isinstance(item, (list, tuple)) or np.ndim(item) != 0


def _scalar_and_max_depth(pylist: Any) -> tuple[int | None, int]:
    """(nesting depth of the scalars, None if there are none; deepest list nesting)."""
    if not _is_nested(pylist):
        return 0, 0
    scalar_depth: int | None = None
    max_depth = 1
    for child in pylist:
        child_scalar, child_max = _scalar_and_max_depth(child)
        if child_scalar is not None:
            if scalar_depth is not None and scalar_depth != child_scalar + 1:
                raise ValueError("all scalar values must have the same nesting depth")
            scalar_depth = child_scalar + 1
        max_depth = max(max_depth, child_max + 1)
    return scalar_depth, max_depth


def _default_inner_shape(pylist: Any, ragged_rank: int) -> tuple[int, ...]:
    """The uniform shape of the values below `ragged_rank` ragged levels."""

    def shape_of(item: Any) -> tuple[int, ...]:
        if not _is_nested(item):
            return ()
        return (len(item), *shape_of(item[0])) if len(item) > 0 else (0,)

    def check(item: Any, shape: tuple[int, ...]) -> None:
        if _is_nested(item) != bool(shape):
            raise ValueError("inner values have inconsistent shape")
        if _is_nested(item):
            if shape[0] != len(item):
                raise ValueError("inner values have inconsistent shape")
            for child in item:
                check(child, shape[1:])

    flat = pylist
    for dim in builtins.range(ragged_rank):
        if not all(_is_nested(v) for v in flat):
            raise ValueError(
                f"pylist has scalar values depth {dim + 1}, but ragged_rank={ragged_rank} "
                f"requires scalar value depth greater than {ragged_rank}"
            )
        flat = sum((list(v) for v in flat), [])
    inner = shape_of(flat)
    check(flat, inner)
    return inner[1:]


def _check_depths(pylist: Any, ragged_rank: int | None, inner_shape: Any) -> tuple[int | None, int]:
    scalar_depth, max_depth = _scalar_and_max_depth(pylist)
    if scalar_depth is not None:
        if max_depth > scalar_depth:
            raise ValueError(
                f"Invalid pylist={pylist!r}: empty list nesting is greater than scalar "
                "value nesting"
            )
        if ragged_rank is not None and max_depth < ragged_rank:
            raise ValueError(
                f"Invalid pylist={pylist}, max depth smaller than ragged_rank={ragged_rank}"
            )
    if inner_shape is not None and ragged_rank is not None:
        expected = ragged_rank + len(inner_shape) + 1
        if (scalar_depth is not None and expected != scalar_depth) or (
            scalar_depth is None and expected < max_depth
        ):
            raise ValueError(
                f"Invalid pylist={pylist!r}: incompatible with ragged_rank={ragged_rank} "
                f"and dim(inner_shape)={len(inner_shape)}"
            )
    return scalar_depth, max_depth


def constant(
    pylist: Any,
    dtype: Any = None,
    ragged_rank: int | None = None,
    inner_shape: Any = None,
    name: str | None = None,
    row_splits_dtype: Any = dtypes.int64,
) -> Any:
    """tf.ragged.constant: a RaggedTensor of ragged_rank levels (by default, all but the
    innermost nesting), or a plain Const when the list is not ragged at all."""
    if isinstance(pylist, RaggedTensor):
        raise TypeError("pylist may not be a RaggedTensor or RaggedTensorValue.")
    splits_dtype = dtypes.as_dtype(row_splits_dtype)
    with _ops.name_scope(name, "RaggedConstant"):
        if not isinstance(pylist, (list, tuple)) and np.ndim(pylist) == 0:
            if ragged_rank is not None and ragged_rank != 0:
                raise ValueError(
                    f"Invalid pylist={pylist!r}: incompatible with ragged_rank={ragged_rank}"
                )
            if inner_shape:
                raise ValueError(
                    f"Invalid pylist={pylist!r}: incompatible with "
                    f"dim(inner_shape)={len(inner_shape)}"
                )
            return _constant(pylist, dtype=dtype)
        if ragged_rank is not None and ragged_rank < 0:
            raise ValueError(f"Invalid ragged_rank={ragged_rank!r}: must be nonnegative")
        scalar_depth, max_depth = _check_depths(pylist, ragged_rank, inner_shape)
        if ragged_rank == 0 or (
            ragged_rank is None
            and (max_depth < 2 or (inner_shape is not None and max_depth - len(inner_shape) < 2))
        ):
            return _constant(pylist, dtype=dtype, shape=inner_shape)
        if inner_shape is None:
            inner_shape = () if ragged_rank is None else _default_inner_shape(pylist, ragged_rank)
        inner_shape = tuple(inner_shape)
        if ragged_rank is None:
            depth = max_depth if scalar_depth is None else scalar_depth - len(inner_shape)
            ragged_rank = max(1, depth - 1)
        nested_splits: list[list[int]] = []
        values = list(pylist)
        for _ in builtins.range(ragged_rank):
            splits = [0]
            flat: list[Any] = []
            for row in values:
                splits.append(splits[-1] + len(row))
                flat.extend(row)
            nested_splits.append(splits)
            values = flat
        result: Any = _constant(
            values, dtype=dtype, shape=(len(values), *inner_shape), name="values"
        )
        for splits in reversed(nested_splits):
            result = from_row_splits(result, _constant(splits, dtype=splits_dtype), validate=False)
        return result


_RANGE_DTYPES = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]


def range(  # noqa: A001 (TF's name)
    starts: Any,
    limits: Any = None,
    deltas: Any = 1,
    dtype: Any = None,
    name: str | None = None,
    row_splits_dtype: Any = dtypes.int64,
) -> RaggedTensor:
    """tf.ragged.range: row i is range(starts[i], limits[i], deltas[i]) (scalars
    broadcast), one RaggedRange op."""
    splits_dtype = dtypes.as_dtype(row_splits_dtype)
    if limits is None:
        starts, limits = 0, starts
    with _ops.name_scope(name, "RaggedRange", [starts, limits, deltas]) as scope:
        args = [
            convert_to_tensor(v, dtype=dtype, name=n)
            for v, n in ((starts, "starts"), (limits, "limits"), (deltas, "deltas"))
        ]
        if dtype is None:
            if any(t.dtype not in _RANGE_DTYPES for t in args):
                raise ValueError(f"Unsupported dtypes for ragged.range: {[t.dtype for t in args]}")
            widest = max((t.dtype for t in args), key=_RANGE_DTYPES.index)
            args = [math_ops.cast(t, widest) for t in args]
        splits, values = apply_op("RaggedRange", args, {"Tsplits": splits_dtype}, scope).outputs
        return from_row_splits(values, splits, validate=False)


def _range_shapes(op: Any) -> list[TensorShape]:
    """[nrows + 1] splits (nrows from whichever of starts, limits, deltas is a vector of
    known length; 1 when all are scalars) and [None] values, as TF's shape function."""
    dims = [t.shape.as_list() for t in op.inputs]
    if any(d is None for d in dims):
        nrows = None
    elif all(d == [] for d in dims):
        nrows = 1
    else:
        nrows = next((d[0] for d in dims if d and d[0] is not None), None)
    return [TensorShape([None if nrows is None else nrows + 1]), TensorShape([None])]


shape_fns.SHAPE_FNS["RaggedRange"] = _range_shapes
