"""Client, gradients: backprop through TF1 while loops (TF's control_flow_state.py).

For each forward WhileContext that tf.gradients crosses, a GradLoopState builds the
gradient loop, which runs the forward iterations in reverse:
- a counter added to the forward loop ("f_count") records how many iterations ran;
- the gradient loop (frame "gradients/<forward frame>") counts it back down ("b_count");
- each forward value the gradient needs is pushed on a stack in the forward frame
  (StackV2 "f_acc" + StackPushV2, ordered by the counter) and popped in the gradient
  frame (StackPopV2, ordered by the gradient counter through the "b_sync" trigger);
- a loop invariant's gradient is summed over iterations by an accumulator loop ("b_acc").
ControlFlowState maps forward contexts to their GradLoopState for one tf.gradients call.
Graph building: not thread-safe.
"""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.gradient_registry import is_trainable
from client.framework.op_builder import apply_op, constant
from client.framework.shape_fns import constant_value
from client.ops import array_ops, data_flow_ops, math_ops
from client.ops import control_flow_ops as cfo


class GradLoopState:
    """The gradient loop of one forward while loop and the state shared with it."""

    grad_context: Any  # the gradient WhileContext, made in __init__

    def __init__(self, forward_ctxt: Any, outer_grad_state: GradLoopState | None) -> None:
        self.forward_context = forward_ctxt
        self.outer_grad_state = outer_grad_state
        self.history_map: dict[str, Any] = {}
        self.switch_map: dict[Any, Any] = {}
        self.unused_exits: list[Any] = []
        self.deferred_exits: list[Any] = []
        self.forward_loop_exits = list(forward_ctxt.loop_exits)
        self.pending_exits_count = len(forward_ctxt.loop_exits)
        self._forward_sync: Any = None
        self._grad_sync: Any = None
        outer_forward_ctxt = (
            outer_grad_state.forward_context if outer_grad_state else forward_ctxt.outer_context
        )
        _enter(outer_forward_ctxt)
        cnt, self.forward_index = _add_forward_loop_counter(forward_ctxt, outer_grad_state)
        _exit(outer_forward_ctxt)
        if outer_grad_state is not None:
            # A nested loop: remember the iteration count of each execution of it.
            outer_forward_ctxt.AddName(cnt.name)
            history_cnt = outer_grad_state.AddForwardAccumulator(cnt)
            outer_grad_ctxt = outer_grad_state.grad_context
            outer_grad_ctxt.Enter()
            self.grad_context = self._new_grad_context()
            real_cnt = outer_grad_state.AddBackpropAccumulatedValue(history_cnt, cnt)
            self.grad_index = _add_backprop_loop_counter(
                self.grad_context, real_cnt, outer_grad_state
            )
            outer_grad_ctxt.Exit()
        else:
            _enter(outer_forward_ctxt)
            self.grad_context = self._new_grad_context()
            self.grad_index = _add_backprop_loop_counter(self.grad_context, cnt, None)
            _exit(outer_forward_ctxt)

    def _new_grad_context(self) -> Any:
        fwd = self.forward_context
        return cfo.WhileContext(fwd.parallel_iterations, fwd.back_prop, fwd.name, grad_state=self)

    @property
    def forward_sync(self) -> Any:
        """A ControlTrigger in the forward loop ordered before the counter's next value."""
        if self._forward_sync is None:
            with _ops.control_dependencies(None):
                self._forward_sync = cfo.control_trigger(name="f_sync")
            self._forward_sync._set_control_flow_context(self.forward_context)
            self.forward_index.op._add_control_input(self._forward_sync)
        return self._forward_sync

    @property
    def grad_sync(self) -> Any:
        """A ControlTrigger in the gradient loop: all pops of an iteration run before
        the gradient counter moves on."""
        if self._grad_sync is None:
            with _ops.control_dependencies(None):
                self._grad_sync = cfo.control_trigger(name="b_sync")
            self._grad_sync._set_control_flow_context(self.grad_context)
            self.grad_index.op._add_control_input(self._grad_sync)
            if self.grad_context.outer_context is not None:
                self.grad_context.outer_context.AddInnerOp(self._grad_sync)
        return self._grad_sync

    # -- forward values for the gradient loop ----------------------------------------------
    def AddForwardAccumulator(self, value: Any, dead_branch: bool = False) -> Any:
        """Push `value` on a new stack at every forward iteration; return the stack."""
        g = value.graph
        curr_ctxt = g._get_control_flow_context()
        with _ops.control_dependencies(None):
            _enter(curr_ctxt)
            with _ops.colocate_with(value):
                max_size = constant(-1, dtype=dtypes.int32)
                acc = data_flow_ops.stack_v2(max_size, value.dtype.base_dtype, name="f_acc")
            _exit(curr_ctxt)
            enter_acc = self.forward_context.AddValue(acc)
            value_ctxt = cfo.get_output_context(value.op)
            if value_ctxt is self.forward_context:
                self.forward_context.Enter()
                push = data_flow_ops.stack_push_v2(enter_acc, value)
                self.forward_context.Exit()
                self.forward_index.op._add_control_input(push.op)
            else:
                if not isinstance(value_ctxt, cfo.CondContext):
                    raise TypeError(f"value_ctxt is not a CondContext: {value_ctxt}")
                if dead_branch:
                    value_ctxt.outer_context.Enter()
                    push = data_flow_ops.stack_push_v2(enter_acc, value)
                    value_ctxt.outer_context.Exit()
                    push.op._set_control_flow_context(value_ctxt)
                else:
                    value_ctxt.Enter()
                    push = data_flow_ops.stack_push_v2(enter_acc, value)
                    value_ctxt.Exit()
                self.forward_sync._add_control_input(push.op)
            # Push after the counter's increment of the same iteration.
            push.op._add_control_input(self.forward_index.op.inputs[0].op)
        return acc

    def AddBackpropAccumulatedValue(
        self, history_value: Any, value: Any, dead_branch: bool = False
    ) -> Any:
        """Pop `value`'s history (the stack `history_value`) in the gradient loop."""
        history_ctxt = history_value.op._get_control_flow_context()
        cond_ctxt = None
        value_ctxt = value.op._get_control_flow_context()
        while value_ctxt is not None and value_ctxt is not history_ctxt:
            if isinstance(value_ctxt, cfo.CondContext):
                cond_ctxt = value_ctxt
                break
            value_ctxt = value_ctxt.outer_context
        with _ops.control_dependencies(None):
            self.grad_context.Enter()
            if cond_ctxt is not None:
                # The value only exists on one branch: pop only when it was pushed.
                grad_state: GradLoopState | None = self
                pred = None
                while pred is None and grad_state is not None:
                    pred = grad_state.history_map.get(cond_ctxt.pred.name)
                    grad_state = grad_state.outer_grad_state
                if pred is None:
                    pred = cond_ctxt.pred
                branch = (1 - cond_ctxt.branch) if dead_branch else cond_ctxt.branch
                history_value = cfo.switch(history_value, pred)[branch]
            pop = data_flow_ops.stack_pop_v2(history_value, value.dtype.base_dtype)
            pop.set_shape(value.shape)
            self.grad_context.Exit()
        if self.grad_context.parallel_iterations > 1:
            self.grad_sync._add_control_input(pop.op)
        return pop

    def GetRealValue(self, value: Any) -> Any:
        """The value of forward `value` at the matching iteration, in the gradient loop."""
        real_value = self.history_map.get(value.name)
        if real_value is not None:
            return real_value
        cur_value = value
        cur_grad_state: GradLoopState | None = self
        while True:
            enter_op = cfo.get_loop_constant_enter(cur_value)
            if enter_op is not None:
                # A loop invariant: no history, enter the outer value directly.
                cur_value = enter_op.inputs[0]
                cur_grad_state = cur_grad_state.outer_grad_state if cur_grad_state else None
                if cur_grad_state is None:
                    real_value = self.grad_context.AddValue(cur_value)
                    break
            elif cur_value.op.type == "Const":
                real_value = constant(constant_value(cur_value), dtype=cur_value.dtype)
                break
            else:
                assert cur_grad_state is not None  # None only on the loop-invariant path
                self.grad_context.Exit()
                history_value = cur_grad_state.AddForwardAccumulator(cur_value)
                self.grad_context.Enter()
                real_value = cur_grad_state.AddBackpropAccumulatedValue(history_value, cur_value)
                if cur_grad_state is not self:
                    real_value = self.grad_context.AddValue(real_value)
                break
        self.history_map[value.name] = real_value
        return real_value


def _enter(ctxt: Any) -> None:
    if ctxt is not None:
        ctxt.Enter()


def _exit(ctxt: Any) -> None:
    if ctxt is not None:
        ctxt.Exit()


def _add_forward_loop_counter(ctx: Any, outer_grad_state: GradLoopState | None) -> tuple[Any, Any]:
    """Count the forward loop's iterations: (total count at exit, next-iteration index)."""
    n = constant(0, name="f_count")
    if outer_grad_state is not None:
        # Order the pushes of an inner loop's i-th execution before the (i+1)-th's.
        n.op._add_control_input(outer_grad_state.forward_index.op.inputs[0].op)
    ctx.Enter()
    ctx.AddName(n.name)
    enter_n = cfo._enter(n, ctx.name, False, ctx.parallel_iterations, name="f_count")
    ctx.loop_enters.append(enter_n)
    merge_n = cfo.merge([enter_n, enter_n])[0]
    switch_n = cfo.switch(merge_n, ctx.pivot)
    index = math_ops.add(switch_n[1], 1, name="Add")
    next_n = cfo.next_iteration(index)
    merge_n.op._update_input(1, next_n)
    total_iterations = cfo.exit(switch_n[0], name="f_count")
    ctx.loop_exits.append(total_iterations)
    ctx.ExitResult([total_iterations])
    ctx.Exit()
    return total_iterations, next_n


def _add_backprop_loop_counter(ctx: Any, count: Any, outer_grad_state: GradLoopState | None) -> Any:
    """The gradient loop's own structure: count down from the forward count to 0."""
    one = constant(1, name="b_count")
    ctx.Enter()
    ctx.AddName(count.name)
    enter_count = cfo._enter(count, ctx.name, False, ctx.parallel_iterations, name="b_count")
    ctx.loop_enters.append(enter_count)
    merge_count = cfo.merge([enter_count, enter_count])[0]
    ctx.pivot_for_pred = merge_count
    pred = math_ops.greater_equal(merge_count, one)
    ctx.pivot = cfo.loop_cond(pred, name="b_count")
    switch_count = cfo.switch(merge_count, ctx.pivot)
    index = math_ops.subtract(switch_count[1], one)
    ctx.pivot_for_body = index
    next_count = cfo.next_iteration(index)
    merge_count.op._update_input(1, next_count)
    final_zero = cfo.exit(switch_count[0], name="b_count")
    ctx.loop_exits.append(final_zero)
    if outer_grad_state is not None:
        # Order the pops of an inner loop's i-th execution before the (i+1)-th's.
        outer_grad_state.grad_sync._add_control_input(final_zero.op)
    ctx.ExitResult([final_zero])
    ctx.Exit()
    return next_count


def add_backprop_accumulator(ctx: Any, op: Any, grad: Any) -> Any:
    """A loop invariant's gradient: the sum of `grad` over the gradient loop's
    iterations ("b_acc"), starting from zeros of the invariant's shape. Called inside
    `ctx` (the gradient loop); returns the sum as the loop's Exit."""
    ctx.Exit()
    shape = grad.shape
    if shape.is_fully_defined():
        _enter(ctx.outer_context)
        acc = constant(0, grad.dtype, shape=shape.as_list(), name="b_acc")
        _exit(ctx.outer_context)
    else:
        value = op.inputs[0]
        outer = ctx.outer_context
        if isinstance(outer, cfo.WhileContext) and outer.grad_state is not None:
            forward_ctxt = ctx.grad_state.forward_context
            forward_ctxt.outer_context.Enter()
            zeros_shape = array_ops.shape(value)
            forward_ctxt.outer_context.Exit()
            outer_grad_state = ctx.grad_state.outer_grad_state
            history_zeros_shape = outer_grad_state.AddForwardAccumulator(zeros_shape)
            outer.Enter()
            real_shape = outer_grad_state.AddBackpropAccumulatedValue(
                history_zeros_shape, zeros_shape
            )
            acc = array_ops.zeros(real_shape, grad.dtype)
            outer.Exit()
        else:
            _enter(outer)
            acc = array_ops.zeros(array_ops.shape(value), grad.dtype)
            _exit(outer)
    ctx.Enter()
    ctx.AddName(acc.name)
    enter_acc = cfo._enter(acc, ctx.name, False, ctx.parallel_iterations, name="b_acc")
    ctx.loop_enters.append(enter_acc)
    merge_acc = cfo.merge([enter_acc, enter_acc], name="b_acc")[0]
    switch_acc_false, switch_acc_true = cfo.switch(merge_acc, ctx.pivot)
    add_acc = math_ops.add(switch_acc_true, grad, name="Add")
    next_acc = cfo.next_iteration(add_acc)
    merge_acc.op._update_input(1, next_acc)
    result_acc = cfo.exit(switch_acc_false, name="b_acc")
    ctx.loop_exits.append(result_acc)
    ctx.ExitResult([result_acc])
    return result_acc


class ControlFlowState:
    """The GradLoopStates of one tf.gradients call, keyed by forward WhileContext."""

    def __init__(self) -> None:
        self._map: dict[Any, GradLoopState] = {}

    def GetGradState(self, op: Any, before: bool) -> GradLoopState | None:
        if before and cfo.is_loop_exit(op):
            forward_ctxt = op._get_control_flow_context().outer_context
            forward_ctxt = forward_ctxt.GetWhileContext() if forward_ctxt is not None else None
        else:
            forward_ctxt = cfo.get_while_context(op)
        return self._map.get(forward_ctxt) if forward_ctxt is not None else None

    def EnterGradWhileContext(self, op: Any, before: bool) -> None:
        grad_state = self.GetGradState(op, before)
        if grad_state is not None:
            grad_state.grad_context.Enter()

    def ExitGradWhileContext(self, op: Any, before: bool) -> None:
        grad_state = self.GetGradState(op, before)
        if grad_state is not None:
            grad_state.grad_context.Exit()

    def AddWhileContext(self, op: Any, between_op_list: list[Any], between_ops: set[Any]) -> None:
        forward_ctxt = cfo.get_while_context(op)
        if forward_ctxt in self._map:
            return
        outer_forward_ctxt = forward_ctxt.outer_context
        outer_forward_ctxt = (
            outer_forward_ctxt.GetWhileContext() if outer_forward_ctxt is not None else None
        )
        outer_grad_state = (
            self._map.get(outer_forward_ctxt) if outer_forward_ctxt is not None else None
        )
        grad_state = GradLoopState(forward_ctxt, outer_grad_state)
        self._map[forward_ctxt] = grad_state
        # Every exit of the loop takes part in backprop (zeros for the unused ones).
        for loop_exit in grad_state.forward_loop_exits:
            if loop_exit.op not in between_ops:
                between_ops.add(loop_exit.op)
                between_op_list.append(loop_exit.op)

    def ProcessUnusedLoopExits(
        self, pending_count: dict[Any, int], to_ops_set: set[Any]
    ) -> list[Any]:
        loop_exits: list[Any] = []
        for grad_state in self._map.values():
            for y in grad_state.forward_loop_exits:
                if pending_count[y.op] == 0:
                    grad_state.pending_exits_count -= 1
                    if y.op not in to_ops_set:
                        grad_state.unused_exits.append(y)
                    if grad_state.pending_exits_count == 0:
                        loop_exits.extend(grad_state.unused_exits)
            # The Enters take part too (their gradient leaves the gradient loop).
            for y in grad_state.forward_context.loop_enters:
                if pending_count[y.op] == 0:
                    pending_count[y.op] = 1
        return loop_exits

    def ZerosLikeForExit(self, val: Any) -> Any:
        """Zeros for an unused loop exit, built where its gradient will be consumed."""
        forward_ctxt = val.op._get_control_flow_context()
        outer_forward_ctxt = forward_ctxt.outer_context
        outer_forward_ctxt = (
            outer_forward_ctxt.GetWhileContext() if outer_forward_ctxt is not None else None
        )
        outer_grad_state = (
            self._map.get(outer_forward_ctxt) if outer_forward_ctxt is not None else None
        )
        shape = val.shape
        if outer_grad_state is None:
            if shape.is_fully_defined():
                return array_ops.zeros(shape.as_list(), val.dtype)
            return array_ops.zeros_like(val)
        if shape.is_fully_defined():
            outer_grad_state.grad_context.Enter()
            result = array_ops.zeros(shape.as_list(), val.dtype)
            outer_grad_state.grad_context.Exit()
            return result
        forward_ctxt.outer_context.Enter()
        val_shape = array_ops.shape(val)
        forward_ctxt.outer_context.Exit()
        history_shape = outer_grad_state.AddForwardAccumulator(val_shape)
        outer_grad_state.grad_context.Enter()
        real_shape = outer_grad_state.AddBackpropAccumulatedValue(history_shape, val_shape)
        result = array_ops.zeros(real_shape, val.dtype)
        outer_grad_state.grad_context.Exit()
        return result

    def ZerosLike(self, op: Any, index: int) -> Any:
        """Zeros for output `index` of `op` (no gradient arrived) in the gradient loop."""
        if cfo.is_loop_switch(op):
            return None
        dead_branch = op.type in ("Switch", "RefSwitch")
        forward_ctxt = cfo.get_while_context(op)
        grad_state = self._map.get(forward_ctxt) if forward_ctxt is not None else None
        if grad_state is None:
            return zeros_like_outside_loop(op, index)
        op_ctxt = op._get_control_flow_context()
        val = op.outputs[index]
        if val.shape.is_fully_defined():
            result = constant(0, val.dtype, shape=val.shape.as_list())
            if dead_branch:
                pred = grad_state.history_map.get(op_ctxt.pred.name)
                result = cfo.switch(result, pred)[1 - op_ctxt.branch]
            return result
        if dead_branch:
            op_ctxt.outer_context.Enter()
            val = cfo.switch(op.inputs[0], op_ctxt.pred)[1 - op_ctxt.branch]
            zeros_shape = array_ops.shape(val)
            op_ctxt.outer_context.Exit()
            val.op._set_control_flow_context(op_ctxt)
            zeros_shape.op._set_control_flow_context(op_ctxt)
        else:
            op_ctxt.Enter()
            zeros_shape = array_ops.shape(val)
            op_ctxt.Exit()
        grad_state.grad_context.Exit()
        history_zeros_shape = grad_state.AddForwardAccumulator(zeros_shape, dead_branch=dead_branch)
        grad_state.grad_context.Enter()
        shape = grad_state.AddBackpropAccumulatedValue(
            history_zeros_shape, zeros_shape, dead_branch
        )
        return array_ops.zeros(shape, val.dtype)

    def PostProcessing(self) -> None:
        """A loop variable whose next value does not depend on its current one gets
        zeros as the gradient for iterations after the first."""
        for grad_state in self._map.values():
            for b_merge in grad_state.switch_map.values():
                if b_merge.op.inputs[0] is not b_merge.op.inputs[1]:
                    continue
                dtype = b_merge.op.inputs[0].dtype
                shape = b_merge.op.inputs[0].shape
                if shape.is_fully_defined():
                    grad_state.grad_context.Enter()
                    grad_val = constant(0, dtype, shape=shape.as_list())
                    next_grad_val = cfo.next_iteration(grad_val)
                    grad_state.grad_context.Exit()
                else:
                    outer_grad_ctxt = grad_state.grad_context.outer_context
                    _enter(outer_grad_ctxt)
                    enter_grad = b_merge.op.inputs[0].op.inputs[0]
                    grad_val = array_ops.zeros(array_ops.shape(enter_grad), dtype)
                    _exit(outer_grad_ctxt)
                    grad_state.grad_context.Enter()
                    next_grad_val = cfo.next_iteration(grad_val)
                    grad_state.grad_context.Exit()
                b_merge.op._update_input(1, next_grad_val)


def maybe_create_control_flow_state(
    between_op_list: list[Any], between_ops: set[Any]
) -> ControlFlowState | None:
    """A ControlFlowState when the ops between xs and ys cross a while loop's Exit."""
    loop_state = None
    for op in list(between_op_list):
        if cfo.is_loop_exit(op):
            if loop_state is None:
                loop_state = ControlFlowState()
            loop_state.AddWhileContext(op, between_op_list, between_ops)
    return loop_state


def zeros_like_outside_loop(op: Any, index: int) -> Any:
    """TF's ZerosLikeOutsideLoop: for a cond Switch, zeros guarded by the other branch."""
    val = op.outputs[index]
    if not is_trainable(val):
        return None
    if op.type == "Switch":
        ctx = op._get_control_flow_context()
        if isinstance(ctx, cfo.CondContext):
            with _ops.control_dependencies(None):
                switch_val = cfo.switch(op._inputs[0], ctx.pred)[1 - ctx.branch]
                pivot = array_ops.identity(switch_val)
                if val.dtype == dtypes.resource:
                    with _ops.control_dependencies([pivot]):
                        return _resource_zeros(switch_val, op._inputs[0])
                shape = apply_op("Shape", [switch_val], {"out_type": dtypes.int32}).outputs[0]
                with _ops.control_dependencies([pivot]):
                    return array_ops.zeros(shape, val.dtype)
    if val.dtype == dtypes.resource:
        return _resource_zeros(val, val)
    return array_ops.zeros_like(val, optimize=False)


def _resource_zeros(handle: Any, origin: Any) -> Any:
    """TF's zeros for a resource's gradient: the variable's shape, in its dtype (from the
    handle the value came from; float32 when unknown, as default_gradient does)."""
    dtype = getattr(origin, "_handle_dtype", None) or dtypes.float32
    shape = apply_op("VariableShape", [handle], {}).outputs[0]
    return array_ops.zeros(shape, dtype)
