"""Client, graph building: the graph-mode assertions of TF's check_ops.py that image ops
build for shapes known only at run time (assert_positive, assert_less,
assert_greater_equal) and tf.Assert's node layout: an Assert op whose string data
become Consts "Assert/Const..." (TF converts them once to check their dtypes) and again
"Assert/Assert/data_i" as the op's inputs. A condition known while building is checked
at once (InvalidArgumentError), as TensorFlow does; the op is built either way."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.errors import InvalidArgumentError
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.shape_fns import constant_value
from client.ops import math_ops


def assert_op(condition: Any, data: list[Any], summarize: int | None = None,
              name: str | None = None) -> Any:  # fmt: skip
    """tf.Assert for data of strings and int32 tensors (TF's host-memory case, no
    AssertGuard cond): the Assert op, named "<scope>/Assert/Assert"."""
    with _ops.name_scope(name, "Assert", [condition, data]):
        for x in data:
            if not isinstance(x, _ops.Tensor):
                convert_to_tensor(x)
        attrs = {"summarize": 3 if summarize is None else summarize}
        return apply_op("Assert", [condition, list(data)], attrs, "Assert")


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


def assert_positive(x: Any, data: Any = None, summarize: Any = None, message: Any = None,
                    name: str | None = None) -> Any:  # fmt: skip
    prefix = f"{message}.  " if message else ""
    with _ops.name_scope(name, "assert_positive", [x, data]):
        x = convert_to_tensor(x, name="x")
        if data is None:
            data = [prefix, "Condition x > 0 did not hold element-wise:", f"x ({x.name}) = ", x]
        zero = convert_to_tensor(0, dtype=x.dtype)
        return assert_less(zero, x, data=data, summarize=summarize)
