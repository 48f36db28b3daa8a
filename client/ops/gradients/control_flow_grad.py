"""Client, gradients: v1 control flow (TensorFlow's control_flow_grad.py) -- Switch, Merge,
Enter, Exit, NextIteration in cond and while_loop."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.gradient_registry import RegisterGradient
from client.ops import math_ops


@RegisterGradient("Switch")
def _switch_grad(op: Any, *grad: Any) -> Any:
    from client.ops.control_flow_ops import (
        CondContext,
        WhileContext,
        add_next_and_back_edge,
        merge,
        switch,
    )

    op_ctxt = op._get_control_flow_context()
    grad_ctxt = _ops.get_default_graph()._get_control_flow_context()
    if isinstance(op_ctxt, WhileContext):
        grad_state = grad_ctxt.grad_state
        merge_grad = grad_state.switch_map.get(op)
        if merge_grad is not None:
            # Second visit, from the loop body: close the gradient loop's back edge.
            if grad[1] is not None:
                add_next_and_back_edge(merge_grad, grad[1])
            return None, None
        if grad[0] is not None:
            # First visit, from the Exit: the back edge is filled in at the second.
            merge_grad = merge([grad[0], grad[0]], name="b_switch")[0]
            grad_state.switch_map[op] = merge_grad
            return merge_grad, None
        return None, None
    if isinstance(op_ctxt, CondContext):
        zero_grad = grad[1 - op_ctxt.branch]
        if zero_grad is None:
            if op.inputs[0].dtype == dtypes.resource:
                return merge([grad[op_ctxt.branch]] * 2, name="cond_resource_grad")[0], None
            return None, None
        return merge(list(grad), name="cond_grad")[0], None
    false_grad = switch(grad[0], op.inputs[1])[0]
    true_grad = switch(grad[1], op.inputs[1])[1]
    return merge([false_grad, true_grad])[0], None


@RegisterGradient("Merge")
def _merge_grad(op: Any, grad: Any, _: Any) -> Any:
    from client.ops.control_flow_ops import CondContext, WhileContext, get_output_context, switch

    op_ctxt = get_output_context(op.inputs[0].op)
    grad_ctxt = _ops.get_default_graph()._get_control_flow_context()
    if isinstance(op_ctxt, WhileContext):
        return switch(grad, grad_ctxt.pivot)
    if isinstance(op_ctxt, CondContext):
        pred = op_ctxt.pred
        if grad_ctxt is not None and getattr(grad_ctxt, "grad_state", None) is not None:
            pred = _cond_pred_in_grad_loop(grad_ctxt.grad_state, pred)
        return switch(grad, pred, name="cond_grad")
    n = len(op.inputs)
    conds = [math_ops.equal(op.outputs[1], i) for i in range(n)]
    return [switch(grad, conds[i])[1] for i in range(n)]


def _cond_pred_in_grad_loop(grad_state: Any, pred: Any) -> Any:
    """A cond inside a while loop: its predicate of each iteration, popped in reverse."""
    real_pred = grad_state.history_map.get(pred.name)
    if real_pred is None:
        grad_ctxt = grad_state.grad_context
        grad_ctxt.Exit()
        history_pred = grad_state.AddForwardAccumulator(pred)
        grad_ctxt.Enter()
        real_pred = grad_state.AddBackpropAccumulatedValue(history_pred, pred)
        grad_state.history_map[pred.name] = real_pred
    return real_pred


@RegisterGradient("Exit")
def _exit_grad(op: Any, grad: Any) -> Any:
    from client.ops.control_flow_ops import _enter

    op_ctxt = op._get_control_flow_context()
    grad_ctxt = _ops.get_default_graph()._get_control_flow_context()
    if not grad_ctxt.back_prop:
        return None
    if op_ctxt.grad_state is not None:
        raise TypeError("Second-order gradient for while loops not supported.")
    grad_ctxt.AddName(grad.name)
    grad_ctxt.Enter()
    result = _enter(grad, grad_ctxt.name, False, grad_ctxt.parallel_iterations, name="b_exit")
    grad_ctxt.loop_enters.append(result)
    grad_ctxt.Exit()
    return result


@RegisterGradient("NextIteration")
def _next_iteration_grad(_: Any, grad: Any) -> Any:
    return grad


@RegisterGradient("Enter")
def _enter_grad(op: Any, grad: Any) -> Any:
    from client.ops.control_flow_ops import exit
    from client.ops.control_flow_state import add_backprop_accumulator

    grad_ctxt = _ops.get_default_graph()._get_control_flow_context()
    if (
        grad_ctxt is None
        or not grad_ctxt.back_prop
        or getattr(grad_ctxt, "grad_state", None) is None
    ):
        return grad
    if op.get_attr("is_constant"):
        # A loop invariant: its gradient is the sum over all iterations.
        return add_backprop_accumulator(grad_ctxt, op, grad)
    result = exit(grad)
    grad_ctxt.loop_exits.append(result)
    grad_ctxt.ExitResult([result])
    return result


# As TF: a reference through a loop or a cond differentiates as the value would.
RegisterGradient("RefEnter")(_enter_grad)
RegisterGradient("RefSwitch")(_switch_grad)
