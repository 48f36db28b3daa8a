"""Client, gradients: tf.gradients — reverse-mode differentiation of the graph.

TensorFlow's gradients_impl in miniature: find the ops between `xs` and `ys`, walk them
in reverse topological order with pending counts, sum each tensor's incoming gradients
with AddN, and call the op type's registered gradient function (client.ops.gradients)
under the name scope "gradients/<op>_grad". Variables in `xs` are differentiated through
their resource handle (ReadVariableOp's gradient flows to the handle). v1 cond is
supported (Switch/Merge gradients, zeros for the untaken branch), and so is v1
while_loop: a gradient loop runs the forward iterations in reverse with forward values
kept on stacks (client.ops.control_flow_state). Graph building: not thread-safe.
"""

from __future__ import annotations

import collections
from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.gradient_registry import (  # noqa: F401  (tf.RegisterGradient ...)
    GRADIENTS,
    NOT_DIFFERENTIABLE,
    SPARSE_GRAD_PASSTHROUGH,
    NotDifferentiable,
    RegisterGradient,
    is_trainable,
    no_gradient,
)
from client.framework.indexed_slices import aggregate, to_dense
from client.framework.op_builder import convert_to_tensor
from client.ops import array_ops, control_flow_state
from client.ops import control_flow_ops as cfo
from client.ops import gradients as _gradient_fns  # noqa: F401  (registers them all)
from client.ops.control_flow_state import zeros_like_outside_loop


def _as_tensor_x(x: Any) -> Any:
    if hasattr(x, "handle") and hasattr(x, "_as_graph_element") and not isinstance(x, _ops.Tensor):
        return x.handle
    if hasattr(x, "_ref"):  # as TF's as_ref=True: a reference variable's VariableV2 output
        return x._ref()
    return convert_to_tensor(x)


def _reachable_forward(start_ops: list[Any]) -> set[Any]:
    """TF's _MarkReachedOps: the ops reachable from start_ops along trainable tensors (an
    int32 size or shape ends the path, so ops computed from it are not between)."""
    seen = set(start_ops)
    queue = collections.deque(start_ops)
    while queue:
        op = queue.popleft()
        for out in op.outputs:
            if not is_trainable(out):
                continue
            for c in out._consumers:
                if c not in seen:
                    seen.add(c)
                    queue.append(c)
    return seen


def _between(
    to_ops: list[Any], from_ops: list[Any], stop: set[Any]
) -> tuple[list[Any], set[Any], set[Any]]:
    """(between ops in backward BFS order, the same as a set, to_ops reachable from xs)."""
    reached = _reachable_forward(from_ops)
    reachable_to_ops = {op for op in to_ops if op in reached}
    between: set[Any] = set()
    between_list: list[Any] = []
    queue = collections.deque(to_ops)
    while queue:
        op = queue.popleft()
        if op not in reached or op in between:
            continue
        between.add(op)
        between_list.append(op)
        if op in stop:
            continue
        queue.extend(t.op for t in op._inputs)
    return between_list, between, reachable_to_ops


def _pending_count(between_list: list[Any], between: set[Any]) -> collections.defaultdict[Any, int]:
    pending: collections.defaultdict[Any, int] = collections.defaultdict(int)
    for op in between_list:
        for t in op._inputs:
            if t.op in between:
                pending[t.op] += 1
    return pending


def gradients(
    ys: Any,
    xs: Any,
    grad_ys: Any = None,
    name: str = "gradients",
    colocate_gradients_with_ops: bool = False,
    gate_gradients: bool = False,
    aggregation_method: Any = None,
    stop_gradients: Any = None,
    unconnected_gradients: str = "none",
) -> list[Any]:
    ys = [
        convert_to_tensor(y) if not isinstance(y, _ops.Tensor) else y
        for y in (ys if isinstance(ys, (list, tuple)) else [ys])
    ]
    xs_list = xs if isinstance(xs, (list, tuple)) else [xs]
    xs_t = [_as_tensor_x(x) for x in xs_list]
    if grad_ys is None:
        grad_ys = [None] * len(ys)
    elif not isinstance(grad_ys, (list, tuple)):
        grad_ys = [grad_ys]
    stop_ops = {_as_tensor_x(s).op for s in (stop_gradients or [])}
    g = ys[0].graph
    with g.as_default(), _ops.name_scope(name, "gradients", list(ys) + list(xs_t)):
        grad_ys = _default_grad_ys(grad_ys, ys)
        to_ops = [y.op for y in ys]
        from_ops = [x.op for x in xs_t]
        between_list, between, reachable_to_ops = _between(to_ops, from_ops, stop_ops)
        loop_state = control_flow_state.maybe_create_control_flow_state(between_list, between)
        pending = _pending_count(between_list, between)
        grads: dict[Any, list[list[Any]]] = {}
        for y, gy in zip(ys, grad_ys):
            _set_grad(grads, y, gy)
        queue: collections.deque[Any] = collections.deque()
        to_ops_set: set[Any] = set()
        for op in to_ops:
            if pending[op] == 0 and op not in to_ops_set and op in reachable_to_ops:
                to_ops_set.add(op)
                queue.append(op)
        if loop_state is not None:
            for y in loop_state.ProcessUnusedLoopExits(pending, to_ops_set):
                if is_trainable(y):
                    _set_grad(grads, y, loop_state.ZerosLikeForExit(y))
                    queue.append(y.op)
        x_ops = set(from_ops)
        while queue:
            op = queue.popleft()
            _backprop_op(op, grads, loop_state, stop_ops, x_ops, gate_gradients)
            _update_pending_and_enqueue_ready(grads, op, queue, pending, loop_state)
        if loop_state is not None:
            loop_state.PostProcessing()
        result = []
        for x in xs_t:
            gs = grads.get(x.op, [[]] * len(x.op.outputs))[x.value_index] if x.op in grads else []
            total = aggregate(gs)
            if total is None and unconnected_gradients == "zero":
                total = array_ops.zeros_like(x)
            result.append(total)
        return result


def _backprop_op(
    op: Any,
    grads: dict[Any, list[list[Any]]],
    loop_state: Any,
    stop_ops: set[Any],
    x_ops: set[Any],
    gate: bool = False,
) -> None:
    """Sum op's output gradients and add its input gradients (TF's loop body), inside
    the gradient loop of op's while loop when there is one."""
    if loop_state is not None:
        loop_state.EnterGradWhileContext(op, before=True)
    out_grads = _aggregated_grads(grads, op)
    if loop_state is not None:
        loop_state.ExitGradWhileContext(op, before=True)
    has_out_grads = any(gr is not None for gr in out_grads)
    differentiate = (
        has_out_grads
        and op not in stop_ops
        and op.type != "Placeholder"
        and not (op in x_ops and not op._inputs)
    )
    if loop_state is not None:
        loop_state.EnterGradWhileContext(op, before=False)
    try:
        if not differentiate:
            return
        for i, gr in enumerate(out_grads):
            if gr is None and is_trainable(op.outputs[i]):
                out_grads[i] = (
                    loop_state.ZerosLike(op, i)
                    if loop_state is not None
                    else zeros_like_outside_loop(op, i)
                )
        in_grads = _call_grad_fn(op, out_grads, gate)
        for t, gr in zip(op._inputs, in_grads):
            if gr is not None and (is_trainable(t) or t.dtype == dtypes.resource):
                if (
                    isinstance(gr, _ops.Tensor)
                    and t.dtype != dtypes.resource
                    and gr.shape.is_compatible_with(t.shape)
                ):
                    gr.set_shape(t.shape)
                _set_grad(grads, t, gr)
    finally:
        if loop_state is not None:
            loop_state.ExitGradWhileContext(op, before=False)


def _has_any_grad(grads: dict[Any, list[list[Any]]], op: Any) -> bool:
    return any(gr is not None for gs in grads.get(op, []) for gr in gs)


def _update_pending_and_enqueue_ready(
    grads: dict[Any, list[list[Any]]], op: Any, queue: Any, pending: Any, loop_state: Any
) -> None:
    """TF's _UpdatePendingAndEnqueueReady: a loop Switch is ready at each visit (from
    its Exit, then from its body); a loop's Exits wait for each other."""
    from client.ops.control_flow_ops import is_loop_exit, is_loop_switch

    for x in op._inputs:
        pending[x.op] -= 1
        ready = pending[x.op] == 0
        if loop_state is not None and not ready:
            ready = pending[x.op] > 0 and is_loop_switch(x.op)
        if not ready:
            continue
        if not (loop_state is not None and is_loop_exit(x.op)):
            queue.append(x.op)
            continue
        grad_state = loop_state.GetGradState(x.op, before=False)
        grad_state.deferred_exits.append(x)
        grad_state.pending_exits_count -= 1
        if grad_state.pending_exits_count != 0:
            continue
        has_not_none_grad = False
        for y in grad_state.deferred_exits:
            if _has_any_grad(grads, y.op):
                has_not_none_grad = True
                queue.append(y.op)
            else:
                grad_state.unused_exits.append(y)
        for y in grad_state.unused_exits:
            if has_not_none_grad and is_trainable(y):
                _set_grad(grads, y, loop_state.ZerosLikeForExit(y))
            queue.append(y.op)


def _default_grad_ys(grad_ys: list[Any], ys: list[Any]) -> list[Any]:
    out = []
    for i, (y, gy) in enumerate(zip(ys, grad_ys)):
        if gy is None:
            # TF's _DefaultGradYs: ones(shape(y), name="grad_ys_i"), so the Shape is named
            # in the gradients scope itself ("gradients/Shape").
            y_shape = array_ops.shape(y)
            with _ops.name_scope(f"grad_ys_{i}") as scope:
                out.append(array_ops.fill(y_shape, convert_to_tensor(1, dtype=y.dtype), name=scope))
        else:
            # TF names a given gradient in the gradients scope (Identity "grad_ys_i"):
            # TensorArray gradients find their gradients call from that name.
            gy = convert_to_tensor(gy, dtype=y.dtype, name="grad_y")
            out.append(array_ops.identity(gy, name=f"grad_ys_{i}"))
    return out


def _set_grad(grads: dict[Any, list[list[Any]]], t: Any, gr: Any) -> None:
    per_op = grads.setdefault(t.op, [[] for _ in t.op.outputs])
    per_op[t.value_index].append(gr)


def _aggregated_grads(grads: dict[Any, list[list[Any]]], op: Any) -> list[Any]:
    """Each output's gradients summed (AddN, or IndexedSlices concatenated: `aggregate`);
    the sum replaces the list (a loop Switch is visited twice and must not sum twice)."""
    per_op = grads.get(op, [[] for _ in op.outputs])
    out: list[Any] = []
    for i, gs in enumerate(per_op):
        gs = [gr for gr in gs if gr is not None]
        if not gs:
            out.append(None)
            continue
        total = aggregate(gs)
        per_op[i] = [total]
        out.append(total)
    return out


def _call_grad_fn(op: Any, out_grads: list[Any], gate: bool = False) -> list[Any]:
    mapped = op._attrs.get("_gradient_op_type")
    op_type = mapped.s.decode() if mapped is not None else op.type
    if op_type in NOT_DIFFERENTIABLE:
        return [None] * len(op._inputs)
    fn = GRADIENTS.get(op_type)
    if fn is None:
        raise LookupError(
            f"No gradient defined for operation '{op.name}' (op type: {op.type}). In general "
            "every operation must have an associated `@tf.RegisterGradient` for correct "
            "autodiff, which this one is lacking."
        )
    with _ops.name_scope(op.name + "_grad"):
        if op_type not in SPARSE_GRAD_PASSTHROUGH:
            out_grads = [to_dense(gr) for gr in out_grads]
        result = fn(op, *out_grads)
        if not isinstance(result, (list, tuple)):
            result = [result]
        result = list(result)
        if gate and sum(r is not None for r in result) > 1:
            # TF's gate_gradients: the op's input gradients are joined in a tuple, so
            # none is used before all are computed.
            with _ops.device(None), _ops.colocate_with(None, ignore_existing=True):
                result = cfo.tuple(result)
    if len(result) != len(op._inputs):
        raise ValueError(
            f"Num gradients {len(result)} generated for op {op.node_def} do not match num "
            f"inputs {len(op._inputs)}"
        )
    return result
