"""Ops (executor stage): base and shape array ops — Const, Placeholder, Identity family,
CheckNumerics, EnsureShape, Shape/Size/Rank, Reshape, ExpandDims, Squeeze, broadcasting,
ZerosLike/OnesLike/Fill, Transpose.

Signatures are TensorFlow's (names, args, attrs, defaults, checked against TF's OpDefs in
tests); kernels are numpy with TensorFlow's semantics and error wording. Slicing, joining
and gathering live in `slicing_ops`; padding, tiling and friends in `transform_ops`.
Kernels never mutate their inputs. All kernels are pure functions of their inputs: safe
from any thread.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from common import dtypes, memory
from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops import variant_ops
from common.ops.registry import (
    KernelConstruction,
    OpKernelContext,
    one_output_kernel,
    register_kernel,
    register_op,
)
from common.tensor_shape import shape_string

INDEX_TYPE = "{int32, int64}"
# TensorFlow's TF_CALL_REAL_NUMBER_TYPES + complex + bool, as OnesLike spells it.
ONES_LIKE_TYPES = (
    "{bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, "
    "uint64, complex64, complex128, bool}"
)


# ---------------------------------------------------------------------------------------
# Shared helpers (used by the other array-op modules too)
# ---------------------------------------------------------------------------------------


def np_type(dt: DataType) -> np.dtype:
    return dtypes.as_numpy(dt)


def shape_str(shape: Sequence[int]) -> str:
    """TensorFlow's TensorShape::DebugString: "[2,3]"."""
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def as_int_list(value: Any) -> list[int]:
    arr = np.asarray(value)
    if arr.dtype.kind in "iu":
        return arr.reshape(-1).tolist()  # Python ints, without a loop over numpy scalars
    return [int(v) for v in arr.reshape(-1)]


def scalar_int(value: Any, what: str) -> int:
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu":
        return int(value)  # the usual case (a Const axis), checked by its shape
    arr = np.asarray(value)
    if arr.size != 1:
        raise InvalidArgumentError(f"{what} must be a scalar, but got shape {shape_str(arr.shape)}")
    return int(arr.reshape(-1)[0])


def canonical_axis(axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < max(rank, 1):
        raise InvalidArgumentError(
            f"Expected {what} in the range [{-rank}, {rank}), but got {axis}"
        )
    return axis + rank if axis < 0 else axis


def frozen(array: np.ndarray) -> np.ndarray:
    """`array`, marked read-only: it is shared with every consumer."""
    array.setflags(write=False)
    return array


# ---------------------------------------------------------------------------------------
# Const and placeholders
# ---------------------------------------------------------------------------------------

register_op("Const", outputs=["output: dtype"], attrs=["value: tensor", "dtype: type"])


@register_kernel("Const")
def _const(k: KernelConstruction):
    value = k.attr("value")
    if not isinstance(value, np.ndarray):  # a TensorProto: decode once, here
        from common.tensor import to_numpy

        value = to_numpy(value)
    dt = k.attr("dtype")
    if value.dtype != np_type(dt):  # TensorFlow's ConstantOp refuses it at registration
        try:
            got = dtypes.tf_name(dtypes.from_numpy(value.dtype))
        except (InvalidArgumentError, TypeError, KeyError):
            got = str(value.dtype)
        raise InvalidArgumentError(
            f"Type mismatch between value ({got}) and dtype ({dtypes.tf_name(dt)})",
            k.node_name,
        )
    if value.flags.writeable:  # decoded protos are already read-only and ours alone
        value = frozen(np.array(value, copy=True))

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [value]

    return compute


register_op(
    "Placeholder",
    outputs=["output: dtype"],
    attrs=["dtype: type", "shape: shape = { unknown_rank: true }"],
)
register_op("PlaceholderV2", outputs=["output: dtype"], attrs=["dtype: type", "shape: shape"])
register_op(
    "PlaceholderWithDefault",
    inputs=["input: dtype"],
    outputs=["output: dtype"],
    attrs=["dtype: type", "shape: shape"],
)


def _placeholder(k: KernelConstruction):
    dt, shape = k.attr("dtype"), k.attrs.get("shape")
    message = (
        f"You must feed a value for placeholder tensor '{k.node_name}' with dtype "
        f"{dtypes.tf_name(dt)}"
    )
    if shape is not None:
        message += f" and shape {shape_string(shape)}"

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        raise InvalidArgumentError(message)

    return compute


register_kernel("Placeholder")(_placeholder)
register_kernel("PlaceholderV2")(_placeholder)

# ---------------------------------------------------------------------------------------
# Identity family
# ---------------------------------------------------------------------------------------


def _identity(k: KernelConstruction):
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [inputs[0]]

    return compute


register_op("Identity", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"])
register_op("IdentityN", inputs=["input: T"], outputs=["output: T"], attrs=["T: list(type) >= 1"])
register_op("StopGradient", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"])
register_op(
    "PreventGradient",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: type", "message: string = ''"],
)
register_op("Snapshot", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"])
# RefIdentity forwards the variable itself (control_flow_ops.with_dependencies on a ref).
register_op(
    "RefIdentity",
    inputs=["input: Ref(T)"],
    outputs=["output: Ref(T)"],
    attrs=["T: type"],
    allows_uninitialized_input=True,
)

for _op in (
    "Identity",
    "RefIdentity",
    "StopGradient",
    "PreventGradient",
    "Snapshot",
    "PlaceholderWithDefault",
):
    register_kernel(_op)(_identity)


@register_kernel("IdentityN")
def _identity_n(k: KernelConstruction):
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return list(inputs)

    return compute


register_op(
    "CheckNumerics",
    inputs=["tensor: T"],
    outputs=["output: T"],
    attrs=["T: {bfloat16, half, float, double}", "message: string"],
    stateful=True,
)


@register_kernel("CheckNumerics")
def _check_numerics(k: KernelConstruction):
    message = k.attr("message")

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        x = inputs[0]
        wide = np.asarray(x, dtype=np.float64) if x.dtype.kind != "f" else x
        has_nan, has_inf = bool(np.isnan(wide).any()), bool(np.isinf(wide).any())
        if has_nan or has_inf:
            what = "Inf and NaN" if has_nan and has_inf else ("NaN" if has_nan else "Inf")
            raise InvalidArgumentError(f"{message} : Tensor had {what} values")
        return [x]

    return compute


register_op(
    "EnsureShape", inputs=["input: T"], outputs=["output: T"], attrs=["shape: shape", "T: type"]
)


def shape_compatible(actual: Sequence[int], expected: Sequence[int | None] | None) -> bool:
    if expected is None:
        return True
    return len(actual) == len(expected) and all(
        e is None or e == a for a, e in zip(actual, expected)
    )


@register_kernel("EnsureShape")
def _ensure_shape(k: KernelConstruction):
    expected = k.attr("shape")

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        x = inputs[0]
        if not shape_compatible(x.shape, expected):
            raise InvalidArgumentError(
                f"Shape of tensor input {shape_str(x.shape)} is not compatible with "
                f"expected shape {shape_string(expected)}."
            )
        return [x]

    return compute


# ---------------------------------------------------------------------------------------
# Shape, ShapeN, Size, Rank
# ---------------------------------------------------------------------------------------

register_op(
    "Shape",
    inputs=["input: T"],
    outputs=["output: out_type"],
    attrs=["T: type", f"out_type: {INDEX_TYPE} = DT_INT32"],
)
register_op(
    "ShapeN",
    inputs=["input: N * T"],
    outputs=["output: N * out_type"],
    attrs=["N: int >= 1", "T: type", f"out_type: {INDEX_TYPE} = DT_INT32"],
)
register_op(
    "Size",
    inputs=["input: T"],
    outputs=["output: out_type"],
    attrs=["T: type", f"out_type: {INDEX_TYPE} = DT_INT32"],
)
register_op("Rank", inputs=["input: T"], outputs=["output: int32"], attrs=["T: type"])


@one_output_kernel("Shape")
def _shape(k: KernelConstruction, x: np.ndarray) -> np.ndarray:
    return np.array(np.shape(x), dtype=np_type(k.attr("out_type")))


@register_kernel("ShapeN")
def _shape_n(k: KernelConstruction):
    out = np_type(k.attr("out_type"))

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [np.array(np.shape(x), dtype=out) for x in inputs]

    return compute


@one_output_kernel("Size")
def _size(k: KernelConstruction, x: np.ndarray) -> np.ndarray:
    return np.array(np.size(x), dtype=np_type(k.attr("out_type")))


@one_output_kernel("Rank")
def _rank(k: KernelConstruction, x: np.ndarray) -> np.ndarray:
    return np.array(np.ndim(x), dtype=np.int32)


# ---------------------------------------------------------------------------------------
# Reshape, ExpandDims, Squeeze
# ---------------------------------------------------------------------------------------

register_op(
    "Reshape",
    inputs=["tensor: T", "shape: Tshape"],
    outputs=["output: T"],
    attrs=["T: type", f"Tshape: {INDEX_TYPE} = DT_INT32"],
)


def reshape_target(in_shape: Sequence[int], sizes: Sequence[int]) -> tuple[int, ...]:
    """TensorFlow's Reshape shape resolution (one -1 allowed, zero-size rules)."""
    out, unknown, product = [], -1, 1
    for d, size in enumerate(sizes):
        if size == -1:
            if unknown != -1:
                raise InvalidArgumentError(
                    f"Only one input size may be -1, not both {unknown} and {d}"
                )
            unknown = d
            out.append(1)
        elif size < 0:
            raise InvalidArgumentError(f"Size {d} must be non-negative, not {size}")
        else:
            out.append(size)
            product *= size if size else 1
    n = math.prod(in_shape)
    if unknown != -1:
        # Zero-sized dims are left out of both products when the requested shape has one,
        # so the other dims can still be inferred (TensorFlow's rule).
        sizes_have_zero = 0 in out
        known_in = [d for d in in_shape if d or not sizes_have_zero]
        input_has_zero = len(known_in) != len(in_shape)
        input_n = math.prod(known_in)
        missing = input_n // product
        if not input_has_zero and missing * product != input_n:
            raise InvalidArgumentError(
                f"Input to reshape is a tensor with {n} values, but the requested shape "
                f"requires a multiple of {product}"
            )
        out[unknown] = missing
    total = math.prod(out)
    if total != n:
        raise InvalidArgumentError(
            f"Input to reshape is a tensor with {n} values, but the requested shape has {total}"
        )
    return tuple(out)


@one_output_kernel("Reshape")
def _reshape(k: KernelConstruction, x: np.ndarray, shape: np.ndarray) -> np.ndarray:
    if np.ndim(shape) > 1:
        raise InvalidArgumentError(
            f"shape must be a vector of {{int32,int64}}, got shape {shape_str(np.shape(shape))}"
        )
    return np.reshape(x, reshape_target(np.shape(x), as_int_list(shape)))


register_op(
    "ExpandDims",
    inputs=["input: T", "dim: Tdim"],
    outputs=["output: T"],
    attrs=["T: type", f"Tdim: {INDEX_TYPE} = DT_INT32"],
)


@one_output_kernel("ExpandDims")
def _expand_dims(k: KernelConstruction, x: np.ndarray, dim: np.ndarray) -> np.ndarray:
    if np.size(dim) != 1:
        raise InvalidArgumentError(
            f"'dim' must be a tensor with a single value, got shape {shape_str(np.shape(dim))}"
        )
    d, rank = int(np.asarray(dim).reshape(-1)[0]), np.ndim(x)
    if not -1 - rank <= d <= rank:
        raise InvalidArgumentError(
            f"Tried to expand dim index {d} for tensor with {rank} dimensions."
        )
    return np.expand_dims(x, d if d >= 0 else d + rank + 1)


register_op(
    "Squeeze",
    inputs=["input: T"],
    outputs=["output: T"],
    attrs=["T: type", "squeeze_dims: list(int) >= 0 = []"],
)


@register_kernel("Squeeze")
def _squeeze(k: KernelConstruction):
    dims = list(k.attr("squeeze_dims"))

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        x = inputs[0]
        shape, rank = np.shape(x), np.ndim(x)
        if not dims:
            return [np.reshape(x, [d for d in shape if d != 1])]
        axes = set()
        for d in dims:
            if not -rank <= d < rank:
                raise InvalidArgumentError(
                    f"Tried to squeeze dim index {d} for tensor with {rank} dimensions."
                )
            a = d + rank if d < 0 else d
            if shape[a] != 1:
                raise InvalidArgumentError(
                    f"Can not squeeze dim[{a}], expected a dimension of 1, got {shape[a]}"
                )
            axes.add(a)
        return [np.reshape(x, [s for i, s in enumerate(shape) if i not in axes])]

    return compute


# ---------------------------------------------------------------------------------------
# Broadcasting
# ---------------------------------------------------------------------------------------

register_op(
    "BroadcastTo",
    inputs=["input: T", "shape: Tidx"],
    outputs=["output: T"],
    attrs=["T: type", f"Tidx: {INDEX_TYPE} = DT_INT32"],
)
register_op(
    "BroadcastArgs",
    inputs=["s0: T", "s1: T"],
    outputs=["r0: T"],
    attrs=[f"T: {INDEX_TYPE} = DT_INT32"],
)
register_op(
    "BroadcastGradientArgs",
    inputs=["s0: T", "s1: T"],
    outputs=["r0: T", "r1: T"],
    attrs=[f"T: {INDEX_TYPE} = DT_INT32"],
)


def broadcast_shape(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        raise InvalidArgumentError(
            f"Incompatible shapes: {shape_str(a)} vs. {shape_str(b)}"
        ) from None


@one_output_kernel("BroadcastTo")
def _broadcast_to(k: KernelConstruction, x: np.ndarray, shape: np.ndarray) -> np.ndarray:
    target = tuple(as_int_list(shape))
    if broadcast_shape(np.shape(x), target) != target:
        raise InvalidArgumentError(
            f"Unable to broadcast tensor of shape {shape_str(np.shape(x))} to tensor of "
            f"shape {shape_str(target)}"
        )
    memory.check_allocation(k, target, np.asarray(x).dtype)
    return np.array(np.broadcast_to(x, target))


@one_output_kernel("BroadcastArgs")
def _broadcast_args(k: KernelConstruction, s0: np.ndarray, s1: np.ndarray) -> np.ndarray:
    return np.array(broadcast_shape(as_int_list(s0), as_int_list(s1)), dtype=s0.dtype)


def broadcast_gradient_args(s0: Sequence[int], s1: Sequence[int]) -> tuple[list[int], list[int]]:
    """TensorFlow's BCast reduction indices: the output dims each input was broadcast
    along (a padded 1 counts); identical shapes reduce nothing."""
    s0, s1 = list(s0), list(s1)
    broadcast_shape(s0, s1)
    if s0 == s1:
        return [], []
    rank = max(len(s0), len(s1))
    p0 = [1] * (rank - len(s0)) + s0
    p1 = [1] * (rank - len(s1)) + s1
    return [i for i in range(rank) if p0[i] == 1], [i for i in range(rank) if p1[i] == 1]


@register_kernel("BroadcastGradientArgs")
def _broadcast_gradient_args(k: KernelConstruction):
    out = np_type(k.attr("T"))

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        r0, r1 = broadcast_gradient_args(as_int_list(inputs[0]), as_int_list(inputs[1]))
        return [np.array(r0, dtype=out), np.array(r1, dtype=out)]

    return compute


# ---------------------------------------------------------------------------------------
# ZerosLike, OnesLike, Fill
# ---------------------------------------------------------------------------------------

register_op("ZerosLike", inputs=["x: T"], outputs=["y: T"], attrs=["T: type"])
register_op("OnesLike", inputs=["x: T"], outputs=["y: T"], attrs=[f"T: {ONES_LIKE_TYPES}"])
register_op(
    "Fill",
    inputs=["dims: index_type", "value: T"],
    outputs=["output: T"],
    attrs=["T: type", f"index_type: {INDEX_TYPE} = DT_INT32"],
)


@one_output_kernel("ZerosLike")
def _zeros_like(k: KernelConstruction, x: np.ndarray) -> np.ndarray:
    if k.attr("T") == DataType.DT_VARIANT:  # the variant's own zeros (TensorList, Optional)
        return variant_ops.zeros_like_variant(np.asarray(x), k.node_name)
    if x.dtype == object:
        out = np.empty(np.shape(x), dtype=object)
        out.fill(b"")
        return out
    return np.zeros_like(x)


@one_output_kernel("OnesLike")
def _ones_like(k: KernelConstruction, x: np.ndarray) -> np.ndarray:
    return np.ones_like(x)


@one_output_kernel("Fill")
def _fill(k: KernelConstruction, dims: np.ndarray, value: np.ndarray) -> np.ndarray:
    if np.ndim(dims) != 1:
        raise InvalidArgumentError(f"dims must be a vector, got shape {shape_str(np.shape(dims))}")
    if np.ndim(value) != 0:
        raise InvalidArgumentError(
            f"value must be a scalar, got shape {shape_str(np.shape(value))}"
        )
    shape = as_int_list(dims)
    for d in shape:
        if d < 0:
            raise InvalidArgumentError(f"Dimension {d} must be >= 0")
    value = np.asarray(value)
    memory.check_allocation(k, shape, value.dtype)
    out = np.empty(shape, dtype=value.dtype)
    out.fill(value[()])
    return out


# ---------------------------------------------------------------------------------------
# Transpose
# ---------------------------------------------------------------------------------------

register_op(
    "Transpose",
    inputs=["x: T", "perm: Tperm"],
    outputs=["y: T"],
    attrs=["T: type", f"Tperm: {INDEX_TYPE} = DT_INT32"],
)
register_op(
    "ConjugateTranspose",
    inputs=["x: T", "perm: Tperm"],
    outputs=["y: T"],
    attrs=["T: type", f"Tperm: {INDEX_TYPE} = DT_INT32"],
)


def check_permutation(perm: list[int], rank: int) -> None:
    if len(perm) != rank:
        raise InvalidArgumentError(
            f"transpose expects a vector of size {rank}. But input(1) is a vector of size "
            f"{len(perm)}"
        )
    seen = [False] * rank
    for d in perm:
        if not 0 <= d < rank:
            raise InvalidArgumentError(f"{d} is out of range [0 .. {rank})")
        seen[d] = True
    for i, ok in enumerate(seen):
        if not ok:
            raise InvalidArgumentError(f"{i} is missing from {{{','.join(str(d) for d in perm)}}}.")


def _transpose_kernel(conjugate: bool):
    def factory(k: KernelConstruction):
        def compute(ctx: OpKernelContext, inputs: list) -> list:
            x, perm = inputs[0], as_int_list(inputs[1])
            check_permutation(perm, np.ndim(x))
            y = np.ascontiguousarray(np.transpose(x, perm))
            return [np.conj(y) if conjugate and y.dtype.kind == "c" else y]

        return compute

    return factory


register_kernel("Transpose")(_transpose_kernel(False))
register_kernel("ConjugateTranspose")(_transpose_kernel(True))
