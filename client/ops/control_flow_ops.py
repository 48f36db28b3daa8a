"""Client, graph building: TF1 control flow (tf.cond, tf.while_loop, group, tuple) built
from v1 control-flow ops (Switch/Merge/Enter/Exit/NextIteration/LoopCond).

Like TensorFlow's control_flow_ops.py: a CondContext or WhileContext is the graph's
control-flow context while a branch or loop body is built; `AddOp` rewires inputs that
come from outside (a Switch on the predicate for a cond branch, a constant Enter for a
loop) and gives input-less ops a control edge from the pivot so they run in the right
frame and branch.
"""

from __future__ import annotations

import abc
import builtins
from collections.abc import Callable
from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.nest import flatten as _flatten
from client.framework.nest import pack_sequence_as as _pack_as
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, control_flow_util


def _out(op: Any, i: int = 0) -> Any:
    return op.outputs[i]


# -- simple ops -----------------------------------------------------------------------------
def no_op(name: str | None = None) -> Any:
    return apply_op("NoOp", [], {}, name)


def group(*inputs: Any, name: str | None = None) -> Any:
    """A NoOp depending on all inputs, grouped per device as TF's: inputs on one device
    get a NoOp on that device; inputs on several get one NoOp per device (sorted) and the
    returned NoOp depends on those."""
    flat: list[Any] = []
    for x in inputs:
        flat.extend(_flatten(x))
    with _ops.name_scope(name, "group_deps", flat) as scope:
        ops = [
            x
            if isinstance(x, _ops.Operation)
            else convert_to_tensor(x).op
            if not hasattr(x, "op") or not isinstance(x.op, _ops.Operation)
            else x.op
            for x in flat
        ]
        if not ops:
            return no_op(name=scope)
        on_device: dict[str, list[Any]] = {}
        for op in ops:
            on_device.setdefault(op.device, []).append(op)
        if len(on_device) == 1:
            ((dev, deps),) = on_device.items()
            return _group_on_device(dev, deps, scope)
        per_device = [_group_on_device(d, on_device[d], None) for d in sorted(on_device)]
        with _ops.control_dependencies(per_device):
            return no_op(name=scope)


def _group_on_device(device: str, deps: list[Any], name: str | None) -> Any:
    with _ops.control_dependencies(deps), _ops.device(device):
        return no_op(name=name)


def tuple(tensors: Any, name: str | None = None, control_inputs: Any = None) -> list[Any]:
    """TF's tuple: one group_deps NoOp over the tensors' ops (in creation order), then
    each tensor through with_dependencies on it (an Operation through a group)."""
    with _ops.name_scope(name, "tuple", tensors):
        gating_ops: list[Any] = []
        for t in tensors:
            if t is None:
                continue
            t_op = t if isinstance(t, _ops.Operation) else _values_op(t)
            if t_op not in gating_ops:
                gating_ops.append(t_op)
        gating_ops.extend(c for c in (control_inputs or []) if c not in gating_ops)
        gating_ops.sort(key=lambda o: o.graph._ops.index(o))
        gate = group(*gating_ops)
        out: list[Any] = []
        for t in tensors:
            if t is None:
                out.append(None)
            elif isinstance(t, _ops.Operation):
                with _ops.control_dependencies([gate]):
                    out.append(group(t))
            else:
                out.append(with_dependencies([gate], t))
        return out


def _values_op(t: Any) -> Any:
    """The op of a tensor, or of an IndexedSlices' values."""
    return t.op if isinstance(t, _ops.Tensor) else t.values.op


def with_dependencies(dependencies: Any, output_tensor: Any, name: str | None = None) -> Any:
    deps = list(dependencies) + [output_tensor]
    with _ops.name_scope(name, "control_dependency", deps) as scope:
        values = output_tensor if isinstance(output_tensor, _ops.Tensor) else output_tensor.values
        with _ops.colocate_with(values), _ops.control_dependencies(dependencies):
            if isinstance(output_tensor, _ops.Tensor):
                return array_ops.identity(output_tensor, name=scope)
            return type(output_tensor)(
                array_ops.identity(values, name=scope),
                output_tensor.indices,
                output_tensor.dense_shape,
            )


def switch(data: Any, pred: Any, name: str | None = None) -> builtins.tuple[Any, Any]:
    # TF's _SwitchRefOrTensor: a reference stays one through a cond (RefSwitch).
    op_type = "RefSwitch" if _is_ref(data) else "Switch"
    op = apply_op(op_type, [data, pred], {}, name or "Switch")
    return op.outputs[0], op.outputs[1]


def _is_ref(data: Any) -> bool:
    return isinstance(data, _ops.Tensor) and data.dtype.is_ref_dtype


def merge(inputs: Any, name: str | None = None) -> builtins.tuple[Any, Any]:
    op = apply_op("Merge", [list(inputs)], {}, name)
    return op.outputs[0], op.outputs[1]


# -- contexts -------------------------------------------------------------------------------
def _in_context(op: Any, ctx: Any) -> bool:
    c = op._get_control_flow_context()
    while c is not None:
        if c is ctx:
            return True
        c = c.outer_context
    return False


class ControlFlowContext(abc.ABC):
    def __init__(self) -> None:
        g = _ops.get_default_graph()
        self.outer_context = g._get_control_flow_context()
        self._values: set[str] = set()
        self._external_values: dict[str, Any] = {}
        self._saved: list[Any] = []

    def Enter(self) -> None:
        g = _ops.get_default_graph()
        self._saved.append(g._get_control_flow_context())
        g._set_control_flow_context(self)

    def Exit(self) -> None:
        _ops.get_default_graph()._set_control_flow_context(self._saved.pop())

    def AddName(self, name: str) -> None:
        self._values.add(name)

    def ExitResult(self, result: list[Any]) -> None:
        """Make `result` (this context's outputs) known values of the outer context."""
        if self.outer_context is not None:
            for x in result:
                self.outer_context.AddName(x.name)

    def GetWhileContext(self) -> Any:
        return self.outer_context.GetWhileContext() if self.outer_context is not None else None

    def AddInnerOp(self, op: Any) -> None:
        for x in op.outputs:
            self._values.add(x.name)
        if self.outer_context is not None:
            self.outer_context.AddInnerOp(op)

    def _remove_external_control_edges(self, op: Any) -> list[Any]:
        internal = [c for c in op._control_inputs if _in_context(c, self)]
        external = [c for c in op._control_inputs if not _in_context(c, self)]
        if external and not isinstance(self, CondContext):
            for c in external:
                op._control_inputs.remove(c)
                c._control_outputs.remove(op)
        return internal

    @abc.abstractmethod
    def GetControlPivot(self) -> Any:
        """The tensor whose control edge gates this context's ops."""


class CondContext(ControlFlowContext):
    """One branch of a tf.cond: external values enter through Switch(x, pred)[branch]."""

    def __init__(self, pred: Any, pivot: Any, branch: int) -> None:
        super().__init__()
        self.pred = pred
        self.pivot = pivot
        self.branch = branch
        self._values.add(pred.name)
        self._values.add(pivot.name)

    def GetControlPivot(self) -> Any:
        return self.pivot

    def AddValue(self, val: Any) -> Any:
        if val.name in self._values:
            result = self._external_values.get(val.name)
            return val if result is None else result
        if _in_context(val.op, self):
            return val
        result = val
        self._values.add(val.name)
        if self.outer_context is not None:
            result = self.outer_context.AddValue(val)
            self._values.add(result.name)
            self._external_values[result.name] = result
        with _ops.control_dependencies(None):
            result = switch(result, self.pred)[self.branch]
            if self.outer_context is not None:
                self.outer_context.AddInnerOp(result.op)
        result.op._set_control_flow_context(self)
        self._values.add(result.op.outputs[0].name)
        self._values.add(result.op.outputs[1].name)
        self._external_values[val.name] = result
        return result

    def AddOp(self, op: Any) -> None:
        if not op._inputs:
            internal = self._remove_external_control_edges(op)
            if not internal:
                op._add_control_input(self.pivot.op)
        else:
            for i, x in enumerate(list(op._inputs)):
                if op.type == "Merge" and x.op.type == "NextIteration":
                    continue
                real = self.AddValue(x)
                if real is not x:
                    op._update_input(i, real)
        for x in op.outputs:
            self._values.add(x.name)
        if self.outer_context is not None:
            self.outer_context.AddInnerOp(op)

    def BuildCondBranch(self, fn: Callable[[], Any]) -> builtins.tuple[Any, list[Any]]:
        original = fn()
        if original is None:
            return None, []
        flat = _flatten(original)
        results = []
        for v in flat:
            if isinstance(v, _ops.Operation):  # TF: the pivot, through with_dependencies
                results.append(with_dependencies([v], self.pivot))
                continue
            if hasattr(v, "_as_graph_element") and not isinstance(v, _ops.Tensor):
                v = v.value()
            v = convert_to_tensor(v)
            results.append(self._process_output(v))
        return original, results

    def _process_output(self, val: Any) -> Any:
        if val.name not in self._values and not _in_context(val.op, self):
            self._values.add(val.name)
            real = val
            if self.outer_context is not None:
                real = self.outer_context.AddValue(val)
                self._values.add(real.name)
                self._external_values[real.name] = real
            # TF's _ProcessOutputTensor: made in the branch and under the caller's control
            # dependencies (unlike AddValue's Switches), so a Merge of it is dominated.
            real = switch(real, self.pred)[self.branch]
            self._external_values[val.name] = real
            return real
        return self._external_values.get(val.name, val)


def cond(
    pred: Any,
    true_fn: Callable[[], Any] | None = None,
    false_fn: Callable[[], Any] | None = None,
    strict: bool = False,
    name: str | None = None,
    fn1: Any = None,
    fn2: Any = None,
) -> Any:
    """tf.compat.v1.cond with v1 control flow: Switch on pred, one CondContext per
    branch, Merge of the branch results."""
    true_fn = true_fn or fn1
    false_fn = false_fn or fn2
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("true_fn and false_fn must be callable.")
    with _ops.name_scope(name, "cond", [pred]):
        pred = convert_to_tensor(pred)
        if pred.dtype.base_dtype != dtypes.bool:
            raise TypeError(f"pred must be a bool tensor, got {pred.dtype.name}")
        p_2, p_1 = switch(pred, pred)
        pivot_1 = array_ops.identity(p_1, name="switch_t")
        pivot_2 = array_ops.identity(p_2, name="switch_f")
        pred = array_ops.identity(pred, name="pred_id")
        context_t = CondContext(pred, pivot_1, branch=1)
        context_t.Enter()
        try:
            orig_t, res_t = context_t.BuildCondBranch(true_fn)
        finally:
            context_t.Exit()
        context_f = CondContext(pred, pivot_2, branch=0)
        context_f.Enter()
        try:
            orig_f, res_f = context_f.BuildCondBranch(false_fn)
        finally:
            context_f.Exit()
        if orig_t is None and orig_f is None:
            return None
        if len(res_t) != len(res_f):
            raise ValueError(
                "true_fn and false_fn must have the same type of structure, got "
                f"{len(res_t)} and {len(res_f)} outputs"
            )
        for t, f in zip(res_t, res_f):
            if t.dtype.base_dtype != f.dtype.base_dtype:
                raise ValueError(
                    f"Outputs of true_fn and false_fn must have the same type: "
                    f"{t.dtype.name}, {f.dtype.name}"
                )
        merges = [merge([f, t])[0] for f, t in zip(res_f, res_t)]
        if not isinstance(orig_t, (list, builtins.tuple, dict)) and len(merges) == 1:
            return merges[0]
        structure = orig_t if orig_t is not None else orig_f
        flat_struct = _flatten(structure)
        merges = [
            m if not isinstance(s, _ops.Operation) else m.op for m, s in zip(merges, flat_struct)
        ]
        return _pack_as(structure, merges)


class WhileContext(ControlFlowContext):
    """The frame of one tf.while_loop: external values enter as constant Enters."""

    def __init__(
        self,
        parallel_iterations: int = 10,
        back_prop: bool = True,
        name: str = "while_context",
        grad_state: Any = None,
    ) -> None:
        super().__init__()
        self.name = _ops.get_default_graph().unique_name(name)
        self.parallel_iterations = parallel_iterations
        self.back_prop = back_prop
        # Set on a gradient loop: the GradLoopState (client.ops.control_flow_state) that
        # built it, whose forward values AddValue replaces by stack pops.
        self.grad_state = grad_state
        self.pivot = None
        self.pivot_for_pred = None
        self.pivot_for_body = None
        self.loop_exits: list[Any] = []
        self.loop_enters: list[Any] = []

    def GetControlPivot(self) -> Any:
        return self.pivot_for_body if self.pivot_for_body is not None else self.pivot_for_pred

    def GetWhileContext(self) -> Any:
        return self

    def AddValue(self, val: Any) -> Any:
        result = val
        if val.name not in self._values and not _in_context(val.op, self):
            self._values.add(val.name)
            real = self._forward_value_in_grad_loop(val)
            if real is not None:
                self._external_values[val.name] = real
                return real
            if self.outer_context is not None:
                result = self.outer_context.AddValue(val)
            with _ops.control_dependencies(None):
                enter = _enter(
                    result,
                    self.name,
                    is_constant=True,
                    parallel_iterations=self.parallel_iterations,
                )
                if self.outer_context is not None:
                    self.outer_context.AddInnerOp(enter.op)
            enter.op._set_control_flow_context(self)
            self._values.add(enter.name)
            self._external_values[val.name] = enter
            return enter
        actual = self._external_values.get(val.name)
        return val if actual is None else actual

    @staticmethod
    def _forward_value_in_grad_loop(val: Any) -> Any:
        """In a gradient loop, a value of its forward loop is read through the
        GradLoopState (a stack pop, or the invariant itself); else None."""
        grad_ctxt = _ops.get_default_graph()._get_control_flow_context()
        grad_ctxt = grad_ctxt.GetWhileContext() if grad_ctxt is not None else None
        if grad_ctxt is None or grad_ctxt.grad_state is None:
            return None
        forward_ctxt = get_while_context(val.op)
        if is_loop_exit(val.op) and forward_ctxt is not None:
            forward_ctxt = forward_ctxt.outer_context
            forward_ctxt = forward_ctxt.GetWhileContext() if forward_ctxt is not None else None
        if forward_ctxt is not grad_ctxt.grad_state.forward_context:
            return None
        return grad_ctxt.grad_state.GetRealValue(val)

    def AddOp(self, op: Any) -> None:
        if op.type in ("Shape", "Size", "Rank") and self._move_to_forward(op):
            return
        self._add_op_internal(op)

    @staticmethod
    def _move_to_forward(op: Any) -> bool:
        """TF's WhileContext.AddOp: Shape/Size/Rank of a forward value built in its
        gradient loop runs in the forward loop, so the stack keeps the small result."""
        grad_ctxt = _ops.get_default_graph()._get_control_flow_context()
        grad_ctxt = grad_ctxt.GetWhileContext() if grad_ctxt is not None else None
        if grad_ctxt is None or grad_ctxt.grad_state is None:
            return False
        if get_while_context(op.inputs[0].op) is not grad_ctxt.grad_state.forward_context:
            return False
        input_ctxt = op.inputs[0].op._get_control_flow_context()
        op._set_control_flow_context(input_ctxt)
        input_ctxt._add_op_internal(op)
        return True

    def _add_op_internal(self, op: Any) -> None:
        if not op._inputs:
            internal = self._remove_external_control_edges(op)
            if not internal and self.GetControlPivot() is not None:
                op._add_control_input(self.GetControlPivot().op)
        else:
            for i, x in enumerate(list(op._inputs)):
                real = self.AddValue(x)
                if real is not x:
                    op._update_input(i, real)
            self._remove_external_control_edges(op)
            if self._is_op_free(op) and self.GetControlPivot() is not None:
                op._add_control_input(self.GetControlPivot().op)
        for x in op.outputs:
            self._values.add(x.name)
        if self.outer_context is not None:
            self.outer_context.AddInnerOp(op)

    @staticmethod
    def _is_op_free(op: Any) -> bool:
        if op._control_inputs:
            return False
        return all(x.op.type == "Enter" and x.op.get_attr("is_constant") for x in op._inputs)


# -- control-flow structure queries (TF's control_flow_util) ----------------------------------
def is_loop_exit(op: Any) -> bool:
    return op.type in ("Exit", "RefExit")


def is_loop_switch(op: Any) -> bool:
    """A loop variable's Switch: in a WhileContext, switched on its LoopCond."""
    if op.type not in ("Switch", "RefSwitch"):
        return False
    ctx = op._get_control_flow_context()
    return isinstance(ctx, WhileContext) and ctx.pivot is not None and op.inputs[1] is ctx.pivot


def get_while_context(op: Any) -> Any:
    ctx = op._get_control_flow_context()
    return ctx.GetWhileContext() if ctx is not None else None


def get_output_context(op: Any) -> Any:
    """The context of op's outputs: an Exit's outputs belong to the enclosing context."""
    ctx = op._get_control_flow_context()
    if ctx is not None and is_loop_exit(op):
        ctx = ctx.outer_context
    return ctx


def get_loop_constant_enter(value: Any) -> Any:
    op = value.op
    while op.type in ("Identity", "RefIdentity", "Switch", "RefSwitch"):
        op = op.inputs[0].op
    if op.type in ("Enter", "RefEnter") and op.get_attr("is_constant"):
        return op
    return None


# -- loop building blocks -------------------------------------------------------------------
def exit(data: Any, name: str | None = None) -> Any:  # noqa: A001  (TF's name)
    with _ops.name_scope(name, "Exit", [data]) as scope:
        op = apply_op("Exit", [data], {}, scope)
    op.outputs[0]._shape = data.shape
    return op.outputs[0]


def next_iteration(data: Any, name: str | None = None) -> Any:
    op = apply_op("NextIteration", [data], {}, name)
    op.outputs[0]._shape = data.shape
    return op.outputs[0]


def loop_cond(pred: Any, name: str | None = None) -> Any:
    return apply_op("LoopCond", [pred], {}, name).outputs[0]


def control_trigger(name: str | None = None) -> Any:
    return apply_op("ControlTrigger", [], {}, name)


def add_next_and_back_edge(m: Any, v: Any) -> Any:
    """Close a loop: v's NextIteration becomes m's Merge's second input."""
    n = next_iteration(convert_to_tensor(v))
    m.op._update_input(1, n)
    return n


def _enter(
    data: Any,
    frame_name: str,
    is_constant: bool = False,
    parallel_iterations: int = 10,
    name: str | None = None,
) -> Any:
    # TF's _Enter: a reference enters a loop as one (RefEnter), so the body can write it.
    op = apply_op(
        "RefEnter" if _is_ref(data) else "Enter",
        [data],
        {
            "frame_name": frame_name,
            "is_constant": is_constant,
            "parallel_iterations": parallel_iterations,
        },
        name,
    )
    op.outputs[0]._shape = data.shape
    return op.outputs[0]


def while_loop(
    cond: Callable[..., Any],
    body: Callable[..., Any],
    loop_vars: Any,
    shape_invariants: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: str | None = None,
    maximum_iterations: Any = None,
    return_same_structure: bool = False,
) -> Any:
    """tf.compat.v1.while_loop with v1 control flow (TF's WhileContext.BuildLoop)."""
    if not callable(cond) or not callable(body):
        raise TypeError("cond and body must be callable.")
    if parallel_iterations < 1:
        raise TypeError("parallel_iterations must be a positive integer.")
    with _ops.name_scope(name, "while", _flatten(loop_vars)):
        if maximum_iterations is not None:
            max_iter = convert_to_tensor(maximum_iterations, name="maximum_iterations")
            orig_cond, orig_body = cond, body
            counter = convert_to_tensor(0, dtype=max_iter.dtype, name="iteration_counter")
            loop_vars = (counter, loop_vars)
            single = not isinstance(loop_vars[1], (list, builtins.tuple, dict))

            def cond(i: Any, lv: Any) -> Any:
                from client.ops import math_ops

                below = i < max_iter  # built first, as TF's
                c = orig_cond(lv) if single else orig_cond(*lv)
                return math_ops.logical_and(below, c)

            def body(i: Any, lv: Any) -> Any:
                step = i + 1  # built first, as TF's
                out = orig_body(lv) if single else orig_body(*lv)
                return (step, out)

            if shape_invariants is not None:
                shape_invariants = (TensorShape([]), shape_invariants)
            result = _build_loop(
                cond, body, loop_vars, parallel_iterations, back_prop, True, shape_invariants
            )
            out = result[1]
        else:
            out = _build_loop(
                cond,
                body,
                loop_vars,
                parallel_iterations,
                back_prop,
                isinstance(loop_vars, (list, builtins.tuple)) and not hasattr(loop_vars, "_fields"),
                shape_invariants,
            )
        flat = _flatten(out)
        if not return_same_structure and len(flat) == 1:
            return flat[0]
        return out


def _flat_invariants(loop_vars: Any, shape_invariants: Any) -> list[Any] | None:
    """One TensorShape per flattened loop variable (TF's _shape_invariant_to_type_spec
    mapped over loop_vars and shape_invariants), or None when none were given."""
    if shape_invariants is None:
        return None
    flat_vars, flat = _flatten(loop_vars), _flatten(shape_invariants)
    if len(flat) != len(flat_vars):
        raise ValueError(
            "The two structures don't have the same number of elements. "
            f"First structure: {len(flat_vars)} elements, second: {len(flat)} elements."
        )
    for shape in flat:
        if shape is not None and not isinstance(shape, TensorShape):
            raise TypeError(
                f"'shape' must be one of TypeSpec, TensorShape or None. Received: {type(shape)}"
            )
    return flat


def _shape_less_than_or_equal(a: Any, b: Any) -> bool:
    """TF's _ShapeLessThanOrEqual: `a` is at least as specific as `b`."""
    if b.ndims is None:
        return True
    if a.ndims != b.ndims:
        return False
    return all(y is None or x == y for x, y in zip(a.as_list(), b.as_list()))


def _enforce_shape_invariant(merge_var: Any, next_var: Any, enter_input: Any) -> None:
    """TF's _EnforceShapeInvariant, raised only where the shapes contradict each other:
    where ours is merely less specific (a shape TF's C++ inference knows and ours does
    not), TF's graph kept the Merge's shape, and so does ours."""
    m, n = merge_var.shape, next_var.shape
    if m.ndims is None or n.ndims is None:
        return
    if m.ndims == n.ndims and all(
        x is None or y is None or x == y for x, y in zip(m.as_list(), n.as_list())
    ):
        return
    # TF 2.x builds while_v2 unless control flow v2 is off; its message quotes the name
    # differently and gives the invariant's shape rather than the initial value's.
    if control_flow_util.control_flow_v2_enabled():
        which = f"Input tensor `{enter_input.name}` enters the loop with shape {m}"
    else:
        which = f"Input tensor '{enter_input.name}' enters the loop with shape {enter_input.shape}"
    raise ValueError(
        f"{which}, but has shape {n} after one iteration. To allow the shape to vary across "
        "iterations, use the `shape_invariants` argument of tf.while_loop to specify a "
        "less-specific shape."
    )


def _build_loop(
    cond: Any,
    body: Any,
    loop_vars: Any,
    parallel_iterations: int,
    back_prop: bool,
    unpack: bool,
    shape_invariants: Any = None,
) -> Any:
    from client.ops.tensor_array_ops import TensorArray

    # A TensorArray loop variable travels as its flow (TF's _convert_tensorarray_to_flow)
    # and is rebuilt around the flow inside and after the loop.
    arrays = [v if isinstance(v, TensorArray) else None for v in _flatten(loop_vars)]

    def as_tensor(v: Any) -> Any:
        if isinstance(v, TensorArray):
            return v.flow
        if not hasattr(v, "_as_graph_element") or isinstance(v, _ops.Tensor):
            return convert_to_tensor(v)
        return v.value()

    def repack(tensors: list[Any]) -> Any:
        return _pack_as(
            loop_vars, [t if ta is None else ta._like(t) for ta, t in zip(arrays, tensors)]
        )

    invariants = _flat_invariants(loop_vars, shape_invariants)
    flat_vars = [as_tensor(v) for v in _flatten(loop_vars)]
    ctx = WhileContext(parallel_iterations, back_prop)
    ctx.Enter()
    try:
        for x in flat_vars:
            ctx._values.add(x.name)
        # An enclosing context makes the initial values its own first (a cond's Switch).
        real_vars = flat_vars
        if ctx.outer_context is not None:
            real_vars = [ctx.outer_context.AddValue(x) for x in flat_vars]
        with _ops.control_dependencies(None):
            enter_vars = [_enter(x, ctx.name, False, parallel_iterations) for x in real_vars]
        for x, e, shape in zip(real_vars, enter_vars, invariants or []):
            if shape is None:
                continue
            # while_v2 takes the invariant as given; the body's shape check catches a
            # contradiction with the initial value.
            v2 = control_flow_util.control_flow_v2_enabled()
            if not v2 and not _shape_less_than_or_equal(x.shape, shape):
                raise ValueError(
                    f"The shape invariant specified for {x.name} is not compatible with the "
                    f"initial shape of the loop variable. It enters the loop with shape "
                    f"{x.shape}, but the specified shape invariant is {shape}."
                )
            e._shape = shape
        for e in enter_vars:
            e.op._set_control_flow_context(ctx)
            if ctx.outer_context is not None:
                ctx.outer_context.AddInnerOp(e.op)
        # Only the Enters are the loop's own values now (TF's _InitializeValues(enter_vars)):
        # the body reading an initial value directly enters it again, as a constant.
        ctx._values = {e.name for e in enter_vars}
        ctx.loop_enters = enter_vars
        merge_vars = []
        for e in enter_vars:
            m = merge([e, e])[0]
            merge_vars.append(m)
        # Loop variables change per iteration: the Merge output shape is what the
        # Enter and NextIteration agree on (TF's shape invariants default).
        ctx.pivot_for_pred = merge_vars[0]
        packed = repack(merge_vars)
        c = cond(*packed) if unpack else cond(packed)
        c = convert_to_tensor(c)
        ctx.pivot = apply_op("LoopCond", [c], {}, "LoopCond").outputs[0]
        switch_vars = [switch(m, ctx.pivot) for m in merge_vars]
        body_vars = [array_ops.identity(s[1]) for s in switch_vars]
        ctx.pivot_for_body = body_vars[0]
        packed_body = repack(body_vars)
        result = body(*packed_body) if unpack else body(packed_body)
        if unpack and not isinstance(result, (list, builtins.tuple)):
            result = [result]
        flat_result = [as_tensor(r) for r in _flatten(result)]
        if len(flat_result) != len(merge_vars):
            raise ValueError(
                "The two structures don't have the same number of elements. "
                f"First structure: {len(merge_vars)} elements, second: {len(flat_result)} elements."
            )
        next_vars = []
        for m, r in zip(merge_vars, flat_result):
            if r.dtype.base_dtype != m.dtype.base_dtype:
                raise ValueError(
                    f"Loop variable {m.name} enters the loop with type {m.dtype.name} but "
                    f"has type {r.dtype.name} after 1 iteration."
                )
            n = apply_op("NextIteration", [r], {}).outputs[0]
            _enforce_shape_invariant(m, n, m.op.inputs[0].op.inputs[0])
            m.op._update_input(1, n)
            next_vars.append(n)
    finally:
        ctx.Exit()
    exit_vars = []
    for s in switch_vars:
        op = apply_op("Exit", [s[0]], {})
        op._set_control_flow_context(ctx)
        exit_vars.append(op.outputs[0])
    ctx.loop_exits = exit_vars
    return repack(exit_vars)
