"""Client, graph building: static shape inference for the ops the client exposes.

`SHAPE_FNS[op_type](op) -> [output shapes]` mirrors TensorFlow's C++ shape functions for
the common ops: unknown where TF would not know, `ShapeError` (reported as TF's
"... for '{{node n}} = ...' with input shapes: ..." ValueError) where TF rejects the
graph. `constant_value(t)` is TF's tensor_util.constant_value: folds Const, Shape of a
fully known shape, Pack/Cast/Identity of constants. Pure; safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from client.framework.tensor_shape import TensorShape
from common import attr_value as _attr_value
from common import tensor as _tensor

Shape = TensorShape
UNKNOWN = TensorShape(None)
SHAPE_FNS: dict[str, Callable[[Any], list[Any]]] = {}


class ShapeError(Exception):
    """A shape function rejected its inputs (message in TF's words)."""


def _reg(*names: str):
    def deco(fn):
        for n in names:
            SHAPE_FNS[n] = fn
        return fn

    return deco


def _attr(op: Any, name: str) -> Any:
    return _attr_value.to_python(op._attrs[name]) if name in op._attrs else None


def constant_value(t: Any) -> np.ndarray | None:
    """The value of `t` if it is known while building the graph, else None."""
    op = t.op
    if op.type == "Const":
        v = op._constant_value
        if v is None:
            v = _tensor.to_numpy(op._attrs["value"].tensor)
            op._constant_value = v
        return v
    if op.type == "Shape" and op.inputs[0].shape.is_fully_defined():
        return np.array(op.inputs[0].shape.as_list(), dtype=op.outputs[0].dtype.as_numpy_dtype)
    if op.type == "Size" and op.inputs[0].shape.is_fully_defined():
        return np.array(op.inputs[0].shape.num_elements(), dtype=op.outputs[0].dtype.as_numpy_dtype)
    if op.type == "Rank" and op.inputs[0].shape.ndims is not None:
        return np.array(op.inputs[0].shape.ndims, dtype=np.int32)
    if op.type == "Range":
        vals = _constant_values(op.inputs)
        if vals is None:
            return None
        start, limit, delta = (v.item() for v in vals)
        return np.arange(start, limit, delta, dtype=op.outputs[0].dtype.as_numpy_dtype)
    if op.type in ("Identity", "StopGradient"):
        return constant_value(op.inputs[0])
    if op.type == "Cast":
        v = constant_value(op.inputs[0])
        return None if v is None else v.astype(op.outputs[0].dtype.as_numpy_dtype)
    if op.type == "Pack":
        vals = _constant_values(op.inputs)
        return None if vals is None else np.stack(vals, axis=_attr(op, "axis"))
    return None


# What TensorFlow's shape refiner evaluates of a small constant subgraph when a shape
# function asks for an input's value (its EvaluateConstantTensor): more than Python's
# constant_value, which TF's Python code (and so the client's) uses for its own choices.
_FOLDABLE: dict[str, Any] = {
    "Add": np.add,
    "AddV2": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "RealDiv": np.divide,
    "Minimum": np.minimum,
    "Maximum": np.maximum,
    "Round": np.round,
    "GreaterEqual": np.greater_equal,
    "Select": np.where,
}


def evaluated_value(t: Any) -> np.ndarray | None:
    """The value TF's shape inference finds for `t` (constant_value, then folding), or None."""
    value = constant_value(t)
    if value is not None:
        return value
    op = t.op
    if op.type == "Identity":  # a with_dependencies: the refiner folds through it
        return evaluated_value(op.inputs[0])
    folded = (
        *_FOLDABLE,
        "Cast",
        "Pack",
        "ConcatV2",
        "ExpandDims",
        "StridedSlice",
        "ListDiff",
        "GatherV2",
        "Prod",
        "Cumsum",
    )
    if op.type not in folded:
        return None
    found = [evaluated_value(x) for x in op.inputs]
    inputs = [v for v in found if v is not None]
    if len(inputs) != len(found):
        return None
    out_type = op.outputs[0].dtype.as_numpy_dtype
    if op.type == "Cast":
        return inputs[0].astype(out_type)
    if op.type == "Pack":
        return np.stack(inputs, axis=_attr(op, "axis"))
    if op.type == "ConcatV2":
        return np.concatenate(inputs[:-1], axis=int(inputs[-1]))
    if op.type == "ExpandDims":
        return np.expand_dims(inputs[0], int(inputs[1]))
    if op.type == "GatherV2":
        if _attr(op, "batch_dims"):
            return None
        return np.take(inputs[0], inputs[1], axis=int(inputs[2]))
    if op.type == "Prod":
        axes = tuple(int(a) for a in np.ravel(inputs[1]))
        return np.prod(inputs[0], axis=axes, keepdims=_attr(op, "keep_dims")).astype(out_type)
    if op.type == "Cumsum" and not _attr(op, "exclusive") and not _attr(op, "reverse"):
        return np.cumsum(inputs[0], axis=int(inputs[1])).astype(out_type)
    if op.type == "ListDiff":
        keep = ~np.isin(inputs[0], inputs[1])
        out = inputs[0][keep] if t.value_index == 0 else np.flatnonzero(keep)
        return out.astype(t.dtype.as_numpy_dtype)
    if op.type == "StridedSlice":
        masks = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
        index = strided_slice_index(
            *(list(v) for v in inputs[1:]), **{k: _attr(op, k) for k in masks}
        )
        return np.asarray(inputs[0][index])
    return np.asarray(_FOLDABLE[op.type](*inputs)).astype(out_type)


def _shape_from_tensor(t: Any) -> TensorShape:
    """TF's MakeShapeFromShapeTensor: a 1-D shape tensor as a partial shape."""
    v = evaluated_value(t)
    if v is not None:
        return TensorShape([None if d < 0 else int(d) for d in np.reshape(v, [-1])])
    if t.op.type == "Pack":
        return TensorShape([_scalar_dim(x) for x in t.op.inputs])
    if t.op.type == "Shape":
        return t.op.inputs[0].shape
    if t.op.type == "ConcatV2":
        parts = [_shape_from_tensor(x) for x in t.op.inputs[:-1]]
        if any(p.ndims is None for p in parts):
            return UNKNOWN
        return TensorShape([d for p in parts for d in p.as_list()])
    if t.shape.ndims == 1 and t.shape[0] is not None:
        return TensorShape([None] * t.shape[0])
    return UNKNOWN


def _scalar_dim(t: Any) -> int | None:
    v = evaluated_value(t)
    return None if v is None or int(v) < 0 else int(v)


def _in(op: Any, i: int = 0) -> TensorShape:
    return op.inputs[i].shape


# -- elementwise ----------------------------------------------------------------------------
UNARY = [
    "ReverseSequence",
    "ReverseV2",
    "Identity",
    "StopGradient",
    "Neg",
    "Abs",
    "Exp",
    "Log",
    "Log1p",
    "Sqrt",
    "Rsqrt",
    "Square",
    "Sigmoid",
    "Tanh",
    "Relu",
    "Relu6",
    "Elu",
    "Selu",
    "Softplus",
    "Softsign",
    "Sign",
    "Floor",
    "Ceil",
    "Round",
    "Rint",
    "Reciprocal",
    "Inv",
    "Sin",
    "Cos",
    "Tan",
    "Erf",
    "LogicalNot",
    "IsNan",
    "IsInf",
    "IsFinite",
    "Cast",
    "ZerosLike",
    "OnesLike",
    "Snapshot",
    "PreventGradient",
    "Softmax",
    "LogSoftmax",
    "CheckNumerics",
    "Invert",
    "Expm1",
    "Cumsum",
    "Cumprod",
    "LeakyRelu",
    "ReluGrad",
    "Relu6Grad",
    "EluGrad",
    "SeluGrad",
    "SoftplusGrad",
    "SoftsignGrad",
    "LeakyReluGrad",
    "Enter",
    "RefEnter",
    "Exit",
    "RefExit",
    "NextIteration",
    "RefNextIteration",
    "BiasAdd",
    "BiasAddV1",
    "ClipByValue",
    "Conj",
    "Real",
    "Imag",
    "ComplexAbs",
]


def _constant_values(tensors: Any) -> list[np.ndarray] | None:
    """The constant values of all `tensors`, or None if one is not known."""
    vals = [constant_value(t) for t in tensors]
    known = [v for v in vals if v is not None]
    return known if len(known) == len(vals) else None


@_reg(*UNARY)
def _unary(op: Any) -> list[Any]:
    return [_in(op)]


def broadcast_shapes(a: TensorShape, b: TensorShape) -> TensorShape:
    """TF's BroadcastBinaryOpOutputShapeFn."""
    if a.ndims is None or b.ndims is None:
        return UNKNOWN
    x, y = a.as_list(), b.as_list()
    n = max(len(x), len(y))
    x[:0] = [1] * (n - len(x))
    y[:0] = [1] * (n - len(y))
    out: list[int | None] = []
    for dx, dy in zip(x, y):
        if dx == 1:
            out.append(dy)
        elif dy == 1:
            out.append(dx)
        elif dx is None or dy is None:
            out.append(dy if dx is None else dx)
        elif dx != dy:
            raise ShapeError(f"Dimensions must be equal, but are {dx} and {dy}")
        else:
            out.append(dx)
    return TensorShape(out)


BINARY = [
    "Add",
    "AddV2",
    "Sub",
    "Mul",
    "Div",
    "RealDiv",
    "FloorDiv",
    "FloorMod",
    "Mod",
    "TruncateDiv",
    "TruncateMod",
    "Pow",
    "Maximum",
    "Minimum",
    "SquaredDifference",
    "Equal",
    "NotEqual",
    "Less",
    "LessEqual",
    "Greater",
    "GreaterEqual",
    "LogicalAnd",
    "LogicalOr",
    "DivNoNan",
    "MulNoNan",
    "Atan2",
    "Xdivy",
    "Xlogy",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "SigmoidGrad",
    "TanhGrad",
    "SqrtGrad",
    "RsqrtGrad",
    "ReciprocalGrad",
    "InvGrad",
]


@_reg(*BINARY)
def _binary(op: Any) -> list[Any]:
    return [broadcast_shapes(_in(op, 0), _in(op, 1))]


@_reg("Select", "SelectV2")
def _select(op: Any) -> list[Any]:
    if op.type == "SelectV2":
        return [broadcast_shapes(broadcast_shapes(_in(op, 0), _in(op, 1)), _in(op, 2))]
    return [_in(op, 1).merge_with(_in(op, 2))]


@_reg("AddN")
def _add_n(op: Any) -> list[Any]:
    s = UNKNOWN
    for t in op.inputs:
        if not s.is_compatible_with(t.shape):
            raise ShapeError(
                f"Shapes must be equal rank, but are {t.shape.ndims} and {s.ndims}"
                if s.ndims != t.shape.ndims
                else f"Dimension 0 in both shapes must be equal, but are {s[0]} and {t.shape[0]}"
            )
        s = s.merge_with(t.shape)
    return [s]


# -- sources ------------------------------------------------------------------------------
@_reg("Placeholder", "PlaceholderV2")
def _placeholder(op: Any) -> list[Any]:
    return [TensorShape(_attr(op, "shape"))]


def _attr_shape_of_input(op: Any) -> Any:
    """The op's `shape` attr, which its input's shape must be compatible with."""
    shape = TensorShape(_attr(op, "shape"))
    if not _in(op).is_compatible_with(shape):
        raise ShapeError(
            f"Shapes {_in(op).debug_string()} and {shape.debug_string()} are incompatible"
        )
    return shape


@_reg("PlaceholderWithDefault")
def _placeholder_with_default(op: Any) -> list[Any]:
    return [_attr_shape_of_input(op)]


@_reg("EnsureShape")
def _ensure_shape(op: Any) -> list[Any]:
    return [_in(op).merge_with(_attr_shape_of_input(op))]


@_reg("Const")
def _const(op: Any) -> list[Any]:
    return [TensorShape([d.size for d in op._attrs["value"].tensor.tensor_shape.dim])]


@_reg(
    "VarHandleOp",
    "LoopCond",
    "Size",
    "Rank",
    "L2Loss",
    "VarIsInitializedOp",
    "IsVariableInitialized",
)
def _scalar(op: Any) -> list[Any]:
    return [TensorShape([])]


# Handle data (a resource handle's element shape) as TF's shape functions forward it: these
# ops pass their input's on (Merge does not).
_FORWARDS_HANDLE_DATA = (
    "Identity",
    "Enter",
    "RefEnter",
    "Switch",
    "RefSwitch",
    "TensorArrayGradV3",
)


def handle_shape(handle: Any) -> TensorShape | None:
    """The shape a resource handle carries as handle data, or None: a variable's shape
    (set on its VarHandleOp's output), or the element shape TensorArrayV3's shape function
    gives its handle (the element_shape attr when fully defined or
    identical_element_shapes), followed through the ops that forward it."""
    while handle.op.type in _FORWARDS_HANDLE_DATA:
        handle = handle.op.inputs[0]
    shape = getattr(handle, "_handle_shape", None)
    if shape is not None or handle.op.type != "TensorArrayV3":
        return shape
    shape = TensorShape(_attr(handle.op, "element_shape"))
    identical = _attr(handle.op, "identical_element_shapes")
    return shape if shape.is_fully_defined() or identical else None


@_reg("ReadVariableOp", "TensorArrayReadV3")
def _read_handle(op: Any) -> list[Any]:
    return [handle_shape(op.inputs[0]) or UNKNOWN]


@_reg("TensorArrayV3", "TensorArrayGradV3")
def _tensor_array(op: Any) -> list[Any]:
    return [TensorShape([2]), TensorShape([])]


@_reg("TensorArrayWriteV3", "TensorArrayScatterV3", "TensorArraySplitV3", "TensorArraySizeV3")
def _tensor_array_flow(op: Any) -> list[Any]:
    return [TensorShape([])]


@_reg("TensorArrayGatherV3")
def _tensor_array_gather(op: Any) -> list[Any]:
    element = handle_shape(op.inputs[0])
    if element is None:
        return [UNKNOWN]
    indices = _in(op, 1)
    n = indices[0] if indices.ndims else None
    return [TensorShape([n]).concatenate(element)]


@_reg("TensorArrayConcatV3")
def _tensor_array_concat(op: Any) -> list[Any]:
    return [UNKNOWN, TensorShape([None])]


@_reg("Shape")
def _shape(op: Any) -> list[Any]:
    return [TensorShape([_in(op).ndims])]


@_reg("ShapeN")
def _shape_n(op: Any) -> list[Any]:
    return [TensorShape([x.shape.ndims]) for x in op.inputs]


@_reg("BroadcastTo")
def _broadcast_to(op: Any) -> list[Any]:
    return [_shape_from_tensor(op.inputs[1])]


@_reg("Fill")
def _fill(op: Any) -> list[Any]:
    return [_shape_from_tensor(op.inputs[0])]


@_reg("RandomStandardNormal", "RandomUniform", "TruncatedNormal", "RandomUniformInt")
def _random(op: Any) -> list[Any]:
    return [_shape_from_tensor(op.inputs[0])]


@_reg("Range")
def _range(op: Any) -> list[Any]:
    vals = _constant_values(op.inputs)
    if vals is None:
        return [TensorShape([None])]
    start, limit, delta = (v.item() for v in vals)
    if delta == 0:
        raise ShapeError("Requires delta != 0")
    n = int(np.ceil((limit - start) / delta)) if (limit - start) / delta > 0 else 0
    return [TensorShape([n])]


# -- linear algebra -----------------------------------------------------------------------
@_reg("MatMul")
def _matmul(op: Any) -> list[Any]:
    a, b = _in(op, 0), _in(op, 1)
    for s in (a, b):
        if s.ndims is not None and s.ndims != 2:
            raise ShapeError(f"Shape must be rank 2 but is rank {s.ndims}")
    a = a if a.ndims is not None else TensorShape([None, None])
    b = b if b.ndims is not None else TensorShape([None, None])
    ta, tb = _attr(op, "transpose_a"), _attr(op, "transpose_b")
    m, k1 = (a[1], a[0]) if ta else (a[0], a[1])
    k2, n = (b[1], b[0]) if tb else (b[0], b[1])
    if k1 is not None and k2 is not None and k1 != k2:
        raise ShapeError(f"Dimensions must be equal, but are {k1} and {k2}")
    return [TensorShape([m, n])]


@_reg("BatchMatMulV2", "BatchMatMulV3")
def _batch_matmul(op: Any) -> list[Any]:
    a, b = _in(op, 0), _in(op, 1)
    if a.ndims is None or b.ndims is None:
        return [UNKNOWN]
    ta, tb = _attr(op, "adj_x"), _attr(op, "adj_y")
    m, k1 = (a[-1], a[-2]) if ta else (a[-2], a[-1])
    k2, n = (b[-1], b[-2]) if tb else (b[-2], b[-1])
    if k1 is not None and k2 is not None and k1 != k2:
        raise ShapeError(f"Dimensions must be equal, but are {k1} and {k2}")
    batch = broadcast_shapes(a[:-2], b[:-2])
    return [batch.concatenate([m, n])]


# -- reductions ---------------------------------------------------------------------------
@_reg("Sum", "Mean", "Max", "Min", "Prod", "Any", "All", "EuclideanNorm")
def _reduce(op: Any) -> list[Any]:
    s = _in(op)
    keep = _attr(op, "keep_dims")
    axes = constant_value(op.inputs[1])
    if axes is None or s.ndims is None:
        if s.ndims is not None and keep:
            return [TensorShape([None] * s.ndims)]
        return [UNKNOWN]
    rank = s.ndims
    norm = set()
    for a in np.reshape(axes, [-1]):
        a = int(a)
        if a < -rank or a >= rank:
            raise ShapeError(f"Invalid reduction dimension {a} for input with {rank} dimensions.")
        norm.add(a % rank if rank else a)
    dims = s.as_list()
    if keep:
        return [TensorShape([1 if i in norm else d for i, d in enumerate(dims)])]
    return [TensorShape([d for i, d in enumerate(dims) if i not in norm])]


@_reg("ArgMax", "ArgMin")
def _argmax(op: Any) -> list[Any]:
    s = _in(op)
    axis = constant_value(op.inputs[1])
    if axis is None or s.ndims is None:
        return [UNKNOWN if s.ndims is None else TensorShape([None] * (s.ndims - 1))]
    a = int(axis) % s.ndims
    return [TensorShape([d for i, d in enumerate(s.as_list()) if i != a])]


# -- array ops ----------------------------------------------------------------------------
@_reg("Reshape")
def _reshape(op: Any) -> list[Any]:
    s = _in(op)
    target = _shape_from_tensor(op.inputs[1])
    if target.ndims is None:
        return [UNKNOWN]
    dims = target.as_list()
    v = constant_value(op.inputs[1])
    if v is not None:
        raw = [int(d) for d in np.reshape(v, [-1])]
        n = s.num_elements()
        if -1 in raw and n is not None:
            known = int(np.prod([d for d in raw if d != -1]))
            if known == 0 or n % known:
                raise ShapeError(
                    f"Cannot reshape a tensor with {n} elements to shape "
                    f"{TensorShape(dims).debug_string()} ({known} elements)"
                )
            dims[raw.index(-1)] = n // known
        elif n is not None and int(np.prod(raw)) != n:
            raise ShapeError(
                f"Cannot reshape a tensor with {n} elements to shape "
                f"{TensorShape(raw).debug_string()} ({int(np.prod(raw))} elements)"
            )
    elif s.ndims is not None:
        dims = _reshape_partial(s.as_list(), dims)
    return [TensorShape(dims)]


def _reshape_partial(in_dims: list[Any], out_dims: list[Any]) -> list[Any]:
    """TF's SetOutputShapeForReshape for a partly known target: with at most one unknown
    dimension on each side, the known element counts fix the output's unknown one."""
    in_unknown = [i for i, d in enumerate(in_dims) if d is None]
    out_unknown = [i for i, d in enumerate(out_dims) if d is None]
    if len(in_unknown) > 1 or len(out_unknown) != 1:
        return out_dims
    known_in = int(np.prod([d for d in in_dims if d is not None]))
    known_out = int(np.prod([d for d in out_dims if d is not None]))
    out = list(out_dims)
    if not in_unknown and known_out > 0:
        if known_in % known_out:
            raise ShapeError(
                f"Dimension size must be evenly divisible by {known_out} but is {known_in}"
            )
        out[out_unknown[0]] = known_in // known_out
    elif in_unknown and known_in == known_out:
        out[out_unknown[0]] = in_dims[in_unknown[0]]
    return out


@_reg("UniqueWithCounts")
def _unique_with_counts(op: Any) -> list[Any]:
    return [TensorShape([None]), op.inputs[0].shape, TensorShape([None])]


@_reg("Transpose")
def _transpose(op: Any) -> list[Any]:
    s = _in(op)
    perm = evaluated_value(op.inputs[1])
    if s.ndims is None:
        return [UNKNOWN if perm is None else TensorShape([None] * len(perm))]
    if perm is None:
        return [TensorShape([None] * s.ndims)]
    if len(perm) != s.ndims:
        raise ShapeError(f"Dimension must be {s.ndims} but is {len(perm)}")
    return [TensorShape([s[int(p)] for p in perm])]


@_reg("ConcatV2")
def _concat(op: Any) -> list[Any]:
    values = op.inputs[:-1]
    axis = constant_value(op.inputs[-1])
    shapes = [t.shape for t in values]
    ranks = {s.ndims for s in shapes if s.ndims is not None}
    if len(ranks) > 1:
        r = sorted(ranks)
        raise ShapeError(f"Shape must be rank {r[0]} but is rank {r[1]}")
    if not ranks:
        return [UNKNOWN]
    rank = ranks.pop()
    if rank == 0:
        raise ShapeError("Can't concatenate scalars (use tf.stack instead)")
    if axis is None:
        return [TensorShape([None] * rank)]
    a = int(axis)
    if a < -rank or a >= rank:
        # TF's ConcatShapeHelper: the inputs need at least the rank the axis names.
        raise ShapeError(f"Shape must be at least rank {-a if a < 0 else a + 1} but is rank {rank}")
    a %= rank
    out: list[int | None] = [None] * rank
    total: int | None = 0
    for s in shapes:
        if s.ndims is None:
            total = None
            continue
        for i, d in enumerate(s.as_list()):
            if i == a:
                total = None if (total is None or d is None) else total + d
            elif d is not None:
                if out[i] is not None and out[i] != d:
                    raise ShapeError(
                        f"Dimension {i} in both shapes must be equal, but are {out[i]} and {d}. "
                        f"Shapes are {TensorShape(shapes[0]).debug_string()} and "
                        f"{s.debug_string()}."
                    )
                out[i] = d
    out[a] = total
    return [TensorShape(out)]


@_reg("Pack")
def _pack(op: Any) -> list[Any]:
    s = UNKNOWN
    for t in op.inputs:
        if not s.is_compatible_with(t.shape):
            raise ShapeError(
                f"Shapes must be equal rank, but are {t.shape.ndims} and {s.ndims}"
                if t.shape.ndims != s.ndims
                else f"Dimension mismatch: {s.debug_string()} vs {t.shape.debug_string()}"
            )
        s = s.merge_with(t.shape)
    if s.ndims is None:
        return [UNKNOWN]
    axis = _attr(op, "axis")
    dims = s.as_list()
    axis = axis if axis >= 0 else axis + len(dims) + 1
    dims.insert(axis, len(op.inputs))
    return [TensorShape(dims)]


@_reg("Unpack")
def _unpack(op: Any) -> list[Any]:
    s = _in(op)
    n = _attr(op, "num")
    if s.ndims is None:
        return [UNKNOWN] * n
    axis = _attr(op, "axis") % s.ndims
    dims = s.as_list()
    del dims[axis]
    return [TensorShape(dims)] * n


@_reg("Split")
def _split(op: Any) -> list[Any]:
    n = _attr(op, "num_split")
    s = op.inputs[1].shape
    axis = constant_value(op.inputs[0])
    if s.ndims is None or axis is None:
        return [UNKNOWN if s.ndims is None else TensorShape([None] * s.ndims)] * n
    a = int(axis) % s.ndims
    dims = s.as_list()
    if dims[a] is not None:
        if dims[a] % n:
            raise ShapeError(f"Dimension size must be evenly divisible by {n} but is {dims[a]}")
        dims[a] //= n
    return [TensorShape(dims)] * n


@_reg("SplitV")
def _split_v(op: Any) -> list[Any]:
    n = _attr(op, "num_split")
    s = _in(op)
    size_values = constant_value(op.inputs[1])
    axis = constant_value(op.inputs[2])
    if s.ndims is None or axis is None or size_values is None:
        return [UNKNOWN if s.ndims is None else TensorShape([None] * s.ndims)] * n
    a = int(axis) % s.ndims
    sizes = [int(x) for x in size_values]
    if -1 in sizes and s[a] is not None:
        sizes[sizes.index(-1)] = s[a] - (sum(sizes) + 1)
    out = []
    for k in sizes:
        dims = s.as_list()
        dims[a] = k
        out.append(TensorShape(dims))
    return out


@_reg("ExpandDims")
def _expand_dims(op: Any) -> list[Any]:
    s = _in(op)
    axis = constant_value(op.inputs[1])
    if s.ndims is None or axis is None:
        return [UNKNOWN]
    a = int(np.reshape(axis, [-1])[0])
    rank = s.ndims
    if a < -rank - 1 or a > rank:
        raise ShapeError(f"Tried to expand dim index {a} for tensor with {rank} dimensions.")
    a = a if a >= 0 else a + rank + 1
    dims = s.as_list()
    dims.insert(a, 1)
    return [TensorShape(dims)]


@_reg("Squeeze")
def _squeeze(op: Any) -> list[Any]:
    s = _in(op)
    if s.ndims is None:
        return [UNKNOWN]
    axes = [a % s.ndims for a in (_attr(op, "squeeze_dims") or [])]
    out = []
    for i, d in enumerate(s.as_list()):
        if axes:
            if i in axes:
                if d is not None and d != 1:
                    raise ShapeError(
                        f"Can not squeeze dim[{i}], expected a dimension of 1, got {d}"
                    )
                continue
            out.append(d)
        elif d != 1:
            if d is None:
                return [UNKNOWN]
            out.append(d)
    return [TensorShape(out)]


@_reg("Tile")
def _tile(op: Any) -> list[Any]:
    s = _in(op)
    m = evaluated_value(op.inputs[1])  # TF folds small constant graphs (a Pack of sliced Consts)
    if s.ndims is None:
        return [UNKNOWN]
    if m is None:  # MakeShapeFromShapeTensor: the multiples TF can still read (a Pack's)
        part = _shape_from_tensor(op.inputs[1])
        ks = part.as_list() if part.ndims == s.ndims else [None] * s.ndims
        return [TensorShape([None if d is None or k is None else d * k
                             for d, k in zip(s.as_list(), ks)])]  # fmt: skip
    return [TensorShape([None if d is None else d * int(k) for d, k in zip(s.as_list(), m)])]


@_reg("Pad", "PadV2", "MirrorPad")
def _pad(op: Any) -> list[Any]:
    s = _in(op)
    p = constant_value(op.inputs[1])
    if s.ndims is None:
        return [UNKNOWN]
    if p is None:
        return [TensorShape([None] * s.ndims)]
    return [
        TensorShape(
            [None if d is None else d + int(a) + int(b) for d, (a, b) in zip(s.as_list(), p)]
        )
    ]


@_reg("Slice")
def _slice(op: Any) -> list[Any]:
    s = _in(op)
    begin, size = evaluated_value(op.inputs[1]), evaluated_value(op.inputs[2])
    if size is None:
        sizes = _shape_from_tensor(op.inputs[2])
        if sizes.ndims is not None:
            return [sizes]
        return [UNKNOWN if s.ndims is None else TensorShape([None] * s.ndims)]
    out = []
    for i, k in enumerate(size):
        k = int(k)
        if k == -1:
            d = None if s.ndims is None else s[i]
            out.append(None if d is None or begin is None else d - int(begin[i]))
        else:
            out.append(k)
    return [TensorShape(out)]


@_reg("StridedSlice")
def _strided_slice(op: Any) -> list[Any]:
    s = _in(op)
    # TF's refiner evaluates small constant subgraphs for begin, end and strides.
    found = [evaluated_value(t) for t in op.inputs[1:]]
    vals = [v for v in found if v is not None]
    if len(vals) != len(found) or s.ndims is None:
        return [UNKNOWN]
    # Unknown dims probe as one large size; several of them must still fit numpy's iterator.
    known_bits = sum(int(d).bit_length() for d in s.as_list() if d is not None)
    n_unknown = sum(d is None for d in s.as_list())
    big_bits = min(30, (62 - known_bits) // max(1, n_unknown))
    dims = [1 << big_bits if d is None else d for d in s.as_list()]
    probe = np.broadcast_to(np.zeros((), np.int8), dims)
    index = strided_slice_index(
        *(list(v) for v in vals),
        **{
            k: _attr(op, k)
            for k in (
                "begin_mask",
                "end_mask",
                "ellipsis_mask",
                "new_axis_mask",
                "shrink_axis_mask",
            )
        },
    )
    try:
        out = probe[index].shape
    except IndexError as e:
        raise ShapeError(str(e)) from None
    unknown = [d is None for d in s.as_list()]
    return [
        TensorShape([None if d >= (1 << (big_bits - 1)) else d for d in out])
        if any(unknown)
        else TensorShape(out)
    ]


def strided_slice_index(
    begin,
    end,
    strides,
    begin_mask=0,
    end_mask=0,
    ellipsis_mask=0,
    new_axis_mask=0,
    shrink_axis_mask=0,
) -> tuple:
    """The numpy index a StridedSlice's spec denotes (for static shapes)."""
    index: list[Any] = []
    for i, (b, e, st) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if ellipsis_mask & bit:
            index.append(Ellipsis)
        elif new_axis_mask & bit:
            index.append(np.newaxis)
        elif shrink_axis_mask & bit:
            index.append(int(b))
        else:
            index.append(
                slice(
                    None if begin_mask & bit else int(b),
                    None if end_mask & bit else int(e),
                    int(st),
                )
            )
    return tuple(index)


@_reg("Where")
def _where_shape(op: Any) -> list[TensorShape]:
    # One row of coordinates per true element, as TF's: [?, rank of the condition].
    return [TensorShape([None, _in(op).ndims])]


@_reg("GatherNd")
def _gather_nd(op: Any) -> list[Any]:
    """TF's GatherNdShape: indices.shape[:-1] + params.shape[indices.shape[-1]:]."""
    params, indices = _in(op, 0), _in(op, 1)
    for s in (params, indices):
        if s.ndims == 0:
            raise ShapeError("Shape must be at least rank 1 but is rank 0")
    if params.ndims is None or indices.ndims is None or indices[-1] is None:
        return [UNKNOWN]
    r = indices[-1]
    if r > params.ndims:
        raise ShapeError(
            f"indices.shape[-1] must be <= params.rank, but saw indices shape: "
            f"{indices.debug_string()} and params shape: {params.debug_string()}"
        )
    return [TensorShape(indices.as_list()[:-1] + params.as_list()[r:])]


@_reg("Gather", "GatherV2", "ResourceGather")
def _gather(op: Any) -> list[Any]:
    params = _in(op, 0) if op.type != "ResourceGather" else handle_shape(op.inputs[0]) or UNKNOWN
    idx = _in(op, 1)
    axis = 0 if op.type != "GatherV2" else constant_value(op.inputs[2])
    if params.ndims is None or idx.ndims is None or axis is None:
        return [UNKNOWN]
    a = int(axis) % params.ndims
    p = params.as_list()
    b = int(_attr(op, "batch_dims") or 0)
    b = b + idx.ndims if b < 0 else b  # idx's first b dims are params' batch dims
    return [TensorShape(p[:a] + idx.as_list()[b:] + p[a + 1 :])]


@_reg("OneHot")
def _one_hot(op: Any) -> list[Any]:
    s = _in(op)
    depth = constant_value(op.inputs[1])
    if s.ndims is None:
        return [UNKNOWN]
    dims = s.as_list()
    axis = _attr(op, "axis")
    dims.insert(len(dims) if axis == -1 else axis, None if depth is None else int(depth))
    return [TensorShape(dims)]


@_reg("Switch", "RefSwitch")
def _switch(op: Any) -> list[Any]:
    return [_in(op), _in(op)]


@_reg("Merge", "RefMerge")
def _merge(op: Any) -> list[Any]:
    s = None
    for t in op.inputs:
        if s is None:
            s = t.shape
        elif s.ndims != t.shape.ndims or s.ndims is None:
            s = UNKNOWN
        else:
            s = TensorShape([a if a == b else None for a, b in zip(s.as_list(), t.shape.as_list())])
    return [s or UNKNOWN, TensorShape([])]


# -- nn -----------------------------------------------------------------------------------
@_reg("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_xent(op: Any) -> list[Any]:
    logits, labels = _in(op, 0), _in(op, 1)
    if logits.ndims is not None and logits.ndims != 2:
        raise ShapeError(f"Shape must be rank 2 but is rank {logits.ndims}")
    b = logits[0] if logits.ndims else None
    if labels.ndims is not None and labels.ndims != 1:
        raise ShapeError(f"Shape must be rank 1 but is rank {labels.ndims}")
    if labels.ndims and b is None:
        b = labels[0]
    return [TensorShape([b]), logits if logits.ndims else TensorShape([None, None])]


@_reg("SoftmaxCrossEntropyWithLogits")
def _xent(op: Any) -> list[Any]:
    s = broadcast_shapes(_in(op, 0), _in(op, 1))
    if s.ndims is None:
        return [TensorShape([None]), TensorShape([None, None])]
    return [TensorShape([s[0]]), s]


def _conv_out(n: int | None, k: int | None, s: int, padding: str) -> int | None:
    if n is None or k is None:
        return None
    if padding == "VALID":
        return (n - k + s) // s
    return (n + s - 1) // s


@_reg("Conv2D")
def _conv2d(op: Any) -> list[Any]:
    x, f = _in(op, 0), _in(op, 1)
    if x.ndims is None or f.ndims is None:
        return [TensorShape([None] * 4)]
    nhwc = _attr(op, "data_format") in (b"NHWC", "NHWC")
    strides = _attr(op, "strides")
    sh, sw = (strides[1], strides[2]) if nhwc else (strides[2], strides[3])
    n, h, w, c = x.as_list() if nhwc else (x[0], x[2], x[3], x[1])
    if c is not None and f[2] is not None and c != f[2]:
        raise ShapeError(
            f"Depth of input ({c}) is not a multiple of input depth of filter ({f[2]})"
        )
    pad = _attr(op, "padding")
    pad = pad.decode() if isinstance(pad, bytes) else pad
    oh, ow = _conv_out(h, f[0], sh, pad), _conv_out(w, f[1], sw, pad)
    return [TensorShape([n, oh, ow, f[3]] if nhwc else [n, f[3], oh, ow])]


@_reg("MaxPool", "AvgPool")
def _pool(op: Any) -> list[Any]:
    x = _in(op)
    if x.ndims is None:
        return [TensorShape([None] * 4)]
    k, st = _attr(op, "ksize"), _attr(op, "strides")
    pad = _attr(op, "padding")
    pad = pad.decode() if isinstance(pad, bytes) else pad
    if _attr(op, "data_format") in (b"NCHW", "NCHW"):
        n, c, h, w = x.as_list()
        oh, ow = _conv_out(h, k[2], st[2], pad), _conv_out(w, k[3], st[3], pad)
        return [TensorShape([n, c, oh, ow])]
    n, h, w, c = x.as_list()
    return [TensorShape([n, _conv_out(h, k[1], st[1], pad), _conv_out(w, k[2], st[2], pad), c])]


@_reg("MaxPoolGrad", "MaxPoolGradGrad")
def _pool_grad(op: Any) -> list[Any]:
    return [_in(op, 0) if op.type == "MaxPoolGrad" else _in(op, 2)]


@_reg("BiasAddGrad")
def _bias_add_grad(op: Any) -> list[Any]:
    s = _in(op)
    nchw = _attr(op, "data_format") in ("NCHW", b"NCHW")
    return [TensorShape([None if s.ndims is None else s[1 if nchw else -1]])]


@_reg("Conv2DBackpropInput", "AvgPoolGrad")
def _backprop_input(op: Any) -> list[Any]:
    return [_shape_from_tensor(op.inputs[0])]


@_reg("Conv2DBackpropFilter")
def _backprop_filter(op: Any) -> list[Any]:
    return [_shape_from_tensor(op.inputs[1])]


@_reg("StridedSliceGrad")
def _ssg(op: Any) -> list[Any]:
    return [_shape_from_tensor(op.inputs[0])]


@_reg("BroadcastGradientArgs")
def _bga(op: Any) -> list[Any]:
    return [TensorShape([None]), TensorShape([None])]


@_reg("ScatterNd")
def _scatter_nd(op: Any) -> list[Any]:
    return [_shape_from_tensor(op.inputs[2])]


@_reg("SparseToDense")
def _sparse_to_dense(op: Any) -> list[Any]:
    return [_shape_from_tensor(op.inputs[1])]


@_reg("StackV2")
def _stack_v2(op: Any) -> list[Any]:
    return [TensorShape([])]


@_reg("StackPushV2")
def _stack_push_v2(op: Any) -> list[Any]:
    return [op.inputs[1].shape]


# -- SpaceToBatch / BatchToSpace (TF's SpaceToBatchShapeHelper / BatchToSpaceShapeHelper) --
def _merge_with_matrix(s: TensorShape, rows: int) -> None:
    """TF's Merge(s, Matrix(rows, 2)), which only reports a mismatch here."""
    if s.ndims is None:
        return
    if s.ndims != 2:
        raise ShapeError(f"Shapes must be equal rank, but are {s.ndims} and 2")
    for i, want in enumerate((rows, 2)):
        if s[i] is not None and s[i] != want:
            raise ShapeError(
                f"Dimension {i} in both shapes must be equal, but are {s[i]} and {want}. "
                f"Shapes are {s.debug_string()} and [{rows},2]."
            )


def _divide_evenly(d: int | None, by: int) -> int | None:
    if d is not None and d % by:
        raise ShapeError(f"Dimension size must be evenly divisible by {by} but is {d}")
    return None if d is None else d // by


def _subtract(d: int | None, k: int) -> int | None:
    if d is not None and d < k:
        raise ShapeError(f"Negative dimension size caused by subtracting {k} from {d}")
    return None if d is None else d - k


def _space_batch_shape(
    op: Any,
    x: TensorShape,
    block_shape_shape: TensorShape,
    block: np.ndarray | None,
    pads_input: int,
    to_batch: bool,
) -> list[Any]:
    """SpaceToBatch* (to_batch) or BatchToSpace* output shape; `block` is the constant
    block_shape, `pads_input` the index of the paddings / crops input."""
    if block_shape_shape.ndims != 1:
        raise ShapeError("block_shape must have rank 1.")
    m = block_shape_shape[0]
    if m is None:
        raise ShapeError("block_shape must have known size.")
    if x.ndims is not None and x.ndims < m + 1:
        raise ShapeError(f"Shape must be at least rank {m + 1} but is rank {x.ndims}")
    _merge_with_matrix(_in(op, pads_input), m)
    dims = x.as_list() if x.ndims is not None else [None] * (m + 1)
    blocks = None if block is None else [int(b) for b in np.reshape(block, [-1])]
    if to_batch and blocks == []:  # TF reads a constant block_shape only when non-empty
        blocks = None
    batch = dims[0]
    if blocks is not None:
        for b in blocks:
            if b < 1:
                raise ShapeError("block_shape must be positive")
            if to_batch:
                batch = None if batch is None else batch * b
            else:
                batch = _divide_evenly(batch, b)
    elif m > 0:
        batch = None
    spatial: list[int | None] = [None] * m
    pads = constant_value(op.inputs[pads_input])
    if pads is not None and (not to_batch or pads.size > 0):
        flat = [int(p) for p in np.reshape(pads, [-1])]
        for i in range(m):
            a, b = flat[2 * i], flat[2 * i + 1]
            if a < 0 or b < 0:
                raise ShapeError(f"{'paddings' if to_batch else 'crops'} cannot be negative")
            if blocks is None:
                continue
            d = dims[i + 1]
            if to_batch:
                spatial[i] = _divide_evenly(None if d is None else d + a + b, blocks[i])
            else:
                spatial[i] = _subtract(_subtract(None if d is None else d * blocks[i], a), b)
    if x.ndims is None:
        return [UNKNOWN]
    return [TensorShape([batch, *spatial, *dims[m + 1 :]])]


@_reg("SpaceToBatchND", "BatchToSpaceND")
def _space_batch_nd(op: Any) -> list[Any]:
    block = constant_value(op.inputs[1])
    return _space_batch_shape(op, _in(op), _in(op, 1), block, 2, op.type == "SpaceToBatchND")


@_reg("SpaceToBatch", "BatchToSpace")
def _space_batch(op: Any) -> list[Any]:
    x = _in(op)
    if x.ndims is not None and x.ndims != 4:
        raise ShapeError(f"Shape must be rank 4 but is rank {x.ndims}")
    if x.ndims is None:
        x = TensorShape([None] * 4)
    bs = _attr(op, "block_size")
    block = np.array([bs, bs], np.int64)
    return _space_batch_shape(op, x, TensorShape([2]), block, 1, op.type == "SpaceToBatch")


# -- random (stateless, shuffle, multinomial) and Qr -------------------------------------
_reg(
    "StatelessRandomUniform",
    "StatelessRandomNormal",
    "StatelessTruncatedNormal",
    "StatelessRandomUniformInt",
    "StatelessRandomUniformFullInt",
    "StatelessRandomUniformV2",
    "StatelessRandomNormalV2",
    "StatelessTruncatedNormalV2",
    "StatelessRandomUniformIntV2",
    "StatelessRandomUniformFullIntV2",
    "StatelessRandomGammaV2",
    "StatelessRandomGammaV3",
    "StatelessRandomPoisson",
)(_random)
_reg("RandomShuffle")(_unary)


@_reg("RandomGamma", "RandomPoisson", "RandomPoissonV2")
def _random_gamma(op: Any) -> list[Any]:
    shape, alpha = _shape_from_tensor(op.inputs[0]), _in(op, 1)
    if shape.ndims is None or alpha.ndims is None:
        return [UNKNOWN]
    return [TensorShape(shape.as_list() + alpha.as_list())]


@_reg("ConcatOffset")
def _concat_offset(op: Any) -> list[Any]:
    return [x.shape for x in op.inputs[1:]]


@_reg(
    "UniformCandidateSampler",
    "LogUniformCandidateSampler",
    "LearnedUnigramCandidateSampler",
    "ThreadUnsafeUnigramCandidateSampler",
    "FixedUnigramCandidateSampler",
    "AllCandidateSampler",
)
def _candidate_sampler(op: Any) -> list[Any]:
    """TF's CandidateSamplerShapeFn: [num_sampled], [batch, num_true], [num_sampled]."""
    true_classes = _in(op)
    if true_classes.ndims is not None and true_classes.ndims != 2:
        raise ShapeError(f"Shape must be rank 2 but is rank {true_classes.ndims}")
    batch = true_classes[0] if true_classes.ndims == 2 else None
    sampled = TensorShape([int(_attr(op, "num_sampled"))])
    return [sampled, TensorShape([batch, int(_attr(op, "num_true"))]), sampled]


@_reg("ComputeAccidentalHits")
def _accidental_hits(op: Any) -> list[Any]:
    return [TensorShape([None])] * 3


@_reg("Multinomial", "StatelessMultinomial")
def _multinomial(op: Any) -> list[Any]:
    logits = _in(op, 0)
    batch = logits.as_list()[0] if logits.ndims == 2 else None
    return [TensorShape([batch, _scalar_dim(op.inputs[1])])]


@_reg("StatelessRandomGetKeyCounter")
def _key_counter(op: Any) -> list[Any]:
    return [TensorShape([1]), TensorShape([2])]


@_reg("Qr")
def _qr(op: Any) -> list[Any]:
    x = _in(op, 0)
    if x.ndims is None or x.ndims < 2:
        return [UNKNOWN, UNKNOWN]
    *batch, m, n = x.as_list()
    full = bool(_attr(op, "full_matrices"))
    p = m if full else (None if m is None or n is None else min(m, n))
    return [TensorShape([*batch, m, p]), TensorShape([*batch, p, n])]


@_reg("DiagPart")
def _diag_part(op: Any) -> list[Any]:
    x = _in(op, 0)
    if x.ndims is None or x.ndims % 2:
        return [UNKNOWN]
    return [TensorShape(x.as_list()[: x.ndims // 2])]


@_reg("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")
def _fused_batch_norm(op: Any) -> list[Any]:
    x = _in(op)
    c = None
    if x.ndims == 4:
        fmt = _attr(op, "data_format") or "NHWC"
        fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
        c = x.as_list()[3 if fmt == "NHWC" else 1]
    vec = TensorShape([c])
    return [x, vec, vec, vec, vec] + ([TensorShape(None)] if op.type == "FusedBatchNormV3" else [])


def _window_out(n: Any, k: int, s: int, d: int, padding: str) -> Any:
    if n is None:
        return None
    eff = (k - 1) * d + 1
    return (n - eff + s) // s if padding == "VALID" else (n + s - 1) // s


@_reg("Conv3D", "MaxPool3D", "AvgPool3D")
def _conv3d_or_pool3d(op: Any) -> list[Any]:
    x = _in(op)
    if x.ndims != 5:
        return [TensorShape(None)]
    fmt = _attr(op, "data_format")
    fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
    first = 2 if fmt == "NCDHW" else 1  # the first spatial axis (channels at 1 or 4)
    dims = x.as_list()
    padding = _attr(op, "padding")
    padding = padding.decode() if isinstance(padding, bytes) else padding
    strides = [int(v) for v in _attr(op, "strides")][first : first + 3]
    window: list[Any]
    if op.type == "Conv3D":
        w = _in(op, 1)
        if w.ndims != 5:
            return [TensorShape([dims[0], None, None, None, None])]
        window, out_c = w.as_list()[:3], w.as_list()[4]
        dil = [int(v) for v in (_attr(op, "dilations") or [1] * 5)][first : first + 3]
    else:
        window = [int(v) for v in _attr(op, "ksize")][first : first + 3]
        out_c, dil = dims[1 if first == 2 else 4], [1] * 3
    spatial = [
        None if k is None else _window_out(n, k, s, d, padding)
        for n, k, s, d in zip(dims[first : first + 3], window, strides, dil)
    ]
    if first == 2:
        return [TensorShape([dims[0], out_c, *spatial])]
    return [TensorShape([dims[0], *spatial, out_c])]
