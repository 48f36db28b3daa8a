"""Function instantiation: the body of SymbolicGradient — the gradient of a library
function built at run time (TensorFlow's SymbolicGradientHelper and the C++ gradient
functions of math_grad.cc / nn_grad.cc).

What TF1's `tf.gradients` emits through a `function.Defun` without a Python gradient: a
SymbolicGradient node whose `f` names the function; its inputs are f's arguments and one
upstream gradient per f result, its outputs one gradient per argument. Instantiating it
takes f's body (a registered gradient function of f is used instead, as TensorFlow does),
keeps the forward nodes, adds an `_Arg` per upstream gradient and walks the body backwards
from its results, each op's gradient built from the table below as plain graph nodes;
gradients meeting at one tensor are summed with AddN, an argument nothing reaches gets
zeros. The formulas are TensorFlow's C++ ones (math_grad.cc, nn_grad.cc, array_grad.cc:
tanh' as 1 - tanh^2, not TanhGrad; MaxPool recomputed before MaxPoolGrad) and gradients
meeting at a tensor are summed in TensorFlow's order, so values match its own
SymbolicGradient (to the last bit where no transcendental kernel is involved). The table
is TensorFlow's C++ set for the ops TF1 functions use: elementwise math and activations
(Relu, Relu6, Pow, SquaredDifference, Select, Sign, ...), Softmax/LogSoftmax, BiasAdd,
Conv2D, MaxPool, AvgPool, MatMul/BatchMatMul, Sum/Mean/Max/Min, Concat/Split/Slice/
StridedSlice/Pack/Reverse/Fill/BroadcastTo, the reshapes, Transpose, Cast, Identity.
Ops TF registers without a gradient (comparisons, Shape, StopGradient, Floor, ...) pass
nothing back. Any other op on a path from an argument to a result is NotFound "No
gradient defined for op", as in TensorFlow, which has no C++ gradient for Elu, Selu,
Softplus, Pad, Tile, Gather, Prod, ArgMax or AddN either; the error also names the
node and the function.

Why here and not in client/ops/gradients: the runtime builds this (common may not import
client), and the client's gradients are Python graph-building code over its own Tensor
types, while this builds GraphDef nodes; the two tables cover the same math once per
layer, as TensorFlow keeps Python and C++ gradient registries. Pure graph building: safe
from any thread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from common import attr_value, dtypes
from common.dtypes import DataType
from common.errors import NotFoundError, UnimplementedError
from protos import graph_pb2

GRADIENT_OP = "SymbolicGradient"


class _Builder:
    """Adds gradient nodes to the GraphDef being built, tracking each tensor's dtype."""

    def __init__(self, gd: graph_pb2.GraphDef, types: dict[str, DataType], fname: str) -> None:
        self.gd = gd
        self.types = types
        self.fname = fname
        self.names = {nd.name for nd in gd.node}
        self.node: Any = None  # the forward node whose gradient is being built

    def add(self, op: str, inputs: list[str], attrs: Mapping[str, Any] | None = None,
            out_types: list[DataType] | None = None) -> str:  # fmt: skip
        base = f"gradients/{self.node.name}_grad/{op}" if self.node is not None else op
        name, k = base, 0
        while name in self.names:
            k += 1
            name = f"{base}_{k}"
        self.names.add(name)
        nd = self.gd.node.add(name=name, op=op, input=inputs)
        for key, value in (attrs or {}).items():
            nd.attr[key].CopyFrom(attr_value.to_proto(value))
        for i, t in enumerate(out_types or [self.types[inputs[0]]]):
            self.types[name if i == 0 else f"{name}:{i}"] = t
        return name

    def const(self, value: Any, dtype: DataType) -> str:
        arr = np.asarray(value, dtype=dtypes.as_numpy(dtype))
        return self.add("Const", [], {"dtype": dtype, "value": arr}, [dtype])

    def shape(self, x: str) -> str:
        return self.add("Shape", [x], {"T": self.types[x], "out_type": DataType.DT_INT32},
                        [DataType.DT_INT32])  # fmt: skip

    def binary(self, op: str, a: str, b: str) -> str:
        return self.add(op, [a, b], {"T": self.types[a]})

    def unary(self, op: str, a: str) -> str:
        return self.add(op, [a], {"T": self.types[a]})

    def reduce_to(self, grad: tuple[str, str], x: str, y: str) -> tuple[str, str]:
        """Sum a broadcast binary op's gradient back to the shapes of x and y."""
        sx, sy = self.shape(x), self.shape(y)
        i32 = DataType.DT_INT32
        args = self.add("BroadcastGradientArgs", [sx, sy], {"T": i32}, [i32, i32])
        out = []
        for g, s, axes in ((grad[0], sx, args), (grad[1], sy, f"{args}:1")):
            total = self.add("Sum", [g, axes], {"T": self.types[g], "Tidx": i32,
                                               "keep_dims": False})  # fmt: skip
            out.append(self.add("Reshape", [total, s], {"T": self.types[g], "Tshape": i32}))
        return out[0], out[1]

    def reduce_one(self, grad: str, x: str) -> str:
        """`grad` (of the broadcast shape) summed back to x's shape."""
        i32 = DataType.DT_INT32
        sx = self.shape(x)
        args = self.add("BroadcastGradientArgs", [sx, self.shape(grad)], {"T": i32}, [i32, i32])
        total = self.add("Sum", [grad, args], {"T": self.types[grad], "Tidx": i32,
                                               "keep_dims": False})  # fmt: skip
        return self.add("Reshape", [total, sx], {"T": self.types[grad], "Tshape": i32})


Grad = list[str | None]
GradFn = Callable[[_Builder, Any, list[str], list[str], list[str]], Grad]
# (builder, node, data inputs, outputs, output gradients) -> a gradient per data input


def _add(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    return list(b.reduce_to((dy[0], dy[0]), x[0], x[1]))


def _sub(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    return list(b.reduce_to((dy[0], b.unary("Neg", dy[0])), x[0], x[1]))


def _mul(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    gx, gy = b.binary("Mul", dy[0], x[1]), b.binary("Mul", x[0], dy[0])
    return list(b.reduce_to((gx, gy), x[0], x[1]))


def _div(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    div = "Div" if n.op == "Div" else "RealDiv"
    gx = b.binary(div, dy[0], x[1])
    ratio = b.binary(div, b.unary("Neg", x[0]), b.unary("Square", x[1]))
    return list(b.reduce_to((gx, b.binary("Mul", dy[0], ratio)), x[0], x[1]))


def _max_min(comparator: str) -> GradFn:
    def grad(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
        t = b.types[dy[0]]
        c = b.add(comparator, [x[0], x[1]], {"T": t}, [DataType.DT_BOOL])
        mask = b.add("Cast", [c], {"SrcT": DataType.DT_BOOL, "DstT": t, "Truncate": False}, [t])
        gx = b.binary("Mul", dy[0], mask)
        return list(b.reduce_to((gx, b.binary("Sub", dy[0], gx)), x[0], x[1]))

    return grad


def _unary(fn: Callable[[_Builder, str, str, str], str]) -> GradFn:
    def grad(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
        return [fn(b, x[0], y[0], dy[0])]

    return grad


def _tanh(b: _Builder, x: str, y: str, dy: str) -> str:
    one = b.const(1, b.types[x])
    return b.binary("Mul", dy, b.binary("Sub", one, b.unary("Square", b.unary("Tanh", x))))


def _sigmoid(b: _Builder, x: str, y: str, dy: str) -> str:
    s = b.unary("Sigmoid", x)
    return b.binary("Mul", dy, b.binary("Mul", s, b.binary("Sub", b.const(1, b.types[x]), s)))


def _sqrt(b: _Builder, x: str, y: str, dy: str) -> str:
    inv = b.unary("Reciprocal", b.unary("Sqrt", x))
    return b.binary("Mul", dy, b.binary("Mul", b.const(0.5, b.types[x]), inv))


def _rsqrt(b: _Builder, x: str, y: str, dy: str) -> str:
    a = b.binary("Mul", b.const(-0.5, b.types[x]), b.unary("Reciprocal", x))
    return b.binary("Mul", dy, b.binary("Mul", a, b.unary("Rsqrt", x)))


def _reciprocal(b: _Builder, x: str, y: str, dy: str) -> str:
    y2 = b.unary("Square", b.unary("Reciprocal", x))
    return b.binary("Mul", dy, b.unary("Neg", y2))


def _matmul(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    ta, tb = _attr(n, "transpose_a", False), _attr(n, "transpose_b", False)
    a, w, g = x[0], x[1], dy[0]

    def mm(p: str, q: str, tp: bool, tq: bool) -> str:
        return b.add("MatMul", [p, q], {"T": b.types[p], "transpose_a": tp, "transpose_b": tq})

    if not ta and not tb:
        return [mm(g, w, False, True), mm(a, g, True, False)]
    if not ta and tb:
        return [mm(g, w, False, False), mm(g, a, True, False)]
    if ta and not tb:
        return [mm(w, g, False, True), mm(a, g, False, False)]
    return [mm(w, g, True, True), mm(g, a, True, True)]


def _batch_matmul(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    """MatMul's rule with BatchMatMulV2 (real types: adjoint is transpose), each gradient
    summed back over the batch dimensions its input was broadcast along."""
    ta, tb = _attr(n, "adj_x", False), _attr(n, "adj_y", False)
    a, w, g = x[0], x[1], dy[0]

    def mm(p: str, q: str, tp: bool, tq: bool) -> str:
        return b.add("BatchMatMulV2", [p, q], {"T": b.types[p], "adj_x": tp, "adj_y": tq})

    if not ta and not tb:
        ga, gw = mm(g, w, False, True), mm(a, g, True, False)
    elif not ta and tb:
        ga, gw = mm(g, w, False, False), mm(g, a, True, False)
    elif ta and not tb:
        ga, gw = mm(w, g, False, True), mm(a, g, False, False)
    else:
        ga, gw = mm(w, g, True, True), mm(g, a, True, True)
    return [b.reduce_one(ga, a), b.reduce_one(gw, w)]


def _sum_grad(b: _Builder, x: str, axes: str, dy: str) -> str:
    """Broadcast dy back over the reduced axes (TF's SumGrad: Reshape to the kept-dims
    shape, then to x's shape)."""
    i32 = DataType.DT_INT32
    shape = b.shape(x)
    rank = b.add("Size", [shape], {"T": i32, "out_type": i32}, [i32])
    axes32 = b.add("Cast", [axes], {"SrcT": b.types[axes], "DstT": i32, "Truncate": False},
                   [i32])  # fmt: skip
    mod = b.binary("FloorMod", b.binary("AddV2", axes32, rank), rank)
    every = b.add("Range", [b.const(0, i32), rank, b.const(1, i32)], {"Tidx": i32}, [i32])
    ones = b.add("Fill", [b.shape(mod), b.const(1, i32)], {"T": i32, "index_type": i32}, [i32])
    kept = b.add("DynamicStitch", [every, mod, shape, ones], {"N": 2, "T": i32}, [i32])
    reshaped = b.add("Reshape", [dy, kept], {"T": b.types[dy], "Tshape": i32})
    return b.add("BroadcastTo", [reshaped, shape], {"T": b.types[dy], "Tidx": i32})


def _sum(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    return [_sum_grad(b, x[0], x[1], dy[0]), None]


def _mean(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    i32 = DataType.DT_INT32
    summed = _sum_grad(b, x[0], x[1], dy[0])
    zero = b.const(0, i32)
    count_in = b.add("Prod", [b.shape(x[0]), zero], {"T": i32, "Tidx": i32, "keep_dims": False})
    count_out = b.add("Prod", [b.shape(y[0]), zero], {"T": i32, "Tidx": i32, "keep_dims": False})
    ratio = b.binary("Maximum", b.binary("FloorDiv", count_in, b.binary(
        "Maximum", count_out, b.const(1, i32))), b.const(1, i32))  # fmt: skip
    t = b.types[dy[0]]
    scale = b.add("Cast", [ratio], {"SrcT": i32, "DstT": t, "Truncate": False}, [t])
    return [b.binary("RealDiv", summed, scale), None]


def _reshape(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    i32 = DataType.DT_INT32
    return [b.add("Reshape", [dy[0], b.shape(x[0])], {"T": b.types[dy[0]], "Tshape": i32}), None]


def _softmax(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    i32 = DataType.DT_INT32
    t = b.types[dy[0]]
    sm = b.unary("Softmax", x[0])
    total = b.add("Sum", [b.binary("Mul", dy[0], sm), b.const([-1], i32)],
                  {"T": t, "Tidx": i32, "keep_dims": True})  # fmt: skip
    return [b.binary("Mul", b.binary("Sub", dy[0], total), sm)]


def _bias_add(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    fmt = _attr(n, "data_format", "NHWC")
    bias = b.add("BiasAddGrad", [dy[0]], {"T": b.types[dy[0]], "data_format": fmt})
    return [b.unary("Identity", dy[0]), bias]


def _transpose(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    perm_t = b.types[x[1]]
    inverse = b.add("InvertPermutation", [x[1]], {"T": perm_t}, [perm_t])
    return [b.add("Transpose", [dy[0], inverse], {"T": b.types[dy[0]], "Tperm": perm_t}), None]


def _reshape_back(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    """ExpandDims, Squeeze: dy reshaped to x's shape (further inputs get none)."""
    i32 = DataType.DT_INT32
    back = b.add("Reshape", [dy[0], b.shape(x[0])], {"T": b.types[dy[0]], "Tshape": i32})
    return [back] + [None] * (len(x) - 1)


def _cast(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    src = b.types[x[0]]
    return [b.add("Cast", [dy[0]], {"SrcT": b.types[dy[0]], "DstT": src, "Truncate": False},
                  [src])]  # fmt: skip


def _square(b: _Builder, x: str, y: str, dy: str) -> str:
    return b.binary("Mul", dy, b.binary("Mul", x, b.const(2, b.types[x])))


def _log1p(b: _Builder, x: str, y: str, dy: str) -> str:
    return b.binary("Div", dy, b.binary("Add", b.const(1, b.types[x]), x))


def _atan(b: _Builder, x: str, y: str, dy: str) -> str:
    one = b.const(1, b.types[x])
    return b.binary("Mul", dy, b.unary("Reciprocal", b.binary("Add", one, b.unary("Square", x))))


def _tan(b: _Builder, x: str, y: str, dy: str) -> str:
    return b.binary("Mul", dy, b.unary("Square", b.unary("Reciprocal", b.unary("Cos", x))))


def _asin_acos(negate: bool) -> Callable[[_Builder, str, str, str], str]:
    def grad(b: _Builder, x: str, y: str, dy: str) -> str:
        one = b.const(1, b.types[x])
        inv = b.unary("Reciprocal", b.unary("Sqrt", b.binary("Sub", one, b.unary("Square", x))))
        return b.binary("Mul", dy, b.unary("Neg", inv) if negate else inv)

    return grad


def _sign(b: _Builder, x: str, y: str, dy: str) -> str:
    t = b.types[x]
    return b.add("Fill", [b.shape(x), b.const(0, t)], {"T": t, "index_type": DataType.DT_INT32},
                 [t])  # fmt: skip


def _pow(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    """gx = dz * y * x^(y-1); gy = dz * x^y * (x > 0 ? log(x) : 0) (real types)."""
    t, dz = b.types[x[0]], dy[0]
    zero, one = b.const(0, t), b.const(1, t)
    gx = b.binary("Mul", b.binary("Pow", x[0], b.binary("Sub", x[1], one)),
                  b.binary("Mul", dz, x[1]))  # fmt: skip
    unsafe_log = b.unary("Log", x[0])
    zeros = b.unary("ZerosLike", x[0])
    nonpositive = b.add("LessEqual", [x[0], zero], {"T": t}, [DataType.DT_BOOL])
    log_x = b.add("Select", [nonpositive, zeros, unsafe_log], {"T": t}, [t])
    gy = b.binary("Mul", log_x, b.binary("Mul", dz, y[0]))
    return list(b.reduce_to((gx, gy), x[0], x[1]))


def _squared_difference(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    two = b.const(2, b.types[x[0]])
    gx = b.binary("Mul", b.binary("Mul", two, b.binary("Sub", x[0], x[1])), dy[0])
    return list(b.reduce_to((gx, b.unary("Neg", gx)), x[0], x[1]))


def _select(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    t = b.types[dy[0]]
    zeros = b.unary("ZerosLike", x[1])
    return [
        None,
        b.add("Select", [x[0], dy[0], zeros], {"T": t}, [t]),
        b.add("Select", [x[0], zeros, dy[0]], {"T": t}, [t]),
    ]


def _min_max(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    """Max/Min over axes: dy shared equally by the elements equal to the extreme."""
    t, tidx = b.types[x[0]], b.types[x[1]]
    extreme = b.add(n.op, [x[0], x[1]], {"T": t, "Tidx": tidx, "keep_dims": True}, [t])
    mask = b.add("Equal", [x[0], extreme], {"T": t}, [DataType.DT_BOOL])
    mask_cast = b.add("Cast", [mask], {"SrcT": DataType.DT_BOOL, "DstT": t, "Truncate": False},
                      [t])  # fmt: skip
    mask_sum = b.add("Sum", [mask_cast, x[1]], {"T": t, "Tidx": tidx, "keep_dims": False}, [t])
    norm = b.binary("Div", dy[0], mask_sum)
    shaped = b.add("Reshape", [norm, b.shape(extreme)], {"T": t, "Tshape": DataType.DT_INT32})
    return [b.binary("Mul", mask_cast, shaped), None]


def _log_softmax(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    i32, t = DataType.DT_INT32, b.types[dy[0]]
    sm = b.unary("Softmax", x[0])
    total = b.add("Sum", [dy[0], b.const([-1], i32)], {"T": t, "Tidx": i32, "keep_dims": True})
    return [b.binary("Sub", dy[0], b.binary("Mul", total, sm))]


def _pool_attrs(b: _Builder, n: Any, x: str) -> dict[str, Any]:
    return {
        "T": b.types[x],
        "ksize": _attr(n, "ksize", []),
        "strides": _attr(n, "strides", []),
        "padding": _attr(n, "padding", "VALID"),
        "data_format": _attr(n, "data_format", "NHWC"),
    }


def _max_pool(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    """TF recomputes the pooling, then MaxPoolGrad(input, output, grad)."""
    attrs = _pool_attrs(b, n, x[0])
    pooled = b.add("MaxPool", [x[0]], attrs)
    return [b.add("MaxPoolGrad", [x[0], pooled, dy[0]], attrs)]


def _avg_pool(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    attrs = _pool_attrs(b, n, x[0])
    return [b.add("AvgPoolGrad", [b.shape(x[0]), dy[0]], attrs, [b.types[x[0]]])]


def _conv2d(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    """TF's Conv2DGrad passes strides, padding, data_format and use_cudnn_on_gpu only
    (dilations and explicit paddings take their defaults, as there)."""
    t = b.types[x[0]]
    attrs = {
        "T": t,
        "strides": _attr(n, "strides", []),
        "padding": _attr(n, "padding", "VALID"),
        "data_format": _attr(n, "data_format", "NHWC"),
        "use_cudnn_on_gpu": _attr(n, "use_cudnn_on_gpu", True),
    }
    dx = b.add("Conv2DBackpropInput", [b.shape(x[0]), x[1], dy[0]], attrs, [t])
    dw = b.add("Conv2DBackpropFilter", [x[0], b.shape(x[1]), dy[0]], attrs, [t])
    return [dx, dw]


def _concat_grads(b: _Builder, dim: str, xs: list[str], dy: str) -> list[str]:
    """Slices of dy at ConcatOffset's offsets, one per input."""
    i32, k = DataType.DT_INT32, len(xs)
    shapes = b.add("ShapeN", xs, {"N": k, "T": b.types[xs[0]], "out_type": i32}, [i32] * k)
    shape_i = [shapes if i == 0 else f"{shapes}:{i}" for i in range(k)]
    offsets = b.add("ConcatOffset", [dim, *shape_i], {"N": k}, [i32] * k)
    return [
        b.add(
            "Slice",
            [dy, offsets if i == 0 else f"{offsets}:{i}", shape_i[i]],
            {"T": b.types[dy], "Index": i32},
        )  # fmt: skip
        for i in range(k)
    ]


def _concat(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    return [None, *_concat_grads(b, x[0], x[1:], dy[0])]


def _concat_v2(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    return [*_concat_grads(b, x[-1], x[:-1], dy[0]), None]


def _split(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    t = b.types[dy[0]]
    return [None, b.add("Concat", [x[0], *dy], {"N": len(dy), "T": t}, [t])]


def _split_v(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    t = b.types[dy[0]]
    dx = b.add("ConcatV2", [*dy, x[2]], {"N": len(dy), "T": t, "Tidx": b.types[x[2]]}, [t])
    return [dx, None, None]


def _int32_index(n: Any, b: _Builder) -> None:
    if _attr(n, "Index", DataType.DT_INT32) != DataType.DT_INT32:
        raise UnimplementedError(
            f"{n.op}Grad for int64 index are not supported. (node '{n.name}' of function "
            f"'{b.fname}')",
            n.name,
        )


def _slice(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    """dx = Pad(dy, [begin, shape(x) - begin - size] as columns)."""
    _int32_index(n, b)
    i32 = DataType.DT_INT32
    one = b.const(1, i32)
    expand = {"T": i32, "Tdim": i32}
    before = b.add("ExpandDims", [x[1], one], expand, [i32])
    rest = b.binary("Sub", b.binary("Sub", b.shape(x[0]), x[1]), x[2])
    after = b.add("ExpandDims", [rest, one], expand, [i32])
    paddings = b.add("Concat", [one, before, after], {"N": 2, "T": i32}, [i32])
    t = b.types[dy[0]]
    return [b.add("Pad", [dy[0], paddings], {"T": t, "Tpaddings": i32}, [t]), None, None]


def _strided_slice(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    _int32_index(n, b)
    t = b.types[dy[0]]
    attrs: dict[str, Any] = {"T": t, "Index": DataType.DT_INT32}
    for mask in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"):
        attrs[mask] = _attr(n, mask, 0)
    dx = b.add("StridedSliceGrad", [b.shape(x[0]), x[1], x[2], x[3], dy[0]], attrs, [t])
    return [dx, None, None, None]


def _pack(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    t, k = b.types[dy[0]], len(x)
    parts = b.add("Unpack", [dy[0]], {"T": t, "num": k, "axis": _attr(n, "axis", 0)}, [t] * k)
    return [parts if i == 0 else f"{parts}:{i}" for i in range(k)]


def _reverse(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    t = b.types[dy[0]]
    if n.op == "Reverse":
        return [b.add("Reverse", [dy[0], x[1]], {"T": t}, [t]), None]
    return [b.add("ReverseV2", [dy[0], x[1]], {"T": t, "Tidx": b.types[x[1]]}, [t]), None]


def _fill(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    i32, t = DataType.DT_INT32, b.types[dy[0]]
    rank = b.add("Rank", [dy[0]], {"T": t}, [i32])
    every = b.add("Range", [b.const(0, i32), rank, b.const(1, i32)], {"Tidx": i32}, [i32])
    return [None, b.add("Sum", [dy[0], every], {"T": t, "Tidx": i32, "keep_dims": False}, [t])]


def _broadcast_to(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    return [b.reduce_one(dy[0], x[0]), None]


# Ops TensorFlow registers without a gradient (REGISTER_OP_NO_GRADIENT): nothing flows
# back through them; their inputs get no contribution (zeros if nothing else reaches).
NO_GRADIENT = frozenset(
    {
        "Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual",
        "LogicalAnd", "LogicalOr", "LogicalNot", "Shape", "ShapeN", "Rank", "Size",
        "ZerosLike", "OnesLike", "StopGradient", "Const", "Floor", "FloorDiv",
        "ConcatOffset", "BroadcastGradientArgs", "InvertPermutation", "EditDistance",
    }
)  # fmt: skip


GRADIENTS: dict[str, GradFn] = {
    "Identity": lambda b, n, x, y, dy: [dy[0]],
    "Snapshot": lambda b, n, x, y, dy: [dy[0]],
    "IdentityN": lambda b, n, x, y, dy: list(dy),
    "Add": _add,
    "AddV2": _add,
    "Sub": _sub,
    "Mul": _mul,
    "RealDiv": _div,
    "Div": _div,
    "Neg": _unary(lambda b, x, y, dy: b.unary("Neg", dy)),
    "Square": _unary(_square),
    "Exp": _unary(lambda b, x, y, dy: b.binary("Mul", dy, b.unary("Exp", x))),
    "Log": _unary(lambda b, x, y, dy: b.binary("Mul", dy, b.unary("Reciprocal", x))),
    "Sin": _unary(lambda b, x, y, dy: b.binary("Mul", dy, b.unary("Cos", x))),
    "Cos": _unary(lambda b, x, y, dy: b.binary("Mul", dy, b.unary("Neg", b.unary("Sin", x)))),
    "Tanh": _unary(_tanh),
    "Sigmoid": _unary(_sigmoid),
    "Sqrt": _unary(_sqrt),
    "Rsqrt": _unary(_rsqrt),
    "Reciprocal": _unary(_reciprocal),
    "Inv": _unary(_reciprocal),
    "Abs": _unary(lambda b, x, y, dy: b.binary("Mul", dy, b.unary("Sign", x))),
    "Relu": _unary(lambda b, x, y, dy: b.binary("ReluGrad", dy, x)),
    "Maximum": _max_min("GreaterEqual"),
    "Minimum": _max_min("LessEqual"),
    "MatMul": _matmul,
    "BatchMatMulV2": _batch_matmul,
    "BatchMatMul": _batch_matmul,
    "Sum": _sum,
    "Mean": _mean,
    "Reshape": _reshape,
    "ExpandDims": _reshape_back,
    "Squeeze": _reshape_back,
    "Transpose": _transpose,
    "Softmax": _softmax,
    "BiasAdd": _bias_add,
    "Cast": _cast,
    "Expm1": _unary(lambda b, x, y, dy: b.binary("Mul", dy, b.unary("Exp", x))),
    "Log1p": _unary(_log1p),
    "Sinh": _unary(lambda b, x, y, dy: b.binary("Mul", dy, b.unary("Cosh", x))),
    "Cosh": _unary(lambda b, x, y, dy: b.binary("Mul", dy, b.unary("Sinh", x))),
    "Tan": _unary(_tan),
    "Asin": _unary(_asin_acos(negate=False)),
    "Acos": _unary(_asin_acos(negate=True)),
    "Atan": _unary(_atan),
    "Sign": _unary(_sign),
    "Relu6": _unary(lambda b, x, y, dy: b.binary("Relu6Grad", dy, x)),
    "Pow": _pow,
    "SquaredDifference": _squared_difference,
    "Select": _select,
    "Max": _min_max,
    "Min": _min_max,
    "LogSoftmax": _log_softmax,
    "MaxPool": _max_pool,
    "AvgPool": _avg_pool,
    "Conv2D": _conv2d,
    "Concat": _concat,
    "ConcatV2": _concat_v2,
    "Split": _split,
    "SplitV": _split_v,
    "Slice": _slice,
    "StridedSlice": _strided_slice,
    "Pack": _pack,
    "Reverse": _reverse,
    "ReverseV2": _reverse,
    "Fill": _fill,
    "BroadcastTo": _broadcast_to,
}


def _attr(nd: Any, name: str, default: Any) -> Any:
    return attr_value.to_python(nd.attr[name]) if name in nd.attr else default


def _tensor(s: str) -> str:
    return s[:-2] if s.endswith(":0") else s


def build(fwd_gd: graph_pb2.GraphDef, arg_types: list[DataType], ret_types: list[DataType],
          types: dict[str, DataType], fname: str) -> graph_pb2.GraphDef:  # fmt: skip
    """The gradient body of the instantiated forward body `fwd_gd` (with _Arg/_Retval
    nodes): args = f's args + one gradient per result, results = one per arg. `types`:
    the dtype of each forward tensor ("node" or "node:k")."""
    args = {int(_attr(nd, "index", 0)): nd.name for nd in fwd_gd.node if nd.op == "_Arg"}
    rets = {int(_attr(nd, "index", 0)): nd for nd in fwd_gd.node if nd.op == "_Retval"}
    gd = graph_pb2.GraphDef()
    gd.node.extend(nd for nd in fwd_gd.node if nd.op != "_Retval")
    b = _Builder(gd, dict(types), fname)
    grads: dict[str, list[str]] = {}
    needed = _from_args(fwd_gd, set(args.values()))
    # TensorFlow's order (SymbolicGradientBuilder): a node is ready once every consumer
    # on a path to a result has sent it a gradient; ready nodes run first come, first
    # served, so gradients meeting at a tensor are summed in TensorFlow's order.
    by_name = {nd.name: nd for nd in fwd_gd.node}
    reachable = _to_results(fwd_gd, [_tensor(r.input[0]).split(":")[0] for r in rets.values()])
    pending = dict.fromkeys(reachable, 0)
    for nd in fwd_gd.node:
        if nd.name in reachable:
            for src in _data_inputs(nd):
                pending[src.split(":")[0]] += 1
    ready: list[str] = []

    def send(tensor: str, grad: str | None) -> None:
        if grad is not None:
            grads.setdefault(tensor, []).append(grad)
        src = tensor.split(":")[0]
        pending[src] -= 1
        if pending[src] == 0:
            ready.append(src)

    for i in range(len(ret_types)):
        pending[_tensor(rets[i].input[0]).split(":")[0]] += 1
    for i, t in enumerate(ret_types):
        send(_tensor(rets[i].input[0]), b.add("_Arg", [], {"T": t, "index": len(arg_types) + i},
                                              [t]))  # fmt: skip
    while ready:
        nd = by_name[ready.pop(0)]
        data = _data_inputs(nd)
        for src, g in zip(data, _backprop(b, nd, types, grads, needed, fname), strict=True):
            send(src, g if src.split(":")[0] in needed else None)
    for i, t in enumerate(arg_types):
        dx = _summed(b, grads.get(args[i], []))
        if dx is None:
            dx = b.add("ZerosLike", [args[i]], {"T": t})
        b.add("_Retval", [dx], {"T": t, "index": i}, [])
    return gd


def _backprop(b: _Builder, nd: Any, types: dict[str, DataType], grads: dict[str, list[str]],
              needed: set[str], fname: str) -> Grad:  # fmt: skip
    """The gradients `nd` sends its data inputs (None: no gradient flows there)."""
    data = _data_inputs(nd)
    if nd.op == "_Arg" or nd.name not in needed or nd.op in NO_GRADIENT:
        return [None] * len(data)
    outs = [nd.name] + [f"{nd.name}:{k}" for k in range(1, _num_outputs(nd, types))]
    summed = [_summed(b, grads.get(o, [])) for o in outs]
    if all(d is None for d in summed):
        return [None] * len(data)
    fn = GRADIENTS.get(nd.op)
    if fn is None:
        raise NotFoundError(
            f"No gradient defined for op: {nd.op} (node '{nd.name}' of function "
            f"'{fname}'); give the Defun a python grad_func",
            nd.name,
        )
    dys = [d if d is not None else b.add("ZerosLike", [o], {"T": types[o]})
           for d, o in zip(summed, outs, strict=True)]  # fmt: skip
    b.node = nd
    try:
        return fn(b, nd, data, outs, dys)
    finally:
        b.node = None


def _data_inputs(nd: Any) -> list[str]:
    return [_tensor(s) for s in nd.input if not s.startswith("^")]


def _to_results(gd: graph_pb2.GraphDef, results: list[str]) -> set[str]:
    """Nodes a data path leads from to a result (TF's GetReachableNodes)."""
    by_name = {nd.name: nd for nd in gd.node}
    seen, stack = set(results), list(results)
    while stack:
        for src in _data_inputs(by_name[stack.pop()]):
            name = src.split(":")[0]
            if name not in seen:
                seen.add(name)
                stack.append(name)
    return seen


def _summed(b: _Builder, parts: list[str]) -> str | None:
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return b.add("AddN", parts, {"N": len(parts), "T": b.types[parts[0]]})


def _num_outputs(nd: Any, types: dict[str, DataType]) -> int:
    k = 1
    while f"{nd.name}:{k}" in types:
        k += 1
    return k


def _from_args(gd: graph_pb2.GraphDef, args: set[str]) -> set[str]:
    """Nodes a data path from an argument reaches (the only ones that need gradients)."""
    consumers: dict[str, list[str]] = {}
    for nd in gd.node:
        for s in nd.input:
            if not s.startswith("^"):
                consumers.setdefault(s.split(":")[0], []).append(nd.name)
    seen, stack = set(args), list(args)
    while stack:
        for c in consumers.get(stack.pop(), []):
            if c not in seen:
                seen.add(c)
                stack.append(c)
    return seen
