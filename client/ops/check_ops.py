"""Client, graph building: the graph-mode assertions of TF's check_ops.py (tf.assert_equal,
assert_less, assert_positive, assert_rank ..., also under tf.debugging) and tf.Assert's
node layout: an Assert op whose string data become Consts "Assert/Const..." (TF converts
them once to check their dtypes) and again "Assert/Assert/data_i" as the op's inputs;
data other than strings and int32 guard the Assert with an "AssertGuard" cond
(control_flow_assert). A condition known while building is checked at once
(InvalidArgumentError), as TensorFlow does; the op is built either way."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.errors import InvalidArgumentError
from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.shape_fns import constant_value
from client.ops import array_ops, control_flow_ops, math_ops
from client.ops.control_flow_assert import Assert


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
        return Assert(condition, data, summarize=summarize)


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


def _message_prefix(message: Any) -> str:
    return f"{message}.  " if message else ""


def assert_equal(x: Any, y: Any, data: Any = None, summarize: Any = None, message: Any = None,
                 name: str | None = None) -> Any:  # fmt: skip
    with _ops.name_scope(name, "assert_equal", [x, y, data]):
        if x is y:  # the same tensor: nothing to check
            return control_flow_ops.no_op()
    return _binary_assert("==", "assert_equal", math_ops.equal, np.equal, x, y, data,
                          summarize, message, name)  # fmt: skip


def assert_none_equal(x: Any, y: Any, data: Any = None, summarize: Any = None,
                      message: Any = None, name: str | None = None) -> Any:  # fmt: skip
    return _binary_assert("!=", "assert_none_equal", math_ops.not_equal, np.not_equal, x, y,
                          data, summarize, message, name)  # fmt: skip


def assert_less_equal(x: Any, y: Any, data: Any = None, summarize: Any = None,
                      message: Any = None, name: str | None = None) -> Any:  # fmt: skip
    return _binary_assert("<=", "assert_less_equal", math_ops.less_equal, np.less_equal, x, y,
                          data, summarize, message, name)  # fmt: skip


def assert_greater(x: Any, y: Any, data: Any = None, summarize: Any = None,
                   message: Any = None, name: str | None = None) -> Any:  # fmt: skip
    return _binary_assert(">", "assert_greater", math_ops.greater, np.greater, x, y, data,
                          summarize, message, name)  # fmt: skip


def _unary_assert(opname: str, sym: str, x: Any, data: Any, summarize: Any, message: Any,
                  name: str | None, check: Any, zero_first: bool) -> Any:  # fmt: skip
    """assert_negative / non_negative / non_positive: a comparison with 0 of x's dtype."""
    prefix = _message_prefix(message)
    with _ops.name_scope(name, opname, [x, data]):
        x = convert_to_tensor(x, name="x")
        if data is None:
            if sym == "<= 0":  # TF's message lacks the separator here
                data = [prefix, f"Condition x <= 0 did not hold element-wise:x ({x.name}) = ", x]
            else:
                data = [prefix, f"Condition x {sym} did not hold element-wise:",
                        f"x ({x.name}) = ", x]  # fmt: skip
        zero = convert_to_tensor(0, dtype=x.dtype)
        a, b = (zero, x) if zero_first else (x, zero)
        return check(a, b, data=data, summarize=summarize)


def assert_negative(x: Any, data: Any = None, summarize: Any = None, message: Any = None,
                    name: str | None = None) -> Any:  # fmt: skip
    return _unary_assert("assert_negative", "< 0", x, data, summarize, message, name,
                         assert_less, zero_first=False)  # fmt: skip


def assert_non_negative(x: Any, data: Any = None, summarize: Any = None, message: Any = None,
                        name: str | None = None) -> Any:  # fmt: skip
    return _unary_assert("assert_non_negative", ">= 0", x, data, summarize, message, name,
                         assert_less_equal, zero_first=True)  # fmt: skip


def assert_non_positive(x: Any, data: Any = None, summarize: Any = None, message: Any = None,
                        name: str | None = None) -> Any:  # fmt: skip
    return _unary_assert("assert_non_positive", "<= 0", x, data, summarize, message, name,
                         assert_less_equal, zero_first=False)  # fmt: skip


def assert_type(tensor: Any, tf_type: Any, message: Any = None, name: str | None = None) -> Any:
    """A dtype check made while building: TypeError, or the NoOp
    "statically_determined_correct_type"."""
    tf_type = dtypes.as_dtype(tf_type)
    with _ops.name_scope(name, "assert_type", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype != tf_type:
            raise TypeError(
                f"{_message_prefix(message)}{tensor.name} must be of type "
                f"tf.{tf_type.name}; got tf.{tensor.dtype.name}"
            )
        return control_flow_ops.no_op("statically_determined_correct_type")


def _assert_rank_condition(x: Any, rank: Any, static_ok: Any, dynamic_condition: Any,
                           data: list, summarize: Any, fail: Any) -> Any:  # fmt: skip
    """TF's _assert_rank_condition: a NoOp "static_checks_determined_all_ok" when both
    ranks are static and `static_ok(x_rank, rank)` holds (`fail(x_rank, rank)`, a
    ValueError, when not), else an Assert on `dynamic_condition(Rank(x), rank)`, which
    also checks that a fed `rank` is a scalar."""
    assert_type(rank, dtypes.int32)
    rank_static = constant_value(rank)
    if rank_static is not None:
        if np.ndim(rank_static) != 0:
            raise ValueError("Rank must be a scalar.")
        x_rank = x.shape.ndims
        if x_rank is not None:
            if not static_ok(x_rank, int(rank_static)):
                raise fail(x_rank, int(rank_static))
            return control_flow_ops.no_op(name="static_checks_determined_all_ok")
    condition = dynamic_condition(array_ops.rank(x), rank)
    if rank_static is None:
        rank_check = assert_rank(rank, 0, data=["Rank must be a scalar. Received rank: ", rank])
        condition = control_flow_ops.with_dependencies([rank_check], condition)
    return Assert(condition, data, summarize=summarize)


def _assert_rank_family(opname: str, words: str, static_ok: Any, dynamic_condition: Any,
                        x: Any, rank: Any, data: Any, summarize: Any, message: Any,
                        name: str | None) -> Any:  # fmt: skip
    """assert_rank / assert_rank_at_least: x's rank against `rank`, TF's messages."""
    with _ops.name_scope(name, opname, (x, rank) + tuple(data or [])):
        x = convert_to_tensor(x, name="x")
        rank = convert_to_tensor(rank, name="rank")
        prefix = _message_prefix(message)
        if data is None:
            data = [prefix, f"Tensor {x.name} must have {words}", rank, "Received shape: ",
                    array_ops.shape(x)]  # fmt: skip

        def fail(x_rank: int, want: int) -> ValueError:
            return ValueError(
                f"{prefix}Tensor {x.name} must have {words} {want}.  "
                f"Received rank {x_rank}, shape {x.shape}"
            )

        return _assert_rank_condition(x, rank, static_ok, dynamic_condition, data, summarize,
                                      fail)  # fmt: skip


def assert_rank(x: Any, rank: Any, data: Any = None, summarize: Any = None, message: Any = None,
                name: str | None = None) -> Any:  # fmt: skip
    """x has rank `rank`: checked while building when both are static (a NoOp
    "static_checks_determined_all_ok", or ValueError), else an Assert on Rank(x)."""
    return _assert_rank_family("assert_rank", "rank", lambda a, b: a == b, math_ops.equal,
                               x, rank, data, summarize, message, name)  # fmt: skip


def assert_rank_at_least(x: Any, rank: Any, data: Any = None, summarize: Any = None,
                         message: Any = None, name: str | None = None) -> Any:  # fmt: skip
    """x has rank `rank` or more: as assert_rank, with GreaterEqual."""
    return _assert_rank_family("assert_rank_at_least", "rank at least", lambda a, b: a >= b,
                               math_ops.greater_equal, x, rank, data, summarize, message,
                               name)  # fmt: skip


def assert_near(x: Any, y: Any, rtol: Any = None, atol: Any = None, data: Any = None,
                summarize: Any = None, message: Any = None,
                name: str | None = None) -> Any:  # fmt: skip
    """|x - y| < atol + rtol * |y| element-wise (tolerances default to 10 eps of x's
    dtype); never checked while building, as TF's."""
    prefix = _message_prefix(message)
    with _ops.name_scope(name, "assert_near", [x, y, rtol, atol, data]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype)
        dtype = x.dtype.real_dtype if x.dtype.is_complex else x.dtype
        eps = np.finfo(dtype.as_numpy_dtype).eps
        rtol = convert_to_tensor(10 * eps if rtol is None else rtol, name="rtol", dtype=dtype)
        atol = convert_to_tensor(10 * eps if atol is None else atol, name="atol", dtype=dtype)
        if data is None:
            # TF formats the tolerance tensors themselves (their str), not their values.
            data = [prefix, f"x and y not equal to tolerance rtol = {rtol}, atol = {atol}",
                    f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]  # fmt: skip
        tol = atol + rtol * math_ops.abs(y)
        diff = math_ops.abs(x - y)
        condition = math_ops.reduce_all(math_ops.less(diff, tol))
        return Assert(condition, data, summarize=summarize)
