"""Ops (executor stage): RaggedRange and RaggedGather, as TensorFlow's ragged_range_op.cc
and ragged_gather_op.cc (tf.ragged.range and tf.gather on a RaggedTensor). A ragged
tensor arrives as its nested row_splits, outermost first, and its flat values. Output
sizes come from input values, so they are checked against the memory budget before
anything is allocated. Stateless kernels, safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common import memory
from common.errors import InvalidArgumentError
from common.ops.math_util import np_type
from common.ops.registry import KernelConstruction, register_kernel, register_op

register_op(
    "RaggedRange",
    inputs=["starts: T", "limits: T", "deltas: T"],
    outputs=["rt_nested_splits: Tsplits", "rt_dense_values: T"],
    attrs=[
        "T: {bfloat16, float, double, int32, int64} = DT_INT32",
        "Tsplits: {int32, int64} = DT_INT64",
    ],
)
register_op(
    "RaggedGather",
    inputs=[
        "params_nested_splits: PARAMS_RAGGED_RANK * Tsplits",
        "params_dense_values: Tvalues",
        "indices: Tindices",
    ],
    outputs=[
        "output_nested_splits: OUTPUT_RAGGED_RANK * Tsplits",
        "output_dense_values: Tvalues",
    ],
    attrs=[
        "Tvalues: type",
        "Tindices: {int32, int64}",
        "Tsplits: {int32, int64} = DT_INT64",
        "PARAMS_RAGGED_RANK: int >= 1",
        "OUTPUT_RAGGED_RANK: int >= 0",
    ],
)

_INT64_MAX = np.iinfo(np.int64).max


# -- RaggedRange ---------------------------------------------------------------------------
# Rows at most this long are filled position by position across all rows at once; longer
# ones one by one (their own numpy call amortizes). Either way no Python loop runs once
# per row: a feed of a million one-value rows is one numpy pass, not a million calls.
_SHORT_ROW = 64


def _range_sizes(start: np.ndarray, limit: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Each row's size as TF's RangeSize (the same as Range's), as float64 for floats and
    uint64 for integers; a size past int64 (or NaN) is left for the caller to refuse."""
    empty = ((delta > 0) & (limit < start)) | ((delta < 0) & (limit > start)) | (delta == 0)
    if np.issubdtype(start.dtype, np.integer):
        # In uint64, |limit - start| and |delta| are exact even where int64 overflows.
        lo, hi = np.minimum(start, limit).astype(np.int64), np.maximum(start, limit)
        span = hi.astype(np.int64).view(np.uint64) - lo.view(np.uint64)
        d = delta.astype(np.int64)
        step = np.where(d < 0, (-(d + 1)).view(np.uint64) + np.uint64(1), d.view(np.uint64))
        step = np.where(step == 0, np.uint64(1), step)
        sizes = span // step + (span % step != 0).astype(np.uint64)
        return np.where(empty, np.uint64(0), sizes)
    with np.errstate(all="ignore"):
        sizes = np.ceil(np.abs((limit - start) / delta)).astype(np.float64)
    return np.where(empty, 0.0, sizes)


def _range_splits(
    start: np.ndarray, limit: np.ndarray, delta: np.ndarray, splits_max: int
) -> np.ndarray:
    """Row splits (int64), refusing as TF does row by row: a delta of 0, a size past
    int64, a total past the splits dtype, whichever row comes first."""
    sizes = _range_sizes(start, limit, delta)
    zero = np.flatnonzero(delta == 0)
    # ~(size <= max) also holds for NaN: a NaN bound is never a valid size.
    too_big = np.flatnonzero(~(sizes <= _INT64_MAX))
    first_bad = min([int(a[0]) for a in (zero, too_big) if len(a)], default=len(sizes))
    good = sizes[:first_bad].astype(np.int64)
    if len(good) and int(good.max()) * len(good) > _INT64_MAX:
        total = np.cumsum(good.astype(object))  # Python ints: the sum may pass int64
    else:
        total = np.cumsum(good)
    over = np.flatnonzero(total > splits_max)
    if len(over):
        raise InvalidArgumentError(
            "The total range size overflowed. Consider using int64 instead of int32 "
            "for row_splits_dtype."
        )
    if len(zero) and zero[0] == first_bad:
        raise InvalidArgumentError("Requires delta != 0")
    if first_bad < len(sizes):
        raise InvalidArgumentError(f"Requires ((limit - start) / delta) <= {_INT64_MAX}")
    return np.concatenate([[0], total]).astype(np.int64)


def _fill_ranges(
    values: np.ndarray, splits: np.ndarray, start: np.ndarray, delta: np.ndarray
) -> None:
    """values[splits[i]:splits[i+1]] = start[i], start[i] + delta[i], ... added one step at
    a time in the dtype, as TF's kernel: the same rounding for floats, the same
    wrap-around for integers."""
    lengths = np.diff(splits)
    long_rows = np.flatnonzero(lengths > _SHORT_ROW)
    for i in long_rows:
        steps = np.full(lengths[i], delta[i], values.dtype)
        steps[0] = start[i]
        with np.errstate(over="ignore"):
            values[splits[i] : splits[i + 1]] = np.add.accumulate(steps, dtype=values.dtype)
    short = np.flatnonzero((lengths > 0) & (lengths <= _SHORT_ROW))
    current = start[short].astype(values.dtype)
    for k in range(int(lengths[short].max()) if len(short) else 0):
        live = lengths[short] > k
        short, current = short[live], current[live]
        values[splits[short] + k] = current
        with np.errstate(over="ignore"):
            current = (current + delta[short]).astype(values.dtype)


def _range_inputs(starts: np.ndarray, limits: np.ndarray, deltas: np.ndarray) -> int:
    """The number of ranges: starts, limits and deltas are scalars (broadcast) or vectors
    of one length."""
    for name, x in (("starts", starts), ("limits", limits), ("deltas", deltas)):
        if x.ndim > 1:
            raise InvalidArgumentError(f"{name} must be a scalar or vector")
    sizes = {x.shape[0] for x in (starts, limits, deltas) if x.ndim == 1}
    if len(sizes) > 1:
        raise InvalidArgumentError("starts, limits, and deltas must have the same shape")
    return sizes.pop() if sizes else 1


def ragged_range(
    k: KernelConstruction | None,
    starts: np.ndarray,
    limits: np.ndarray,
    deltas: np.ndarray,
    splits_dtype: np.dtype,
) -> tuple[np.ndarray, np.ndarray]:
    nrows = _range_inputs(starts, limits, deltas)
    start, limit, delta = (
        np.broadcast_to(x.reshape(-1), (nrows,)) for x in (starts, limits, deltas)
    )
    splits = _range_splits(start, limit, delta, int(np.iinfo(splits_dtype).max))
    memory.check_allocation(k, [int(splits[-1])], starts.dtype)
    values = np.empty(int(splits[-1]), starts.dtype)
    _fill_ranges(values, splits, start, delta)
    return splits.astype(splits_dtype), values


@register_kernel("RaggedRange")
def _ragged_range_kernel(k: KernelConstruction) -> Callable:
    splits_dtype = np_type(k.attr("Tsplits"))

    def compute(ctx, inputs: list) -> list:
        starts, limits, deltas = (np.asarray(x) for x in inputs)
        return list(ragged_range(k, starts, limits, deltas, splits_dtype))

    return compute


# -- RaggedGather --------------------------------------------------------------------------
def _check_gather_splits(splits_list: list[np.ndarray], n_values: int) -> None:
    """TF's ValidateSplits: an inner level's bound is the next splits' length."""
    for level, splits in enumerate(splits_list):
        last = n_values if level == len(splits_list) - 1 else splits_list[level + 1].size
        if splits.size == 0:
            raise InvalidArgumentError("Ragged splits may not be empty")
        if splits[0] < 0:
            raise InvalidArgumentError("Ragged splits must be non-negative")
        if splits[-1] > last:
            raise InvalidArgumentError("Ragged splits must not point past values")
        if np.any(splits[1:] < splits[:-1]):
            raise InvalidArgumentError("Ragged splits must be sorted")
    for level, splits in enumerate(splits_list[:-1]):
        # TF's own bound lets an outer split name the inner splits' length, one row past
        # the end (its kernel then aborts the process); that is an invalid tensor here.
        if splits[-1] > splits_list[level + 1].size - 1:
            raise InvalidArgumentError("Ragged splits must not point past values")


def _check_indices(indices: np.ndarray, n_params: int) -> None:
    bad = np.argwhere((indices < 0) | (indices >= n_params))
    if len(bad):  # a scalar index's one row is empty but present
        where = f"[{','.join(str(int(i)) for i in bad[0])}]" if indices.ndim else ""
        value = indices[tuple(bad[0])]
        raise InvalidArgumentError(f"indices{where} = {value} is not in [0, {n_params})")


# How many int64 arrays of a level's size _concat_ranges and its caller hold at once.
_RANGE_ARRAYS = 4


def _concat_ranges(starts: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """Every position of [starts[j], limits[j]) for each j, in order."""
    lengths = limits - starts
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return np.arange(int(lengths.sum()), dtype=np.int64) + offsets


def _splits_of(lengths: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths)]).astype(dtype)


def ragged_gather(
    k: KernelConstruction | None,
    splits_list: list[np.ndarray],
    values: np.ndarray,
    indices: np.ndarray,
    output_ragged_rank: int,
) -> list[np.ndarray]:
    """Rows `indices` of the ragged params: indices' own dimensions become uniform ragged
    dimensions, then the gathered rows' nested splits; the flat values last."""
    splits_list = [np.asarray(s).reshape(-1) for s in splits_list]
    dtype = splits_list[0].dtype
    if values.ndim == 0:
        raise InvalidArgumentError("params.rank must be nonzero")
    _check_indices(indices, splits_list[0].size - 1)
    flat = indices.reshape(-1).astype(np.int64)
    _check_gather_splits(splits_list, values.shape[0])
    if output_ragged_rank != indices.ndim + len(splits_list) - 1:
        raise InvalidArgumentError(
            f"OUTPUT_RAGGED_RANK {output_ragged_rank} must be the rank of indices "
            f"({indices.ndim}) plus PARAMS_RAGGED_RANK ({len(splits_list)}) minus 1"
        )
    out: list[np.ndarray] = []
    for d in range(1, indices.ndim):
        # Uniform rows of indices.shape[d] each (also of 0: an index dimension of size 0).
        rows = int(np.prod(indices.shape[:d]))
        out.append((np.arange(rows + 1, dtype=np.int64) * indices.shape[d]).astype(dtype))
    outer = splits_list[0].astype(np.int64)
    starts, limits = outer[flat], outer[flat + 1]
    if indices.ndim:
        out.append(_splits_of(limits - starts, dtype))
    for splits in splits_list[1:]:
        inner = splits.astype(np.int64)
        # Repeated indices multiply a level's rows: its positions (and the few int64
        # arrays _concat_ranges builds from them) are sized before they are made.
        memory.check_allocation(
            k, [_RANGE_ARRAYS, int((limits - starts).sum())], np.dtype(np.int64)
        )
        elems = _concat_ranges(starts, limits)
        out.append(_splits_of(inner[elems + 1] - inner[elems], dtype))
        starts, limits = inner[starts], inner[limits]
    n = int((limits - starts).sum())
    memory.check_allocation(k, [n, *values.shape[1:]], values.dtype)
    return [*out, values[_concat_ranges(starts, limits)]]


@register_kernel("RaggedGather")
def _ragged_gather_kernel(k: KernelConstruction) -> Callable:
    output_ragged_rank = int(k.attr("OUTPUT_RAGGED_RANK"))

    def compute(ctx, inputs: list) -> list:
        *splits, values, indices = (np.asarray(x) for x in inputs)
        return ragged_gather(k, splits, values, indices, output_ragged_rank)

    return compute
