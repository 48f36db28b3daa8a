"""Ops (executor stage): array transformation ops — Tile, Pad, PadV2, MirrorPad, Reverse,
ReverseV2, OneHot, Where, Unique, UniqueWithCounts (and V2), InvertPermutation, Diag, DiagPart,
MatrixDiag, SpaceToDepth, DepthToSpace, Empty.

Signatures are TensorFlow's; numpy kernels with TensorFlow's semantics and error wording.
Pure kernels: safe from any thread.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from common import memory
from common.errors import InvalidArgumentError, UnimplementedError
from common.ops.array_ops import (
    INDEX_TYPE,
    as_int_list,
    np_type,
    scalar_int,
    shape_str,
)
from common.ops.registry import (
    KernelConstruction,
    OpKernelContext,
    one_output_kernel,
    register_kernel,
    register_op,
)

# TensorFlow's numbertype plus qint16/quint16 (as Where and the Assign* ops spell it).
_NUMBER_AND_QINT16 = (
    "float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, "
    "bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64"
)
_REVERSE_TYPES = (
    "{uint8, int8, uint16, int16, int32, uint32, int64, uint64, bool, bfloat16, half, float, "
    "double, complex64, complex128, string}"
)
_DIAG_TYPES = "{bfloat16, half, float, double, int32, int64, complex64, complex128}"


# ---------------------------------------------------------------------------------------
# Tile, Pad, PadV2, MirrorPad
# ---------------------------------------------------------------------------------------

register_op(
    "Tile",
    inputs=["input: T", "multiples: Tmultiples"],
    outputs=["output: T"],
    attrs=["T: type", f"Tmultiples: {INDEX_TYPE} = DT_INT32"],
)


@one_output_kernel("Tile")
def _tile(k: KernelConstruction, x: np.ndarray, multiples: np.ndarray) -> np.ndarray:
    reps = as_int_list(multiples)
    if np.ndim(multiples) != 1 or len(reps) != np.ndim(x):
        raise InvalidArgumentError(
            f"Expected multiples argument to be a vector of length {np.ndim(x)} but got "
            f"length {len(reps)}"
        )
    for i, r in enumerate(reps):
        if r < 0:
            raise InvalidArgumentError(f"Expected multiples[{i}] >= 0, but got {r}")
    memory.check_allocation(k, [d * r for d, r in zip(np.shape(x), reps)], np.asarray(x).dtype)
    return np.tile(x, reps) if reps else np.array(x)


register_op(
    "Pad",
    inputs=["input: T", "paddings: Tpaddings"],
    outputs=["output: T"],
    attrs=["T: type", f"Tpaddings: {INDEX_TYPE} = DT_INT32"],
)
register_op(
    "PadV2",
    inputs=["input: T", "paddings: Tpaddings", "constant_values: T"],
    outputs=["output: T"],
    attrs=["T: type", f"Tpaddings: {INDEX_TYPE} = DT_INT32"],
)
register_op(
    "MirrorPad",
    inputs=["input: T", "paddings: Tpaddings"],
    outputs=["output: T"],
    attrs=["T: type", f"Tpaddings: {INDEX_TYPE} = DT_INT32", "mode: {'REFLECT', 'SYMMETRIC'}"],
)


def pad_widths(x: np.ndarray, paddings: np.ndarray) -> list[tuple[int, int]]:
    p = np.asarray(paddings)
    if p.ndim != 2 or p.shape[1] != 2:
        raise InvalidArgumentError(
            f"paddings must be a matrix with 2 columns: {shape_str(p.shape)}"
        )
    if p.shape[0] != np.ndim(x):
        raise InvalidArgumentError(
            "The first dimension of paddings must be the rank of inputs"
            f"{shape_str(p.shape)} {shape_str(np.shape(x))}"
        )
    widths = [(int(a), int(b)) for a, b in p.tolist()]
    for a, b in widths:
        if a < 0 or b < 0:
            raise InvalidArgumentError(f"Paddings must be non-negative: {a} {b}")
    return widths


def _pad_constant(k: KernelConstruction, x: np.ndarray, paddings: np.ndarray, value) -> np.ndarray:
    widths = pad_widths(x, paddings)
    if not widths:
        return np.array(x)
    out_shape = [d + a + b for d, (a, b) in zip(np.shape(x), widths)]
    memory.check_allocation(k, out_shape, x.dtype)
    out = np.empty(out_shape, dtype=x.dtype)
    out.fill(value)
    out[tuple(slice(a, a + d) for d, (a, _) in zip(np.shape(x), widths))] = x
    return out


@one_output_kernel("Pad")
def _pad(k: KernelConstruction, x: np.ndarray, paddings: np.ndarray) -> np.ndarray:
    return _pad_constant(k, x, paddings, b"" if x.dtype == object else 0)


@one_output_kernel("PadV2")
def _pad_v2(k: KernelConstruction, x: np.ndarray, paddings: np.ndarray, value) -> np.ndarray:
    if np.ndim(value) != 0:
        raise InvalidArgumentError(
            f"constant_values must be a scalar. Found: {shape_str(np.shape(value))}"
        )
    return _pad_constant(k, x, paddings, np.asarray(value)[()])


@register_kernel("MirrorPad")
def _mirror_pad(k: KernelConstruction):
    mode = k.attr("mode")
    offset = 1 if mode == "REFLECT" else 0

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        x, paddings = inputs
        widths = pad_widths(x, paddings)
        for d, (a, b) in zip(np.shape(x), widths):
            if offset and (a >= d or b >= d):
                raise InvalidArgumentError(
                    f"paddings must be less than the dimension size: {a}, {b} not less than {d}"
                )
            if not offset and (a > d or b > d):
                raise InvalidArgumentError(
                    f"paddings must be no greater than the dimension size: {a}, {b} greater "
                    f"than {d}"
                )
        if not widths:
            return [np.array(x)]
        return [np.pad(x, widths, mode="reflect" if offset else "symmetric")]

    return compute


# ---------------------------------------------------------------------------------------
# Reverse, ReverseV2
# ---------------------------------------------------------------------------------------

register_op(
    "ReverseV2",
    inputs=["tensor: T", "axis: Tidx"],
    outputs=["output: T"],
    attrs=[f"Tidx: {INDEX_TYPE} = DT_INT32", f"T: {_REVERSE_TYPES}"],
)
register_op(
    "Reverse",
    inputs=["tensor: T", "dims: bool"],
    outputs=["output: T"],
    attrs=[f"T: {_REVERSE_TYPES}"],
)


@one_output_kernel("ReverseV2")
def _reverse_v2(k: KernelConstruction, x: np.ndarray, axis: np.ndarray) -> np.ndarray:
    rank = np.ndim(x)
    seen: set[int] = set()
    for a in as_int_list(axis):
        if not -rank <= a < rank:
            raise InvalidArgumentError(
                f"'axis'[{len(seen)}] = {a} is out of valid range [0, {rank - 1}"
            )
        a %= rank
        if a in seen:
            raise InvalidArgumentError(f"axis {a} specified more than once.")
        seen.add(a)
    return np.array(np.flip(x, tuple(sorted(seen)))) if seen else np.array(x)


register_op(
    "ReverseSequence",
    inputs=["input: T", "seq_lengths: Tlen"],
    outputs=["output: T"],
    attrs=["seq_dim: int", "batch_dim: int = 0", "T: type", "Tlen: {int32, int64} = DT_INT64"],
)


@one_output_kernel("ReverseSequence")
def _reverse_sequence(k: KernelConstruction, x: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Reverses x[b, :lengths[b]] along seq_dim for each b along batch_dim."""
    seq_dim, batch_dim = int(k.attr("seq_dim")), int(k.attr("batch_dim"))
    rank = np.ndim(x)
    if seq_dim == batch_dim:
        raise InvalidArgumentError(f"batch_dim == seq_dim == {seq_dim}")
    if not 0 <= seq_dim < rank:
        raise InvalidArgumentError(f"seq_dim must be < input rank ( {seq_dim} vs. {rank})")
    if not 0 <= batch_dim < rank:
        raise InvalidArgumentError(f"batch_dim must be < input rank ( {batch_dim} vs. {rank})")
    lens = np.asarray(lengths).reshape(-1)
    if np.ndim(lengths) != 1 or lens.size != x.shape[batch_dim]:
        raise InvalidArgumentError(
            f"Length of seq_lengths != input.dims({batch_dim}), ({lens.size} vs. "
            f"{x.shape[batch_dim]})"
        )
    out = np.array(x)
    for b, n in enumerate(lens.tolist()):
        if n < 0:
            raise InvalidArgumentError(f"seq_lengths({b}) < 0")
        if n > x.shape[seq_dim]:
            raise InvalidArgumentError(f"seq_lengths({b}) > input.dims({seq_dim})")
        index: list[Any] = [slice(None)] * rank
        index[batch_dim] = b
        index[seq_dim] = slice(0, n)
        src = x[tuple(index)]
        seq_axis = seq_dim - (1 if batch_dim < seq_dim else 0)
        out[tuple(index)] = np.flip(src, seq_axis)
    return out


@one_output_kernel("Reverse")
def _reverse(k: KernelConstruction, x: np.ndarray, dims: np.ndarray) -> np.ndarray:
    flags = np.asarray(dims).reshape(-1).tolist()
    if np.ndim(dims) != 1 or len(flags) != np.ndim(x):
        raise InvalidArgumentError(
            f"'dims' must have the same number of values as 'input' has dimensions. "
            f"'input' has {np.ndim(x)}'dims' has {len(flags)} values"
        )
    axes = tuple(i for i, f in enumerate(flags) if f)
    return np.array(np.flip(x, axes)) if axes else np.array(x)


# ---------------------------------------------------------------------------------------
# OneHot, Where, Unique, InvertPermutation
# ---------------------------------------------------------------------------------------

register_op(
    "OneHot",
    inputs=["indices: TI", "depth: int32", "on_value: T", "off_value: T"],
    outputs=["output: T"],
    attrs=["axis: int = -1", "T: type", "TI: {uint8, int8, int32, int64} = DT_INT64"],
)


@register_kernel("OneHot")
def _one_hot(k: KernelConstruction):
    axis = k.attr("axis")

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        indices, depth_t, on, off = inputs
        rank = np.ndim(indices)
        if not (axis == -1 or 0 <= axis <= rank):
            raise InvalidArgumentError(
                f"Expected axis to be -1 or between [0, {rank + 1}).  But received: {axis}"
            )
        depth = scalar_int(depth_t, "depth")
        if depth < 0:
            raise InvalidArgumentError(f"depth must be non-negative, got: {depth}")
        memory.check_allocation(k, [*np.shape(indices), depth], np.asarray(on).dtype)
        hot = np.asarray(indices)[..., None] == np.arange(depth)
        out = np.where(hot, np.asarray(on)[()], np.asarray(off)[()]).astype(on.dtype)
        return [np.moveaxis(out, -1, axis) if axis != -1 else out]

    return compute


register_op(
    "Where",
    inputs=["input: T"],
    outputs=["index: int64"],
    attrs=[f"T: {{{_NUMBER_AND_QINT16}, bool}} = DT_BOOL"],
)


@one_output_kernel("Where")
def _where(k: KernelConstruction, x: np.ndarray) -> np.ndarray:
    return np.argwhere(np.asarray(x)).astype(np.int64)


register_op(
    "Unique",
    inputs=["x: T"],
    outputs=["y: T", "idx: out_idx"],
    attrs=["T: type", f"out_idx: {INDEX_TYPE} = DT_INT32"],
)
register_op(
    "UniqueWithCounts",
    inputs=["x: T"],
    outputs=["y: T", "idx: out_idx", "count: out_idx"],
    attrs=["T: type", f"out_idx: {INDEX_TYPE} = DT_INT32"],
)


def unique(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TensorFlow's Unique: values in order of first occurrence, the index of each input
    element in them, and the counts."""
    if np.ndim(x) != 1:
        raise InvalidArgumentError("unique expects a 1D vector.")
    first: dict = {}
    idx = np.empty(len(x), dtype=np.int64)
    for i, v in enumerate(x.tolist()):
        idx[i] = first.setdefault(v, len(first))
    y = np.array(list(first), dtype=x.dtype) if first else x[:0].copy()
    return y, idx, np.bincount(idx, minlength=len(first))


def _unique_kernel(with_counts: bool):
    def factory(k: KernelConstruction):
        out = np_type(k.attr("out_idx"))

        def compute(ctx: OpKernelContext, inputs: list) -> list:
            y, idx, count = unique(inputs[0])
            result = [y, idx.astype(out)]
            return result + [count.astype(out)] if with_counts else result

        return compute

    return factory


register_kernel("Unique")(_unique_kernel(False))
register_kernel("UniqueWithCounts")(_unique_kernel(True))

_AXIS_ATTRS = [f"Taxis: {INDEX_TYPE} = DT_INT64", f"out_idx: {INDEX_TYPE} = DT_INT32"]
register_op(
    "UniqueV2",
    inputs=["x: T", "axis: Taxis"],
    outputs=["y: T", "idx: out_idx"],
    attrs=["T: type", *_AXIS_ATTRS],
)
register_op(
    "UniqueWithCountsV2",
    inputs=["x: T", "axis: Taxis"],
    outputs=["y: T", "idx: out_idx", "count: out_idx"],
    attrs=["T: type", *_AXIS_ATTRS],
)


def unique_along(x: Any, axis_t: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TensorFlow's UniqueV2 (unique_op.cc): the distinct slices of `x` along the one axis
    `axis_t` holds (Unique's 1-D behaviour when it holds none), in order of first
    occurrence, the index of each slice in them, and the counts. Slices compare element by
    element, so a NaN never equals anything and -0.0 equals 0.0."""
    x, axis_t = np.asarray(x), np.asarray(axis_t)
    if axis_t.ndim != 1:
        raise InvalidArgumentError("axis expects a 1D vector.")
    if axis_t.size > 1:
        raise InvalidArgumentError("axis does not support input tensors larger than 1 elements")
    if axis_t.size == 0:
        return unique(x)
    axis = int(axis_t[0])
    axis = axis + x.ndim if axis < 0 else axis
    if not 0 <= axis < x.ndim:
        raise InvalidArgumentError(f"axis has to be between [0, {x.ndim})")
    moved = np.moveaxis(x, axis, 0)
    slices = moved.reshape(moved.shape[0], int(np.prod(moved.shape[1:])))
    first: dict = {}
    idx = np.empty(len(slices), dtype=np.int64)
    rows: list[int] = []
    for i, key in enumerate(map(tuple, slices.tolist())):
        idx[i] = first.setdefault(key, len(first))
        if idx[i] == len(rows):
            rows.append(i)
    y = np.moveaxis(moved[rows], 0, axis)
    return np.ascontiguousarray(y), idx, np.bincount(idx, minlength=len(first))


def _unique_v2_kernel(with_counts: bool):
    def factory(k: KernelConstruction):
        out = np_type(k.attr("out_idx"))

        def compute(ctx: OpKernelContext, inputs: list) -> list:
            y, idx, count = unique_along(inputs[0], inputs[1])
            result = [y, idx.astype(out)]
            return result + [count.astype(out)] if with_counts else result

        return compute

    return factory


register_kernel("UniqueV2")(_unique_v2_kernel(False))
register_kernel("UniqueWithCountsV2")(_unique_v2_kernel(True))

register_op(
    "InvertPermutation", inputs=["x: T"], outputs=["y: T"], attrs=[f"T: {INDEX_TYPE} = DT_INT32"]
)


@one_output_kernel("InvertPermutation")
def _invert_permutation(k: KernelConstruction, x: np.ndarray) -> np.ndarray:
    if np.ndim(x) != 1:
        raise InvalidArgumentError("invert_permutation expects a 1D vector.")
    n = len(x)
    y = np.full(n, -1, dtype=x.dtype)
    for i, d in enumerate(x.tolist()):
        if not 0 <= d < n:
            raise InvalidArgumentError(f"{d} is not between 0 and {n}")
        if y[d] != -1:
            raise InvalidArgumentError(f"{d} is duplicated in the input.")
        y[d] = i
    return y


# ---------------------------------------------------------------------------------------
# Diag, DiagPart, MatrixDiag
# ---------------------------------------------------------------------------------------

register_op("Diag", inputs=["diagonal: T"], outputs=["output: T"], attrs=[f"T: {_DIAG_TYPES}"])
register_op("DiagPart", inputs=["input: T"], outputs=["diagonal: T"], attrs=[f"T: {_DIAG_TYPES}"])
register_op("MatrixDiag", inputs=["diagonal: T"], outputs=["output: T"], attrs=["T: type"])


@one_output_kernel("Diag")
def _diag(k: KernelConstruction, d: np.ndarray) -> np.ndarray:
    if np.ndim(d) < 1:
        raise InvalidArgumentError("Input must be at least rank 1, got 0")
    n = d.size
    out = np.zeros((n, n), dtype=d.dtype)
    out[np.arange(n), np.arange(n)] = d.reshape(-1)
    return out.reshape(d.shape + d.shape)


@one_output_kernel("DiagPart")
def _diag_part(k: KernelConstruction, x: np.ndarray) -> np.ndarray:
    rank = np.ndim(x)
    half = x.shape[: rank // 2]
    if rank == 0 or rank % 2 or x.shape[rank // 2 :] != half:
        raise InvalidArgumentError(f"Invalid shape {shape_str(x.shape)}: dimensions must be equal")
    n = int(np.prod(half, dtype=np.int64))
    return np.ascontiguousarray(x.reshape(n, n).diagonal()).reshape(half)


@one_output_kernel("MatrixDiag")
def _matrix_diag(k: KernelConstruction, d: np.ndarray) -> np.ndarray:
    if np.ndim(d) < 1:
        raise InvalidArgumentError(
            f"diagonal must be at least 1-dim, but got shape: {shape_str(np.shape(d))}"
        )
    n = d.shape[-1]
    out = np.zeros(d.shape + (n,), dtype=d.dtype)
    out[..., np.arange(n), np.arange(n)] = d
    return out


# ---------------------------------------------------------------------------------------
# SpaceToDepth, DepthToSpace, Empty
# ---------------------------------------------------------------------------------------

_DATA_FORMAT = "data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'"
register_op(
    "SpaceToDepth",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: type", "block_size: int >= 2", _DATA_FORMAT],
)
register_op(
    "DepthToSpace",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: type", "block_size: int >= 2", _DATA_FORMAT],
)


def _nhwc_only(k: KernelConstruction) -> int:
    if k.attr("data_format") != "NHWC":
        raise UnimplementedError(
            f"{k.op} only supports NHWC on device type CPU, got {k.attr('data_format')}",
            k.node_name,
        )
    return k.attr("block_size")


@register_kernel("SpaceToDepth")
def _space_to_depth(k: KernelConstruction):
    bs = _nhwc_only(k)

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        x = inputs[0]
        if np.ndim(x) != 4:
            raise InvalidArgumentError(f"Input rank should be: 4 instead of: {np.ndim(x)}")
        b, h, w, c = x.shape
        if h % bs or w % bs:
            raise InvalidArgumentError(
                f"Image width {w} and height {h} should be divisible by block_size: {bs}"
            )
        y = x.reshape(b, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5)
        return [np.ascontiguousarray(y).reshape(b, h // bs, w // bs, bs * bs * c)]

    return compute


@register_kernel("DepthToSpace")
def _depth_to_space(k: KernelConstruction):
    bs = _nhwc_only(k)

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        x = inputs[0]
        if np.ndim(x) != 4:
            raise InvalidArgumentError(f"Input rank should be: 4 instead of: {np.ndim(x)}")
        b, h, w, c = x.shape
        if c % (bs * bs):
            raise InvalidArgumentError(
                f"Input depth dimension {c} should be divisible by: {bs * bs}"
            )
        y = x.reshape(b, h, w, bs, bs, c // (bs * bs)).transpose(0, 1, 3, 2, 4, 5)
        return [np.ascontiguousarray(y).reshape(b, h * bs, w * bs, c // (bs * bs))]

    return compute


register_op(
    "Empty",
    inputs=["shape: int32"],
    outputs=["output: dtype"],
    attrs=["dtype: type", "init: bool = false"],
    stateful=True,
)


@register_kernel("Empty")
def _empty(k: KernelConstruction):
    dt = np_type(k.attr("dtype"))

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        shape = as_int_list(inputs[0])
        if np.ndim(inputs[0]) != 1:
            raise InvalidArgumentError(
                f"shape must be a vector of int32, got shape {shape_str(np.shape(inputs[0]))}"
            )
        memory.check_allocation(k, shape, dt)
        if dt == np.dtype(object):
            out = np.empty(shape, dtype=object)
            out.fill(b"")
            return [out]
        return [np.zeros(shape, dtype=dt)]

    return compute
