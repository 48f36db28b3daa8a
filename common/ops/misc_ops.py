"""Ops (executor stage): what gradient and training graphs need beyond the other families —
segment reductions (SegmentSum ..., UnsortedSegmentSum/Max/Min/Prod), DynamicStitch /
ParallelDynamicStitch, DynamicPartition, ListDiff, Bincount, and Assert (with TensorFlow's
SummarizeValue message).

Kernels are stateless numpy functions (Assert only raises), safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import numpy as np

from common import memory
from common.attr_value import utf8_safe_c_escape
from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

_NUMBER = (
    "float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, "
    "bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64"
)
_REAL = "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64"


def _finite_limit(d: np.dtype, low: bool):
    """numeric_limits<T>::lowest() / max(): finite, as TF's empty Max/Min segments."""
    info = np.iinfo(d) if mu.is_integer(d) else ml_dtypes.finfo(d)
    return info.min if low else info.max


# reducer: (ufunc for np.<ufunc>.at, identity for empty segments as a function of dtype)
_REDUCERS: dict[str, tuple[np.ufunc, Callable[[np.dtype], object]]] = {
    "Sum": (np.add, lambda d: 0),
    "Prod": (np.multiply, lambda d: 1),
    "Max": (np.maximum, lambda d: _finite_limit(d, True)),
    "Min": (np.minimum, lambda d: _finite_limit(d, False)),
}


# ---------------------------------------------------------------------------------------
# Segment reductions
# ---------------------------------------------------------------------------------------


def unsorted_segment(data, ids, num_segments: int, reducer: str) -> np.ndarray:
    """output[i] = reduce(data[j...] for ids[j...] == i); negative ids are dropped; empty
    segments hold the reducer's identity (lowest/highest for Max/Min, as TF)."""
    data, ids = np.asarray(data), np.asarray(ids)
    if data.shape[: ids.ndim] != ids.shape:
        raise InvalidArgumentError(
            f"data.shape = {mu.shape_str(data.shape)} does not start with segment_ids.shape = "
            f"{mu.shape_str(ids.shape)}"
        )
    ufunc, identity = _REDUCERS[reducer]
    flat_ids = ids.reshape(-1).astype(np.int64)
    bad = np.flatnonzero(flat_ids >= num_segments)
    if bad.size:
        i = int(bad[0])
        raise InvalidArgumentError(
            f"segment_ids[{i}] = {flat_ids[i]} is out of range [0, {num_segments})"
        )
    inner = data.shape[ids.ndim :]
    values = mu.upcast(data).reshape((-1,) + inner)
    keep = flat_ids >= 0
    out = np.full((num_segments,) + inner, identity(data.dtype), values.dtype)
    with np.errstate(all="ignore"):
        ufunc.at(out, flat_ids[keep], values[keep])
    return mu.as_type(out, data.dtype)


def _num_segments(x) -> int:
    n = np.asarray(x)
    if n.ndim != 0:
        raise InvalidArgumentError(
            f"num_segments should be a scalar, not shape {mu.shape_str(n.shape)}"
        )
    if int(n) < 0:
        raise InvalidArgumentError(f"Input num_segments == {int(n)} must not be negative.")
    return int(n)


def _unsorted_segment(reducer: str) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        def compute(ctx, inputs: list) -> list:
            n = _num_segments(inputs[2])
            return [unsorted_segment(inputs[0], inputs[1], n, reducer)]

        return compute

    return factory


def _sorted_segment(reducer: str) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        def compute(ctx, inputs: list) -> list:
            data, ids = np.asarray(inputs[0]), np.asarray(inputs[1])
            if ids.ndim != 1:
                raise InvalidArgumentError("segment_ids should be a vector.")
            if data.ndim < 1 or ids.shape[0] != data.shape[0]:
                raise InvalidArgumentError(
                    "segment_ids should be the same size as dimension 0 of input."
                )
            if ids.size and (np.any(np.diff(ids) < 0) or ids[0] < 0):
                raise InvalidArgumentError("segment ids are not increasing")
            n = int(ids[-1]) + 1 if ids.size else 0
            if reducer == "Mean":
                total = unsorted_segment(mu.upcast(data), ids, n, "Sum")
                count = np.bincount(ids.astype(np.int64), minlength=n).reshape(
                    (n,) + (1,) * (data.ndim - 1)
                )
                with np.errstate(all="ignore"):
                    mean = np.where(count > 0, total / np.maximum(count, 1).astype(total.dtype), 0)
                return [mu.as_type(mean, data.dtype)]
            out = unsorted_segment(data, ids, n, reducer)
            if reducer in ("Max", "Min") and n:  # TF's sorted Max/Min leave empty rows 0
                present = np.bincount(ids.astype(np.int64), minlength=n) > 0
                out[~present] = 0
            return [out]

        return compute

    return factory


# ---------------------------------------------------------------------------------------
# DynamicStitch
# ---------------------------------------------------------------------------------------


def dynamic_stitch(indices: list, data: list) -> np.ndarray:
    """merged[indices[m][i...]] = data[m][i...]; later inputs win on repeated indices."""
    idx = [np.asarray(i) for i in indices]
    vals = [np.asarray(d) for d in data]
    if not vals:
        raise InvalidArgumentError("DynamicStitch needs at least one input")
    inner = vals[0].shape[idx[0].ndim :]
    for m, (i, d) in enumerate(zip(idx, vals)):
        if d.shape != i.shape + inner:
            raise InvalidArgumentError(
                f"data[{m}].shape = {mu.shape_str(d.shape)} does not start with indices[{m}]"
                f".shape = {mu.shape_str(i.shape)}"
            )
    flat_idx = np.concatenate([i.reshape(-1) for i in idx]).astype(np.int64)
    flat_val = np.concatenate([d.reshape((-1,) + inner) for d in vals])
    size = int(flat_idx.max()) + 1 if flat_idx.size else 0
    if flat_idx.size and flat_idx.min() < 0:
        raise InvalidArgumentError(f"indices[{int(flat_idx.min())}] is out of range")
    out = np.zeros((size,) + inner, vals[0].dtype)
    out[flat_idx] = flat_val  # numpy assigns in order: the last occurrence wins
    filled = np.zeros(size, bool)
    filled[flat_idx] = True
    if not filled.all():
        raise InvalidArgumentError(
            f"Missing indices in DynamicStitch: {int(np.flatnonzero(~filled)[0])}"
        )
    return out


def _dynamic_stitch(kc: KernelConstruction) -> Callable:
    n = int(kc.attr("N"))

    def compute(ctx, inputs: list) -> list:
        return [dynamic_stitch(inputs[:n], inputs[n:])]

    return compute


def _dynamic_partition(kc: KernelConstruction) -> Callable:
    n = int(kc.attr("num_partitions"))

    def compute(ctx, inputs: list) -> list:
        data, parts = np.asarray(inputs[0]), np.asarray(inputs[1])
        if data.shape[: parts.ndim] != parts.shape:
            raise InvalidArgumentError(
                f"data.shape must start with partitions.shape, got data.shape = "
                f"{mu.shape_str(data.shape)}, partitions.shape = {mu.shape_str(parts.shape)}"
            )
        flat = parts.reshape(-1)
        bad = np.flatnonzero((flat < 0) | (flat >= n))
        if bad.size:
            i = int(bad[0])
            raise InvalidArgumentError(f"partitions[{i}] = {flat[i]} is not in [0, {n})")
        rows = data.reshape((-1,) + data.shape[parts.ndim :])
        return [rows[flat == p] for p in range(n)]

    return compute


def _list_diff(kc: KernelConstruction) -> Callable:
    idx_type = mu.np_type(kc.attr("out_idx"))

    def compute(ctx, inputs: list) -> list:
        x, y = np.asarray(inputs[0]), np.asarray(inputs[1])
        if x.ndim != 1 or y.ndim != 1:
            raise InvalidArgumentError(
                f"x should be a 1D vector.  x: {mu.shape_str(x.shape)}  y: {mu.shape_str(y.shape)}"
                if x.ndim != 1
                else "y should be a 1D vector."
            )
        keep = np.flatnonzero(~np.isin(x, y))
        return [x[keep], keep.astype(idx_type)]

    return compute


# ---------------------------------------------------------------------------------------
# Bincount
# ---------------------------------------------------------------------------------------


def _bincount(kc: KernelConstruction) -> Callable:
    out = mu.np_type(kc.attr("T"))

    def compute(ctx, inputs: list) -> list:
        arr, size, weights = (np.asarray(v) for v in inputs)
        if size.ndim != 0:
            raise InvalidArgumentError(f"Shape must be rank 0 but is rank {size.ndim}")
        n = int(size)
        if n < 0:
            raise InvalidArgumentError(f"size ({n}) must be non-negative")
        flat = arr.reshape(-1).astype(np.int64)
        if flat.size and flat.min() < 0:
            raise InvalidArgumentError("Input arr must be non-negative!")
        keep = flat < n
        # The bins' count comes from an input value: np.bincount's float64/int64 bins
        # are checked against the budget before they exist.
        memory.check_allocation(kc, [n], np.dtype(np.float64))
        w = None
        if weights.size:
            if weights.shape != arr.shape:
                raise InvalidArgumentError(
                    "Input arr and weights must have the same shape: "
                    f"{mu.shape_str(arr.shape)} vs {mu.shape_str(weights.shape)}"
                )
            w = weights.reshape(-1)[keep].astype(np.float64)
        counts = np.bincount(flat[keep], weights=w, minlength=n)[:n]
        return [counts.astype(out)]

    return compute


# ---------------------------------------------------------------------------------------
# Assert
# ---------------------------------------------------------------------------------------


def _element(v) -> str:
    if isinstance(v, bytes):
        # PrintOneElement: strings C-escaped (absl::Utf8SafeCEscape).
        return utf8_safe_c_escape(v).decode("utf-8", "replace")
    if isinstance(v, (np.floating, float)):
        return _shortest_float(v)
    if isinstance(v, (np.bool_, bool)):
        return "1" if v else "0"
    return str(v)


def _shortest_float(v) -> str:
    """TF's FloatToBuffer/DoubleToBuffer: %g with the fewest digits that round-trip."""
    v = np.asarray(v)
    d = v.dtype if v.dtype in (np.float32, np.float64) else np.dtype(np.float32)
    x = v.astype(d)
    for p in (6, 9) if d == np.float32 else (15, 17):
        s = f"{float(x):.{p}g}"
        if np.isnan(x) or d.type(float(s)) == x:
            break
    return s


def summarize_value(t: np.ndarray, max_entries: int) -> str:
    """Tensor::SummarizeValue: the first `max_entries` values, nested per dimension."""
    flat = t.reshape(-1)
    num = flat.size
    limit = num if max_entries < 0 else min(max_entries, num)
    pieces: list[str] = []
    if t.ndim <= 1:
        pieces.append(" ".join(_element(flat[i]) for i in range(limit)))
    else:
        pos = [0]

        def dim(d: int) -> None:
            if pos[0] >= limit:
                return
            if d == t.ndim - 1:
                for i in range(t.shape[d]):
                    if pos[0] >= limit:
                        pieces.append("...")
                        return
                    if i > 0:
                        pieces.append(" ")
                    pieces.append(_element(flat[pos[0]]))
                    pos[0] += 1
                return
            for _ in range(t.shape[d]):
                opened = pos[0] < limit
                if opened:
                    pieces.append("[")
                dim(d + 1)
                if pos[0] < limit or opened:
                    pieces.append("]")

        dim(0)
    if limit < num:
        pieces.append("...")
    return "".join(pieces)


def _assert(kc: KernelConstruction) -> Callable:
    summarize = int(kc.attrs.get("summarize", 3))

    def compute(ctx, inputs: list) -> list:
        cond = np.asarray(inputs[0])
        if cond.ndim != 0:
            raise InvalidArgumentError(f"In[0] should be a scalar: {mu.shape_str(cond.shape)}")
        if not bool(cond):
            parts = [summarize_value(np.asarray(d), summarize) for d in inputs[1:]]
            raise InvalidArgumentError("assertion failed: " + " ".join(f"[{p}]" for p in parts))
        return []

    return compute


def _register() -> None:
    seg_out = ["output: T"]
    register_op(
        "UnsortedSegmentSum",
        ["data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"],
        seg_out,
        [
            f"T: {{{_NUMBER}}}",
            "Tindices: {int16, int32, int64}",
            "Tnumsegments: {int32, int64} = DT_INT32",
        ],
    )
    register_kernel("UnsortedSegmentSum", host_memory=("num_segments",))(_unsorted_segment("Sum"))
    for name, types in (("Max", _REAL), ("Min", _REAL), ("Prod", _NUMBER)):
        op = "UnsortedSegment" + name
        register_op(
            op,
            ["data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"],
            seg_out,
            [
                f"T: {{{types}}}",
                "Tindices: {int32, int64}",
                "Tnumsegments: {int32, int64} = DT_INT32",
            ],
        )
        register_kernel(op, host_memory=("num_segments",))(_unsorted_segment(name))
    for name, types in (
        ("Sum", _NUMBER),
        ("Mean", _NUMBER),
        ("Max", _REAL),
        ("Min", _REAL),
        ("Prod", _NUMBER),
    ):
        op = "Segment" + name
        register_op(
            op,
            ["data: T", "segment_ids: Tindices"],
            seg_out,
            [f"T: {{{types}}}", "Tindices: {int32, int64}"],
        )
        register_kernel(op)(_sorted_segment(name))
    for op in ("DynamicStitch", "ParallelDynamicStitch"):
        register_op(
            op, ["indices: N * int32", "data: N * T"], ["merged: T"], ["N: int >= 1", "T: type"]
        )
        register_kernel(op, host_memory=("indices",))(_dynamic_stitch)
    register_op(
        "DynamicPartition",
        ["data: T", "partitions: int32"],
        ["outputs: num_partitions * T"],
        ["num_partitions: int >= 1", "T: type"],
    )
    register_kernel("DynamicPartition")(_dynamic_partition)
    register_op(
        "ListDiff",
        ["x: T", "y: T"],
        ["out: T", "idx: out_idx"],
        ["T: type", "out_idx: {int32, int64} = DT_INT32"],
    )
    register_kernel("ListDiff")(_list_diff)
    register_op(
        "Bincount",
        ["arr: int32", "size: int32", "weights: T"],
        ["bins: T"],
        ["T: {int32, int64, float, double}"],
    )
    register_kernel("Bincount", host_memory=("size",))(_bincount)
    register_op(
        "Assert",
        ["condition: bool", "data: T"],
        [],
        ["T: list(type) >= 1", "summarize: int = 3"],
        stateful=True,
    )
    register_kernel("Assert")(_assert)


_register()
