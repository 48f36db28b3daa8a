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
zeros. The table covers the common op set (elementwise math and activations, MatMul,
Sum/Mean, Reshape, Cast, AddN, Identity); another op on a path from an argument to a
result is Unimplemented, naming the op, its node and the function.

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
from common.errors import InvalidArgumentError, UnimplementedError
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
    gx = b.binary("RealDiv", dy[0], x[1])
    ratio = b.binary("RealDiv", b.binary("RealDiv", b.unary("Neg", x[0]), x[1]), x[1])
    return list(b.reduce_to((gx, b.binary("Mul", dy[0], ratio)), x[0], x[1]))


def _unary(fn: Callable[[_Builder, str, str, str], str]) -> GradFn:
    def grad(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
        return [fn(b, x[0], y[0], dy[0])]

    return grad


def _fused(op: str, output_first: bool = True) -> GradFn:
    """TanhGrad(y, dy) and friends; ReluGrad(dy, x)."""

    def fn(b: _Builder, x: str, y: str, dy: str) -> str:
        return b.binary(op, y, dy) if output_first else b.binary(op, dy, x)

    return _unary(fn)


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


def _cast(b: _Builder, n: Any, x: list[str], y: list[str], dy: list[str]) -> Grad:
    src = b.types[x[0]]
    if not (src in _FLOATS and b.types[dy[0]] in _FLOATS):
        return [None]
    return [b.add("Cast", [dy[0]], {"SrcT": b.types[dy[0]], "DstT": src, "Truncate": False},
                  [src])]  # fmt: skip


_FLOATS = (DataType.DT_HALF, DataType.DT_BFLOAT16, DataType.DT_FLOAT, DataType.DT_DOUBLE)


def _square(b: _Builder, x: str, y: str, dy: str) -> str:
    return b.binary("Mul", dy, b.binary("Mul", x, b.const(2, b.types[x])))


GRADIENTS: dict[str, GradFn] = {
    "Identity": lambda b, n, x, y, dy: [dy[0]],
    "Snapshot": lambda b, n, x, y, dy: [dy[0]],
    "AddN": lambda b, n, x, y, dy: [dy[0]] * len(x),
    "Add": _add,
    "AddV2": _add,
    "Sub": _sub,
    "Mul": _mul,
    "RealDiv": _div,
    "Div": _div,
    "Neg": _unary(lambda b, x, y, dy: b.unary("Neg", dy)),
    "Square": _unary(_square),
    "Exp": _unary(lambda b, x, y, dy: b.binary("Mul", dy, y)),
    "Log": _unary(lambda b, x, y, dy: b.binary("Mul", dy, b.unary("Reciprocal", x))),
    "Sin": _unary(lambda b, x, y, dy: b.binary("Mul", dy, b.unary("Cos", x))),
    "Cos": _unary(lambda b, x, y, dy: b.binary("Mul", dy, b.unary("Neg", b.unary("Sin", x)))),
    "Tanh": _fused("TanhGrad"),
    "Sigmoid": _fused("SigmoidGrad"),
    "Sqrt": _fused("SqrtGrad"),
    "Rsqrt": _fused("RsqrtGrad"),
    "Reciprocal": _fused("ReciprocalGrad"),
    "Relu": _fused("ReluGrad", output_first=False),
    "MatMul": _matmul,
    "BatchMatMulV2": _batch_matmul,
    "BatchMatMul": _batch_matmul,
    "Sum": _sum,
    "Mean": _mean,
    "Reshape": _reshape,
    "Cast": _cast,
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
    for i, t in enumerate(ret_types):
        dy = b.add("_Arg", [], {"T": t, "index": len(arg_types) + i}, [t])
        grads.setdefault(_tensor(rets[i].input[0]), []).append(dy)
    needed = _from_args(fwd_gd, set(args.values()))
    for nd in reversed(_topological(fwd_gd)):
        if nd.op in ("_Arg", "_Retval") or nd.name not in needed:
            continue
        outs = [nd.name] + [f"{nd.name}:{k}" for k in range(1, _num_outputs(nd, types))]
        summed = [_summed(b, grads.get(o, [])) for o in outs]
        if all(d is None for d in summed):
            continue
        fn = GRADIENTS.get(nd.op)
        if fn is None:
            raise UnimplementedError(
                f"SymbolicGradient: no gradient at run time for op '{nd.op}' (node "
                f"'{nd.name}' of function '{fname}')",
                nd.name,
            )
        dys = [d if d is not None else b.add("ZerosLike", [o], {"T": types[o]})
               for d, o in zip(summed, outs, strict=True)]  # fmt: skip
        data = [_tensor(s) for s in nd.input if not s.startswith("^")]
        b.node = nd
        for src, g in zip(data, fn(b, nd, data, outs, dys), strict=True):
            if g is not None and src.split(":")[0] in needed:
                grads.setdefault(src, []).append(g)
        b.node = None
    for i, t in enumerate(arg_types):
        dx = _summed(b, grads.get(args[i], []))
        if dx is None:
            dx = b.add("ZerosLike", [args[i]], {"T": t})
        b.add("_Retval", [dx], {"T": t, "index": i}, [])
    return gd


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


def _topological(gd: graph_pb2.GraphDef) -> list[Any]:
    by_name = {nd.name: nd for nd in gd.node}
    order: list[Any] = []
    state: dict[str, int] = {}
    for root in gd.node:
        stack = [(root.name, False)]
        while stack:
            name, done = stack.pop()
            if done:
                state[name] = 2
                order.append(by_name[name])
                continue
            if state.get(name):
                continue
            state[name] = 1
            stack.append((name, True))
            for s in by_name[name].input:
                src = s.lstrip("^").split(":")[0]
                if src in by_name and not state.get(src):
                    stack.append((src, False))
    if len(order) != len(gd.node):
        raise InvalidArgumentError("SymbolicGradient: the function body has a cycle")
    return order
