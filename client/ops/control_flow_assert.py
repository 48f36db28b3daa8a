"""Client, graph building: tf.Assert as TF's control_flow_assert builds it. Data all
strings or int32 (host memory) feed one Assert op; any other data guard the Assert with a
cond named "AssertGuard" (no_op when the condition holds), so the data tensors are only
read, and copied to the host, when the assertion fails: a functional If (cond_v2) while
control flow v2 is on (TensorFlow 2.x's default), else a v1 cond (control_flow_util)."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.ops import control_flow_ops, control_flow_util
from client.ops.cond_v2 import cond_v2


def Assert(condition: Any, data: Any, summarize: Any = None, name: str | None = None) -> Any:  # noqa: N802 (TensorFlow's name)
    """tf.Assert: the Assert op, or the AssertGuard cond's output op."""
    with _ops.name_scope(name, "Assert", [condition, data]):
        xs = [convert_to_tensor(x) for x in data]
        attrs = {"summarize": 3 if summarize is None else summarize}
        if all(x.dtype in (dtypes.string, dtypes.int32) for x in xs):
            # The data as given: Python values become Consts again, "Assert/data_i".
            return apply_op("Assert", [condition, list(data)], attrs, "Assert")
        condition = convert_to_tensor(condition, name="Condition")

        def true_assert() -> Any:
            # TF passes the data as given: Python values become Consts in the branch.
            return apply_op("Assert", [condition, list(data)], attrs, "Assert")

        if control_flow_util.control_flow_v2_enabled():
            (guarded,) = cond_v2(condition, control_flow_ops.no_op, true_assert, "AssertGuard")
        else:
            guarded = control_flow_ops.cond(
                condition, control_flow_ops.no_op, true_assert, name="AssertGuard"
            )
        return guarded.op
