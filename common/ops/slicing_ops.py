"""Ops (executor stage): joining, splitting, slicing and gathering array ops — Concat,
ConcatV2, ConcatOffset, Pack, Unpack, Split, SplitV, Slice, StridedSlice(+Grad), Gather,
GatherV2, GatherNd, ScatterNd, TensorScatterUpdate/Add.

StridedSlice is implemented by translating TensorFlow's sparse slice spec (begin, end,
strides and the five masks) into a Python index tuple (`strided_slice_index`); Python's
slice clamping is exactly TensorFlow's. State ops reuse it for StridedSliceAssign.
Pure kernels: safe from any thread.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from common import memory
from common.errors import InvalidArgumentError
from common.ops.array_ops import (
    INDEX_TYPE,
    as_int_list,
    scalar_int,
    shape_str,
)
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op

_MASKS = (
    "begin_mask: int = 0",
    "end_mask: int = 0",
    "ellipsis_mask: int = 0",
    "new_axis_mask: int = 0",
    "shrink_axis_mask: int = 0",
)
_BAD_INDICES = "bad_indices_policy: string = ''"

# ---------------------------------------------------------------------------------------
# Concat, ConcatOffset, Pack, Unpack
# ---------------------------------------------------------------------------------------

register_op(
    "Concat",
    inputs=["concat_dim: int32", "values: N * T"],
    outputs=["output: T"],
    attrs=["N: int >= 2", "T: type"],
)
register_op(
    "ConcatV2",
    inputs=["values: N * T", "axis: Tidx"],
    outputs=["output: T"],
    attrs=["N: int >= 2", "T: type", f"Tidx: {INDEX_TYPE} = DT_INT32"],
)
register_op(
    "ConcatOffset",
    inputs=["concat_dim: int32", "shape: N * shape_type"],
    outputs=["offset: N * shape_type"],
    attrs=["N: int >= 2", f"shape_type: {INDEX_TYPE} = DT_INT32"],
)


def concat(values: Sequence[np.ndarray], axis_value: Any) -> np.ndarray:
    axis = scalar_int(axis_value, "Concat dim tensor")
    first = np.shape(values[0])
    rank = len(first)
    if not -rank <= axis < rank:
        if rank == 0:
            raise InvalidArgumentError(
                "ConcatOp : Can't concatenate scalars (use tf.stack instead)"
            )
        raise InvalidArgumentError(
            f"ConcatOp : Expected concatenating dimensions in the range [{-rank}, {rank}), "
            f"but got {axis}"
        )
    axis %= rank
    head, tail = first[:axis], first[axis + 1 :]
    for i, v in enumerate(values[1:], 1):
        shape = np.shape(v)
        if len(shape) == rank and shape[:axis] == head and shape[axis + 1 :] == tail:
            continue  # the usual case, checked as tuples
        if len(shape) != rank:
            raise InvalidArgumentError(
                "ConcatOp : Ranks of all input tensors should match: shape[0] = "
                f"{shape_str(first)} vs. shape[{i}] = {shape_str(shape)}"
            )
        for d in range(rank):
            if d != axis and shape[d] != first[d]:
                raise InvalidArgumentError(
                    f"ConcatOp : Dimension {d} in both shapes must be equal: shape[0] = "
                    f"{shape_str(first)} vs. shape[{i}] = {shape_str(shape)}"
                )
    return np.concatenate(values, axis=axis)


@register_kernel("Concat")
def _concat(k: KernelConstruction):
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [concat(inputs[1:], inputs[0])]

    return compute


@register_kernel("ConcatV2")
def _concat_v2(k: KernelConstruction):
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [concat(inputs[:-1], inputs[-1])]

    return compute


def _shape_vec(shape: np.ndarray) -> str:
    """A shape vector as TF's Tensor::SummarizeValue prints it: "[2 3]"."""
    return "[" + " ".join(str(int(d)) for d in shape) + "]"


@register_kernel("ConcatOffset")
def _concat_offset(k: KernelConstruction):
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        shapes = [np.asarray(s) for s in inputs[1:]]
        rank = shapes[0].size
        axis = scalar_int(inputs[0], "Concat dim tensor")
        if not -rank <= axis < rank:
            raise InvalidArgumentError(f"Concat dim is out of range: {axis} vs. {rank}")
        axis %= rank
        offsets, running = [], 0
        for i, s in enumerate(shapes):
            if s.size != rank:
                raise InvalidArgumentError(
                    f"input {i} should contain {rank} elements, but got {s.size}"
                )
            for d in range(rank):
                if d != axis and s[d] != shapes[0][d]:
                    raise InvalidArgumentError(
                        f"All dimensions except {axis} must match. Input {i} has shape "
                        f"{_shape_vec(s)} and doesn't match input 0 with shape "
                        f"{_shape_vec(shapes[0])}."
                    )
            out = np.zeros(rank, dtype=s.dtype)
            out[axis] = running
            running += int(s[axis])
            offsets.append(out)
        return offsets

    return compute


register_op(
    "Pack",
    inputs=["values: N * T"],
    outputs=["output: T"],
    attrs=["N: int >= 1", "T: type", "axis: int = 0"],
)
register_op(
    "Unpack",
    inputs=["value: T"],
    outputs=["output: num * T"],
    attrs=["num: int >= 0", "T: type", "axis: int = 0"],
)


@register_kernel("Pack")
def _pack(k: KernelConstruction):
    axis = k.attr("axis")

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        first = np.shape(inputs[0])
        rank = len(first) + 1
        if not -rank <= axis < rank:
            raise InvalidArgumentError(f"axis = {axis} not in [{-rank}, {rank})")
        for i, v in enumerate(inputs[1:], 1):
            if np.shape(v) != first:
                raise InvalidArgumentError(
                    f"Shapes of all inputs must match: values[0].shape = {shape_str(first)} "
                    f"!= values[{i}].shape = {shape_str(np.shape(v))}"
                )
        return [np.stack(inputs, axis=axis % rank)]

    return compute


@register_kernel("Unpack")
def _unpack(k: KernelConstruction):
    axis, num = k.attr("axis"), k.attr("num")

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        x = inputs[0]
        shape, rank = np.shape(x), np.ndim(x)
        if not -rank <= axis < rank:
            raise InvalidArgumentError(f"axis = {axis} not in [{-rank}, {rank})")
        a = axis % rank
        if shape[a] != num:
            raise InvalidArgumentError(
                f"Input shape axis {a} must equal {num}, got shape {shape_str(shape)}"
            )
        return [np.take(x, i, axis=a) for i in range(num)]

    return compute


# ---------------------------------------------------------------------------------------
# Split, SplitV
# ---------------------------------------------------------------------------------------

register_op(
    "Split",
    inputs=["split_dim: int32", "value: T"],
    outputs=["output: num_split * T"],
    attrs=["num_split: int >= 1", "T: type"],
)
register_op(
    "SplitV",
    inputs=["value: T", "size_splits: Tlen", "split_dim: int32"],
    outputs=["output: num_split * T"],
    attrs=["num_split: int >= 1", "T: type", "Tlen: {int8, int32, int64} = DT_INT64"],
)


def _split_axis(value: np.ndarray, split_dim: Any) -> int:
    rank = np.ndim(value)
    d = scalar_int(split_dim, "split_dim")
    if not -rank <= d < rank:
        raise InvalidArgumentError(
            f"-input rank(-{rank}) <= split_dim < input rank ({rank}), but got {d}"
        )
    return d % rank


def split_at(value: np.ndarray, axis: int, sizes: Sequence[int]) -> list[np.ndarray]:
    """The parts of `value` along `axis` (np.split's, contiguous), sliced directly:
    np.split's Python set-up cost more than the copies of an LSTM's gates."""
    value = np.asarray(value)
    lead = (slice(None),) * axis
    parts, lo = [], 0
    for size in sizes:
        parts.append(np.ascontiguousarray(value[lead + (slice(lo, lo + size),)]))
        lo += size
    return parts


@register_kernel("Split")
def _split(k: KernelConstruction):
    num = k.attr("num_split")

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        value = inputs[1]
        axis = _split_axis(value, inputs[0])
        size = np.shape(value)[axis]
        if size % num:
            raise InvalidArgumentError(
                "Number of ways to split should evenly divide the split dimension, but got "
                f"split_dim {axis} (size = {size}) and num_split {num}"
            )
        return split_at(value, axis, [size // num] * num)

    return compute


def split_v_sizes(sizes: list[int], total: int, num: int) -> list[int]:
    if len(sizes) != num:
        raise InvalidArgumentError(
            f"Number of ways to split should evenly divide the split dimension, but got "
            f"num_split {num} and {len(sizes)} size_splits"
        )
    unknown = [i for i, s in enumerate(sizes) if s == -1]
    if len(unknown) > 1:
        raise InvalidArgumentError("There can only be one -1 in the input.")
    known = sum(s for s in sizes if s != -1)
    if (not unknown and known != total) or (unknown and known > total):
        raise InvalidArgumentError(
            "Determined shape must either match input shape along split_dim exactly if "
            "fully specified, or be less than the size of the input along split_dim if "
            f"not fully specified.  Got: {known}"
        )
    if unknown:
        sizes = list(sizes)
        sizes[unknown[0]] = total - known
    for s in sizes:
        if s < 0:
            raise InvalidArgumentError(f"Split size at index 0 must be >= 0. Got: {s}")
    return sizes


@register_kernel("SplitV")
def _split_v(k: KernelConstruction):
    num = k.attr("num_split")

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        value = inputs[0]
        axis = _split_axis(value, inputs[2])
        sizes = split_v_sizes(as_int_list(inputs[1]), np.shape(value)[axis], num)
        return split_at(value, axis, sizes)

    return compute


# ---------------------------------------------------------------------------------------
# Slice
# ---------------------------------------------------------------------------------------

register_op(
    "Slice",
    inputs=["input: T", "begin: Index", "size: Index"],
    outputs=["output: T"],
    attrs=["T: type", f"Index: {INDEX_TYPE}"],
)


def slice_index(shape: Sequence[int], begin: list[int], size: list[int]) -> tuple:
    if len(begin) != len(shape) or len(size) != len(shape):
        raise InvalidArgumentError(
            f"Expected begin and size arguments to be 1-D tensors of size {len(shape)}, but "
            f"got shapes [{len(begin)}] and [{len(size)}] instead."
        )
    index = []
    for i, (dim, b, s) in enumerate(zip(shape, begin, size)):
        if s == -1:
            s = dim - b
        if not 0 <= b <= dim:
            raise InvalidArgumentError(f"Expected begin[{i}] in [0, {dim}], but got {b}")
        if not 0 <= s <= dim - b:
            raise InvalidArgumentError(f"Expected size[{i}] in [0, {dim - b}], but got {s}")
        index.append(slice(b, b + s))
    return tuple(index)


@register_kernel("Slice")
def _slice(k: KernelConstruction):
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        x = inputs[0]
        index = slice_index(np.shape(x), as_int_list(inputs[1]), as_int_list(inputs[2]))
        return [np.asarray(x[index])]

    return compute


# ---------------------------------------------------------------------------------------
# StridedSlice
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SliceMasks:
    begin_mask: int = 0
    end_mask: int = 0
    ellipsis_mask: int = 0
    new_axis_mask: int = 0
    shrink_axis_mask: int = 0

    @classmethod
    def from_attrs(cls, attrs: dict) -> SliceMasks:
        return cls(*(int(attrs.get(f.name, 0)) for f in dataclasses.fields(cls)))


def strided_slice_index(
    shape: Sequence[int], begin: Any, end: Any, strides: Any, masks: SliceMasks
) -> tuple:
    """The Python index tuple equivalent to TensorFlow's StridedSlice spec on `shape`
    (Ellipsis, None for new axes, ints for shrunk axes, slices), validated with
    TensorFlow's errors."""
    b_arr, e_arr, s_arr = np.asarray(begin), np.asarray(end), np.asarray(strides)
    if not (b_arr.ndim == e_arr.ndim == s_arr.ndim == 1 and b_arr.size == e_arr.size == s_arr.size):
        raise InvalidArgumentError(
            "Expected begin, end, and strides to be 1D equal size tensors, but got shapes "
            f"{shape_str(b_arr.shape)}, {shape_str(e_arr.shape)}, and "
            f"{shape_str(s_arr.shape)} instead."
        )
    if masks.ellipsis_mask & (masks.ellipsis_mask - 1):
        raise InvalidArgumentError("Multiple ellipses in slice spec not allowed")
    b, e, s = b_arr.tolist(), e_arr.tolist(), s_arr.tolist()
    n, rank = len(b), len(shape)

    def kind(i: int) -> str:
        bit = 1 << i
        if masks.ellipsis_mask & bit:
            return "ellipsis"
        if masks.new_axis_mask & bit:
            return "new"
        return "shrink" if masks.shrink_axis_mask & bit else "range"

    kinds = [kind(i) for i in range(n)]
    consuming = sum(k in ("shrink", "range") for k in kinds)
    if rank == 0 and consuming:
        raise InvalidArgumentError("Attempting to slice scalar input.")
    if consuming > rank:
        raise InvalidArgumentError(
            f"Index out of range using input dim {rank}; input has only {rank} dims"
        )
    index: list[Any] = []
    dim = 0
    for i, k in enumerate(kinds):
        if k == "ellipsis":
            index.append(Ellipsis)
            dim += rank - consuming
            continue
        if k == "new":
            index.append(None)
            continue
        if s[i] == 0:
            raise InvalidArgumentError(f"strides[{dim}] must be non-zero")
        if k == "shrink":
            index.append(_shrink_index(b[i], s[i], shape[dim], dim))
        else:
            start = None if masks.begin_mask & (1 << i) else b[i]
            stop = None if masks.end_mask & (1 << i) else e[i]
            index.append(slice(start, stop, s[i]))
        dim += 1
    return tuple(index)


def _shrink_index(begin: int, stride: int, size: int, dim: int) -> int:
    if stride <= 0:
        raise InvalidArgumentError("only stride 1 allowed on non-range indexing.")
    x = begin + size if begin < 0 else begin
    if not 0 <= x < size:
        raise InvalidArgumentError(f"slice index {x} of dimension {dim} out of bounds.")
    return x


register_op(
    "StridedSlice",
    inputs=["input: T", "begin: Index", "end: Index", "strides: Index"],
    outputs=["output: T"],
    attrs=["T: type", "Index: {int16, int32, int64}", *_MASKS],
)
register_op(
    "StridedSliceGrad",
    inputs=["shape: Index", "begin: Index", "end: Index", "strides: Index", "dy: T"],
    outputs=["output: T"],
    attrs=["T: type", f"Index: {INDEX_TYPE}", *_MASKS],
)


@register_kernel("StridedSlice")
def _strided_slice(k: KernelConstruction):
    masks = SliceMasks.from_attrs(k.attrs)

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        x, begin, end, strides = inputs
        index = strided_slice_index(np.shape(x), begin, end, strides, masks)
        return [np.asarray(np.asarray(x)[index])]

    return compute


@register_kernel("StridedSliceGrad")
def _strided_slice_grad(k: KernelConstruction):
    masks = SliceMasks.from_attrs(k.attrs)

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        shape, begin, end, strides, dy = inputs
        out_shape = as_int_list(shape)
        index = strided_slice_index(out_shape, begin, end, strides, masks)
        out = np.zeros(out_shape, dtype=dy.dtype)
        target = out[index]
        if np.shape(target) != np.shape(dy):
            raise InvalidArgumentError(
                f"shape of dy was {shape_str(np.shape(dy))} instead of "
                f"{shape_str(np.shape(target))}"
            )
        out[index] = dy
        return [out]

    return compute


# ---------------------------------------------------------------------------------------
# Gather, GatherV2, GatherNd
# ---------------------------------------------------------------------------------------

register_op(
    "Gather",
    inputs=["params: Tparams", "indices: Tindices"],
    outputs=["output: Tparams"],
    attrs=["validate_indices: bool = true", "Tparams: type", f"Tindices: {INDEX_TYPE}"],
)
register_op(
    "GatherV2",
    inputs=["params: Tparams", "indices: Tindices", "axis: Taxis"],
    outputs=["output: Tparams"],
    attrs=[
        "batch_dims: int = 0",
        "Tparams: type",
        "Tindices: {int16, int32, int64}",
        f"Taxis: {INDEX_TYPE}",
    ],
)


def _index_str(shape: Sequence[int], flat: int) -> str:
    if not shape:
        return ""
    return "[" + ",".join(str(int(i)) for i in np.unravel_index(flat, tuple(shape))) + "]"


def check_indices(indices: np.ndarray, limit: int) -> None:
    """InvalidArgument naming the first index outside [0, limit)."""
    bad = np.flatnonzero((indices < 0) | (indices >= limit))
    if bad.size:
        at = int(bad[0])
        raise InvalidArgumentError(
            f"indices{_index_str(indices.shape, at)} = {indices.reshape(-1)[at]} is not in "
            f"[0, {limit})"
        )


def gather(params: np.ndarray, indices: np.ndarray, axis: int, batch_dims: int) -> np.ndarray:
    """GatherV2: `axis` and `batch_dims` already canonical (non-negative)."""
    indices = np.asarray(indices)
    check_indices(indices, np.shape(params)[axis])
    idx = indices.astype(np.int64)
    if batch_dims == 0:
        return np.take(params, idx, axis=axis)
    batch = np.shape(params)[:batch_dims]
    if np.shape(indices)[:batch_dims] != batch:
        raise InvalidArgumentError(
            f"params.shape[:{batch_dims}] should match indices.shape[:{batch_dims}], "
            f"but got {shape_str(np.shape(params))} and {shape_str(np.shape(indices))}"
        )
    flat_p = params.reshape((-1,) + np.shape(params)[batch_dims:])
    flat_i = idx.reshape((-1,) + np.shape(indices)[batch_dims:])
    parts = [np.take(p, i, axis=axis - batch_dims) for p, i in zip(flat_p, flat_i)]
    inner = (
        np.shape(params)[batch_dims:axis]
        + np.shape(indices)[batch_dims:]
        + np.shape(params)[axis + 1 :]
    )
    return np.array(parts, dtype=params.dtype).reshape(batch + inner)


@register_kernel("Gather")
def _gather_v1(k: KernelConstruction):
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        params = inputs[0]
        if np.ndim(params) < 1:
            raise InvalidArgumentError("params must be at least 1 dimensional")
        return [gather(params, inputs[1], 0, 0)]

    return compute


@register_kernel("GatherV2")
def _gather_v2(k: KernelConstruction):
    batch_attr = k.attr("batch_dims")

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        params, indices, axis_t = inputs
        rank, irank = np.ndim(params), np.ndim(indices)
        axis = scalar_int(axis_t, "axis")
        if not -rank <= axis < rank:
            raise InvalidArgumentError(
                f"Expected axis in the range [{-rank}, {rank}), but got {axis}"
            )
        axis %= rank
        batch_dims = batch_attr + irank if batch_attr < 0 else batch_attr
        if not 0 <= batch_dims <= irank:
            raise InvalidArgumentError(
                f"Expected batch_dims in the range [{-irank}, {irank}], but got {batch_attr}"
            )
        if batch_dims > axis:
            raise InvalidArgumentError(
                f"batch_dims ({batch_dims}) must be less than or equal to axis ({axis})."
            )
        return [gather(params, indices, axis, batch_dims)]

    return compute


register_op(
    "GatherNd",
    inputs=["params: Tparams", "indices: Tindices"],
    outputs=["output: Tparams"],
    attrs=["Tparams: type", "Tindices: {int16, int32, int64}", _BAD_INDICES],
)


def _nd_bad_rows(idx: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    limits = np.asarray(shape[: idx.shape[-1]], dtype=np.int64)
    return np.flatnonzero(((idx < 0) | (idx >= limits)).any(axis=-1))


def _nd_index_str(row: np.ndarray) -> str:
    return "[" + ", ".join(str(int(v)) for v in row) + "]"


@register_kernel("GatherNd")
def _gather_nd(k: KernelConstruction):
    ignore_bad = k.attrs.get("bad_indices_policy", "") == "IGNORE"
    node = k.node_name

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        params, indices = inputs[0], np.asarray(inputs[1])
        if np.ndim(indices) < 1:
            raise InvalidArgumentError("indices must be at least a vector")
        depth = indices.shape[-1]
        if depth > np.ndim(params):
            raise InvalidArgumentError(
                f"index innermost dimension length must be <= params rank; saw: {depth} vs. "
                f"{np.ndim(params)}"
            )
        outer = indices.shape[:-1]
        flat = indices.reshape(-1, depth).astype(np.int64)
        bad = _nd_bad_rows(flat, np.shape(params))
        if bad.size and not ignore_bad:
            at = int(bad[0])
            raise InvalidArgumentError(
                f"indices{_index_str(outer, at)} = {_nd_index_str(flat[at])} does not index "
                f"into param shape {shape_str(np.shape(params))}, node name: {node}"
            )
        safe = flat.copy()
        safe[bad] = 0
        out = (
            params[tuple(safe.T)] if depth else np.broadcast_to(params, (len(flat),) + params.shape)
        )
        out = np.array(out)
        if bad.size:
            out[bad] = 0
        return [out.reshape(outer + np.shape(params)[depth:])]

    return compute


# ---------------------------------------------------------------------------------------
# ScatterNd, TensorScatterUpdate, TensorScatterAdd
# ---------------------------------------------------------------------------------------

register_op(
    "ScatterNd",
    inputs=["indices: Tindices", "updates: T", "shape: Tindices"],
    outputs=["output: T"],
    attrs=["T: type", "Tindices: {int16, int32, int64}", _BAD_INDICES],
)
register_op(
    "TensorScatterUpdate",
    inputs=["tensor: T", "indices: Tindices", "updates: T"],
    outputs=["output: T"],
    attrs=["T: type", "Tindices: {int16, int32, int64, uint16}", _BAD_INDICES],
)
register_op(
    "TensorScatterAdd",
    inputs=["tensor: T", "indices: Tindices", "updates: T"],
    outputs=["output: T"],
    attrs=["T: type", f"Tindices: {INDEX_TYPE}", _BAD_INDICES],
)


def scatter_nd_into(
    out: np.ndarray, indices: np.ndarray, updates: np.ndarray, add: bool, ignore_bad: bool
) -> np.ndarray:
    """Scatter `updates` into `out` (owned, modified in place) at N-d `indices`."""
    indices = np.asarray(indices)
    if np.ndim(indices) < 1:
        raise InvalidArgumentError("Indices must be at least a vector")
    depth = indices.shape[-1]
    if depth > out.ndim:
        raise InvalidArgumentError(
            f"Dimensions [0,{depth}) of indices[shape={shape_str(indices.shape)}] must match "
            f"dimensions [0,{depth}) of updates"
        )
    flat = indices.reshape(-1, depth).astype(np.int64)
    slice_shape = out.shape[depth:]
    expected = indices.shape[:-1] + slice_shape
    if np.shape(updates) != expected:
        raise InvalidArgumentError(
            f"Dimensions of updates {shape_str(np.shape(updates))} must match "
            f"{shape_str(expected)} (indices.shape[:-1] + shape[indices.shape[-1]:])"
        )
    upd = np.asarray(updates).reshape((len(flat),) + slice_shape)
    bad = _nd_bad_rows(flat, out.shape)
    if bad.size:
        if not ignore_bad:
            raise InvalidArgumentError(
                f"indices[{int(bad[0])}] = {_nd_index_str(flat[bad[0]])} does not index into "
                f"shape {shape_str(out.shape)}"
            )
        keep = np.setdiff1d(np.arange(len(flat)), bad)
        flat, upd = flat[keep], upd[keep]
    where = tuple(flat.T)
    if add:
        if out.dtype == np.bool_:
            np.logical_or.at(out, where, upd)
        else:
            np.add.at(out, where, upd)
    else:
        out[where] = upd
    return out


@register_kernel("ScatterNd")
def _scatter_nd(k: KernelConstruction):
    ignore = k.attrs.get("bad_indices_policy", "") == "IGNORE"

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        indices, updates, shape = inputs
        dims = as_int_list(shape)
        if any(d < 0 for d in dims):
            raise InvalidArgumentError(f"Shape must be non-negative, got {shape_str(dims)}")
        memory.check_allocation(k, dims, np.asarray(updates).dtype)
        out = np.zeros(dims, dtype=np.asarray(updates).dtype)
        return [scatter_nd_into(out, indices, updates, True, ignore)]

    return compute


def _tensor_scatter(add: bool):
    def factory(k: KernelConstruction):
        ignore = k.attrs.get("bad_indices_policy", "") == "IGNORE"

        def compute(ctx: OpKernelContext, inputs: list) -> list:
            tensor, indices, updates = inputs
            return [scatter_nd_into(np.array(tensor), indices, updates, add, ignore)]

        return compute

    return factory


register_kernel("TensorScatterUpdate")(_tensor_scatter(False))
register_kernel("TensorScatterAdd")(_tensor_scatter(True))
