"""Client, graph building: TF's cond_v2, the functional conditional TensorFlow 2.x builds
in graph mode (what tf.Assert guards itself with: "Assert/AssertGuard").

Each branch is traced into a FunctionDef of the outermost graph's library, named
"<scope>_true_<uid>" / "<scope>_false_<uid>" (the name scope with "/" made "_"). The
outer tensors a branch uses are its arguments, named as TF names them: the name scope of
the op that captured the tensor, then the tensor's op name ("Assert/preds" -> argument
"assert_preds"); an argument only the other branch uses is a dummy "Placeholder". One
If node (StatelessIf when neither branch is stateful) takes the predicate and the union
of both branches' captures, in order, and carries `_lower_using_switch_merge`: the
runtime lowers it to Switch/Merge (common.optimizer.lower_functional). Each output goes
through an Identity "<scope>/Identity". A branch returning an Operation returns the
predicate after it, as TF's op_return_value. Graph building; not thread-safe.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from client.framework import ops as _ops
from client.framework import shape_fns
from client.framework.function import FuncGraph, func_attr, graph_to_function_def
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops

Tensor = _ops.Tensor

# TF's ops.uid(): a process-wide counter that keeps branch function names unique.
_uid = itertools.count(1)


class CondBranchFuncGraph(FuncGraph):
    """A branch being traced; remembers, per captured outer tensor, the name TF gives its
    placeholder (the capturing op's name scope + the tensor's op name)."""

    def __init__(self, name: str, outer_graph: _ops.Graph) -> None:
        super().__init__(name, outer_graph)
        self.capture_names: dict[str, str] = {}  # outer tensor name -> argument name

    def capture(self, tensor: Tensor) -> Tensor:
        if tensor.graph is not self and tensor.name not in self.capture_names:
            scope = self.get_name_scope()
            self.capture_names[tensor.name] = (
                f"{scope}/{tensor.op.name}" if scope else tensor.op.name
            )
        return super().capture(tensor)


def _trace_branch(name: str, fn: Callable[[], Any], pred: Tensor) -> CondBranchFuncGraph:
    fg = CondBranchFuncGraph(name, _ops.get_default_graph())
    with fg.as_default():
        result = fn()
        if result is None:
            results = []
        else:
            results = list(result) if isinstance(result, (list, tuple)) else [result]
        outputs = []
        for r in results:
            if isinstance(r, _ops.Operation):
                with fg.control_dependencies([r]):
                    r = array_ops.identity(pred)
            t = convert_to_tensor(r)
            if t.graph is not fg:  # an outer tensor returned as is: its placeholder, as TF
                t = fg.capture(t)
            outputs.append(t)
        fg.outputs = outputs
    return fg


def _function_def(fg: CondBranchFuncGraph, cond_inputs: list[Tensor]) -> Any:
    """The branch's FunctionDef taking every input of the If (TF's _make_inputs_match)."""
    captured = {outer.name: inner for outer, inner in fg.captures}
    args, names = [], []
    for t in cond_inputs:
        inner = captured.get(t.name)
        if inner is None:
            with fg.as_default():
                inner = array_ops.placeholder(t.dtype.base_dtype, t.shape)
            names.append(inner.op.name)
        else:
            names.append(fg.capture_names[t.name])
        args.append(inner)
    fg.inputs = args
    return graph_to_function_def(fg.name, fg.get_operations(), args, fg.outputs, arg_names=names)


def cond_v2(
    pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any], name: str = "cond"
) -> list[Tensor]:
    """The If node's outputs, each through an Identity, for `true_fn` / `false_fn` (each
    returning tensors or an Operation, or None for no outputs)."""
    with _ops.name_scope(name) as scope:
        true_name = f"{scope}true_{next(_uid)}".replace("/", "_")
        false_name = f"{scope}false_{next(_uid)}".replace("/", "_")
        pred = convert_to_tensor(pred)
        true_graph = _trace_branch(true_name, true_fn, pred)
        false_graph = _trace_branch(false_name, false_fn, pred)
        for t, f in zip(true_graph.outputs, false_graph.outputs, strict=True):
            if t.dtype != f.dtype:
                raise TypeError(
                    f"true_fn and false_fn arguments to tf.cond must have the same dtypes: "
                    f"{t.dtype} and {f.dtype}"
                )
        cond_inputs: list[Tensor] = []
        for g in (true_graph, false_graph):
            for outer, _ in g.captures:
                if all(outer is not x for x in cond_inputs):
                    cond_inputs.append(outer)
        outer_graph = _ops.get_default_graph()
        fdefs = [_function_def(g, cond_inputs) for g in (true_graph, false_graph)]
        for fdef in fdefs:
            outer_graph._add_function(fdef)
        stateful = any(f.signature.is_stateful for f in fdefs)
        shapes = [
            _common_shape(t.shape, f.shape) for t, f in zip(true_graph.outputs, false_graph.outputs)
        ]
        op = apply_op(
            "If" if stateful else "StatelessIf",
            [pred, cond_inputs],
            {
                "Tout": [t.dtype.base_dtype for t in true_graph.outputs],
                "then_branch": func_attr(true_name),
                "else_branch": func_attr(false_name),
                "output_shapes": shapes,
                "_lower_using_switch_merge": True,
            },
            scope,
        )
        return [array_ops.identity(t) for t in op.outputs]


def _common_shape(a: TensorShape, b: TensorShape) -> TensorShape:
    """TF's most_specific_compatible_shape: the dims both branches agree on."""
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


def _if_shapes(op: Any) -> list[TensorShape]:
    """TF's If shape function: the `output_shapes` attr when set, else unknown."""
    shapes = [TensorShape(s) for s in op.get_attr("output_shapes")]
    return shapes or [TensorShape(None) for _ in op.outputs]


for _op_type in ("If", "StatelessIf"):
    shape_fns.SHAPE_FNS.setdefault(_op_type, _if_shapes)
