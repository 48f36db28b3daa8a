"""Client, tf.compat.v1.distributions: the parts of TensorFlow's distributions/util.py
(distribution_util) the families use to check their arguments with `validate_args`:
get_logits_and_probs, assert_integer_form and the embed_check_* helpers, which return
their tensor behind control dependencies on TF's assertions (same scopes, same
messages)."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import constant, convert_to_tensor
from client.ops import array_ops, check_ops, control_flow_ops, math_ops, nn_ops
from client.ops.control_flow_ops import with_dependencies


def get_logits_and_probs(
    logits: Any = None,
    probs: Any = None,
    multidimensional: bool = False,
    validate_args: bool = False,
    name: str = "get_logits_and_probs",
    dtype: Any = None,
) -> tuple[Any, Any]:
    """One given, the other derived; with `validate_args`, probs checked to be
    non-negative and at most 1 (one event) or summing to 1 (several)."""
    with _ops.name_scope(name, values=[probs, logits]):
        if (probs is None) == (logits is None):
            raise ValueError("Must pass probs or logits, but not both.")
        if probs is None:
            logits = convert_to_tensor(logits, name="logits", dtype=dtype)
            if not logits.dtype.is_floating:
                raise TypeError("logits must having floating type.")
            if multidimensional:
                if validate_args:
                    logits = embed_check_categorical_event_shape(logits)
                return logits, nn_ops.softmax(logits, name="probs")
            return logits, math_ops.sigmoid(logits, name="probs")
        probs = convert_to_tensor(probs, name="probs", dtype=dtype)
        if not probs.dtype.is_floating:
            raise TypeError("probs must having floating type.")
        if validate_args:
            probs = _validate_probs(probs, multidimensional)
        with _ops.name_scope("logits"):
            if multidimensional:
                return math_ops.log(probs), probs
            return math_ops.log(probs) - math_ops.log1p(-1.0 * probs), probs


def _validate_probs(probs: Any, multidimensional: bool) -> Any:
    with _ops.name_scope("validate_probs"):
        one = constant(1.0, probs.dtype)
        checks = [check_ops.assert_non_negative(probs)]
        if multidimensional:
            probs = embed_check_categorical_event_shape(probs)
            checks.append(
                check_ops.assert_near(
                    math_ops.reduce_sum(probs, -1), one, message="probs does not sum to 1."
                )
            )
        else:
            checks.append(
                check_ops.assert_less_equal(
                    probs, one, message="probs has components greater than 1."
                )
            )
        return with_dependencies(checks, probs)


def largest_integer_by_dtype(dtype: Any) -> int:
    """The largest integer `dtype` holds exactly: 2**(mantissa bits + 1) for floats."""
    if dtype.is_floating:
        return int(2 ** (np.finfo(dtype.as_numpy_dtype).nmant + 1))
    return 1 if dtype == dtypes.bool else int(np.iinfo(dtype.as_numpy_dtype).max)


def _is_integer_like(dtype: Any) -> bool:
    return bool(dtype.is_integer) or dtype.base_dtype == dtypes.bool


def assert_integer_form(
    x: Any,
    data: Any = None,
    summarize: Any = None,
    message: Any = None,
    int_dtype: Any = None,
    name: str = "assert_integer_form",
) -> Any:
    """x equals x cast to `int_dtype` and back (a NoOp for integer x)."""
    with _ops.name_scope(name, values=[x, data]):
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_integer:
            return control_flow_ops.no_op()
        message = message or f"{x} has non-integer components"
        if int_dtype is None:
            pairs = {dtypes.float16: dtypes.int16, dtypes.float32: dtypes.int32,
                     dtypes.float64: dtypes.int64}  # fmt: skip
            if x.dtype.base_dtype not in pairs:
                raise TypeError(f"Unrecognized type {x.dtype.name}")
            int_dtype = pairs[x.dtype.base_dtype]
        return check_ops.assert_equal(
            x,
            math_ops.cast(math_ops.cast(x, int_dtype), x.dtype),
            data=data,
            summarize=summarize,
            message=message,
            name=name,
        )


def embed_check_nonnegative_integer_form(
    x: Any, name: str = "embed_check_nonnegative_integer_form"
) -> Any:
    """x after checks that it is non-negative and (if floating) integral."""
    with _ops.name_scope(name, values=[x]):
        x = convert_to_tensor(x, name="x")
        checks = [check_ops.assert_non_negative(x, message=f"'{x}' must be non-negative.")]
        if not x.dtype.is_integer:
            checks.append(
                assert_integer_form(x, message=f"'{x}' cannot contain fractional components.")
            )
        return with_dependencies(checks, x)


def embed_check_counts(counts: Any, total_count: Any, message: str) -> Any:
    """`counts` after checks that they are non-negative integers summing to `total_count`
    over the last axis (Multinomial's and DirichletMultinomial's sample check; each passes
    TensorFlow's own message)."""
    counts = embed_check_nonnegative_integer_form(counts)
    check = check_ops.assert_equal(total_count, math_ops.reduce_sum(counts, -1), message=message)
    return with_dependencies([check], counts)


def embed_check_integer_casting_closed(
    x: Any, target_dtype: Any, name: str = "embed_check_casting_closed"
) -> Any:
    """x after checks that casting it to `target_dtype` loses nothing: non-negative,
    and integral (float x) or no larger than `target_dtype` holds (integer x)."""
    with _ops.name_scope(name, values=[x]):
        x = convert_to_tensor(x, name="x")
        if not _is_integer_like(x.dtype) and not x.dtype.is_floating:
            raise TypeError(f"{x.dtype.name}.dtype must be floating- or integer-type.")
        if not _is_integer_like(x.dtype) and not _is_integer_like(target_dtype):
            raise TypeError(
                f"At least one of {x}.dtype ({x.dtype.name}) and target_dtype "
                f"({target_dtype.name}) must be integer-type."
            )
        checks = [check_ops.assert_non_negative(x, message="Elements must be non-negative.")]
        largest = largest_integer_by_dtype(target_dtype)
        if x.dtype.is_floating:
            # Integral and castable: the cast round trip checks the magnitude too.
            checks.append(
                assert_integer_form(
                    x,
                    int_dtype=target_dtype,
                    message=f"Elements must be {target_dtype.name}-equivalent.",
                )
            )
        elif largest_integer_by_dtype(x.dtype) > largest:
            checks.append(
                check_ops.assert_less_equal(
                    x, largest, message=f"Elements cannot exceed {largest}."
                )
            )
        return with_dependencies(checks, x)


def embed_check_categorical_event_shape(
    categorical_param: Any, name: str = "embed_check_categorical_event_shape"
) -> Any:
    """The parameter after checks of its event size (the last dimension): at least 2,
    and no more than its float dtype counts exactly; while building when the size is
    static, else by assertions on its shape."""
    with _ops.name_scope(name, values=[categorical_param]):
        x = convert_to_tensor(categorical_param, name="categorical_param")
        dtype = x.dtype.base_dtype
        max_event_size = largest_integer_by_dtype(dtype) if dtype.is_floating else 0
        if max_event_size == 0:
            raise TypeError(f"Unable to validate size of unrecognized dtype ({dtype.name}).")
        try:
            static = x.shape.with_rank_at_least(1)
        except ValueError:
            raise ValueError(
                "A categorical-distribution parameter must have at least 1 dimension."
            ) from None
        if static.ndims is not None and static[-1] is not None:
            event_size = int(static[-1])
            if event_size < 2:
                raise ValueError(
                    "A categorical-distribution parameter must have at least 2 events."
                )
            if event_size > max_event_size:
                raise ValueError(
                    "Number of classes exceeds `dtype` precision, i.e., "
                    f"{dtype.name} implies shape ({event_size}) cannot exceed "
                    f"{max_event_size}."
                )
            return x
        dynamic_size = array_ops.shape(x, name="x_shape")[-1]
        checks = [
            check_ops.assert_rank_at_least(
                x, 1, message="A categorical-distribution parameter must have at least 1 dimension."
            ),
            check_ops.assert_greater_equal(
                array_ops.shape(x)[-1],
                2,
                message="A categorical-distribution parameter must have at least 2 events.",
            ),
            check_ops.assert_less_equal(
                dynamic_size,
                max_event_size,
                message="Number of classes exceeds `dtype` precision, "
                f"i.e., {dtype.name} dtype cannot exceed {max_event_size} shape.",
            ),
        ]
        return with_dependencies(checks, x)


def log_combinations(n: Any, counts: Any, name: str = "log_combinations") -> Any:
    """log(n! / prod(counts!)), the multinomial coefficient over the last axis of counts."""
    with _ops.name_scope(name, values=[n, counts]):
        n = convert_to_tensor(n, name="n")
        counts = convert_to_tensor(counts, name="counts")
        total_permutations = math_ops.lgamma(n + 1)
        counts_factorial = math_ops.lgamma(counts + 1)
        redundant_permutations = math_ops.reduce_sum(counts_factorial, axis=[-1])
        return total_permutations - redundant_permutations
