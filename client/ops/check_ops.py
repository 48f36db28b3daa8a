"""Client, graph building: the graph-mode assertions of TF's check_ops.py (assert_positive,
assert_less, assert_less_equal, assert_greater_equal: image ops' run-time shape checks,
metrics' range checks) and tf.Assert's node layout: an Assert op whose data become
Consts "Assert/Const..." (TF converts them once to check their dtypes) and, for strings,
again "Assert/Assert/data_i" as the op's inputs; data other than strings and int32 put
the Assert in the else branch of a functional If "Assert/AssertGuard" (client.ops.cond_v2).
A condition known while building is checked at once (InvalidArgumentError), as
TensorFlow does; the op is built either way."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.errors import InvalidArgumentError
from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.shape_fns import constant_value
from client.ops import control_flow_ops, math_ops
from client.ops.cond_v2 import cond_v2


def assert_op(condition: Any, data: list[Any], summarize: int | None = None,
              name: str | None = None) -> Any:  # fmt: skip
    """tf.Assert in graph mode: data of strings and int32 tensors (host memory) get the
    bare Assert op "<scope>/Assert/Assert"; other data an Assert guarded by a functional
    If "<scope>/Assert/AssertGuard" (cond_v2: NoOp when the condition holds, the Assert
    otherwise), whose output Identity is the op returned."""
    with _ops.name_scope(name, "Assert", [condition, data]):
        xs = [x if isinstance(x, _ops.Tensor) else convert_to_tensor(x) for x in data]
        attrs = {"summarize": 3 if summarize is None else summarize}
        if all(x.dtype in (dtypes.string, dtypes.int32) for x in xs):
            return apply_op("Assert", [condition, list(data)], attrs, "Assert")
        condition = convert_to_tensor(condition, name="Condition")

        def true_assert() -> Any:
            return apply_op("Assert", [condition, list(data)], attrs, "Assert")

        (guarded,) = cond_v2(condition, control_flow_ops.no_op, true_assert, "AssertGuard")
        return guarded.op


def _binary_assert(sym: str, opname: str, op_func: Any, static_func: Any, x: Any, y: Any,
                   data: Any, summarize: Any, message: Any, name: Any) -> Any:  # fmt: skip
    with _ops.name_scope(name, opname, [x, y, data]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y")
        if data is None:
            data = [
                f"Condition x {sym} y did not hold element-wise:",
                f"x ({x.name}) = ",
                x,
                f"y ({y.name}) = ",
                y,
            ]
        if message is not None:
            data = [message, *data]
        condition = math_ops.reduce_all(op_func(x, y))
        x_static, y_static = constant_value(x), constant_value(y)
        known = x_static is not None and y_static is not None
        if known and not np.all(static_func(x_static, y_static)):
            shown = [str(constant_value(d)) if isinstance(d, _ops.Tensor) else str(d)
                     for d in data]  # fmt: skip
            raise InvalidArgumentError("\n".join(shown))
        return assert_op(condition, data, summarize=summarize)


def assert_less(x: Any, y: Any, data: Any = None, summarize: Any = None, message: Any = None,
                name: str | None = None) -> Any:  # fmt: skip
    return _binary_assert("<", "assert_less", math_ops.less, np.less, x, y, data, summarize,
                          message, name)  # fmt: skip


def assert_greater_equal(x: Any, y: Any, data: Any = None, summarize: Any = None,
                         message: Any = None, name: str | None = None) -> Any:  # fmt: skip
    return _binary_assert(">=", "assert_greater_equal", math_ops.greater_equal,
                          np.greater_equal, x, y, data, summarize, message, name)  # fmt: skip


def assert_less_equal(x: Any, y: Any, data: Any = None, summarize: Any = None,
                      message: Any = None, name: str | None = None) -> Any:  # fmt: skip
    return _binary_assert("<=", "assert_less_equal", math_ops.less_equal, np.less_equal, x, y,
                          data, summarize, message, name)  # fmt: skip


def assert_positive(x: Any, data: Any = None, summarize: Any = None, message: Any = None,
                    name: str | None = None) -> Any:  # fmt: skip
    prefix = f"{message}.  " if message else ""
    with _ops.name_scope(name, "assert_positive", [x, data]):
        x = convert_to_tensor(x, name="x")
        if data is None:
            data = [prefix, "Condition x > 0 did not hold element-wise:", f"x ({x.name}) = ", x]
        zero = convert_to_tensor(0, dtype=x.dtype)
        return assert_less(zero, x, data=data, summarize=summarize)
