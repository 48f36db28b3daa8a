"""Client, graph building: TensorFlow's ragged dispatch of the elementwise APIs (tf.add,
tf.abs, tf.cast, tf.equal, tf.logical_and ... and RaggedTensor's operators), as TF's
ragged_dispatch.py and dynamic_ragged_shape.ragged_binary_elementwise_op_impl build it:

- unary: the op on `values` (recursing through nested ragged values), the partitions kept;
- binary against a scalar or a dense tensor of lower rank than the flat values: the op on
  the flat values, no other node;
- binary between RaggedTensors with identical row partitions (the same RowPartition
  objects, as `rt * rt` or `rt + (rt * 2)`): TF's DynamicRaggedShape nodes (the flat
  values' Shape and its Cast to the splits' dtype, for each side), then the op.

TF broadcasts every other pair (different partition objects; a dense side of rank >= the
flat values') through DynamicRaggedShape's broadcaster, a graph of several hundred nodes.
The client builds a smaller graph with the same values and the same failure: ragged
pairs assert their row_splits equal, level by level (InvalidArgument "Condition x == y
did not hold element-wise"), then apply the op; a dense side is gathered at each flat
value's (row, column) for ragged_rank 1. Wrapping is explicit: `install` rebinds the
names client/__init__ exports. Stateless; safe to call from any thread that builds."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.framework.ragged_tensor import RaggedTensor
from client.ops import array_ops, check_ops, control_flow_ops, math_ops
from client.ops.ragged_functional_ops import map_flat_values
from client.ops.tf1_extras import gather_nd

UNARY = (
    "abs", "exp", "log", "sqrt", "square", "negative", "sin", "cos", "tanh", "sigmoid",
    "logical_not", "floor", "ceil", "round", "sign", "reciprocal", "rsqrt", "log1p",
    "expm1", "cast", "saturate_cast", "erf", "is_nan", "is_inf", "is_finite",
)  # fmt: skip
BINARY = (
    "add", "subtract", "multiply", "divide", "truediv", "floordiv", "floormod", "mod",
    "maximum", "minimum", "pow", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or", "logical_xor", "squared_difference",
    "realdiv", "div", "div_no_nan", "atan2",
)  # fmt: skip


def is_ragged(value: Any) -> bool:
    return isinstance(value, RaggedTensor)


def convert_to_tensor_or_ragged(
    value: Any, name: str | None = None, preferred_dtype: Any = None
) -> Any:
    if is_ragged(value):
        return value
    return convert_to_tensor(value, name=name, preferred_dtype=preferred_dtype)


def _partitions(rt: RaggedTensor) -> list[Any]:
    out = []
    v: Any = rt
    while is_ragged(v):
        out.append(v._row_partition)
        v = v.values
    return out


def _name_index(fn: Callable[..., Any]) -> int | None:
    params = list(inspect.signature(fn).parameters)
    return params.index("name") if "name" in params else None


def _pop_name(index: int | None, args: tuple, kwargs: dict) -> tuple[Any, tuple, dict]:
    """(the `name` argument, the other arguments), as TF's dispatch wrapper takes it out."""
    if index is not None and index < len(args):
        return args[index], args[:index] + args[index + 1 :], kwargs
    kwargs = dict(kwargs)
    return kwargs.pop("name", None), args, kwargs


def unary_api(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` that, given a RaggedTensor first, maps its values (TF's
    ragged_unary_elementwise_op) inside name_scope(name) when a name is given."""
    index = _name_index(fn)

    @functools.wraps(fn)
    def api(*args: Any, **kwargs: Any) -> Any:
        x = args[0] if args else kwargs.get("x")
        if not isinstance(x, RaggedTensor):
            return fn(*args, **kwargs)
        name, args, kwargs = _pop_name(index, args, kwargs)
        args = args[1:] if args else args
        kwargs.pop("x", None)
        with _ops.name_scope(name):
            return x.with_values(api(x.values, *args, **kwargs))

    return api


def binary_api(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` that, given a RaggedTensor as x or y, takes TF's ragged elementwise path."""
    index = _name_index(fn)

    @functools.wraps(fn)
    def api(*args: Any, **kwargs: Any) -> Any:
        bound = list(args[:2]) + [kwargs.get(k) for k in ("x", "y")[len(args[:2]) :]]
        x, y = bound
        if not (is_ragged(x) or is_ragged(y)):
            return fn(*args, **kwargs)
        name, _, _ = _pop_name(index, args, kwargs)
        with _ops.name_scope(name):
            return binary_elementwise(fn, x, y)

    return api


def _dynamic_shape_nodes(value: Any, dtype: Any) -> None:
    """The nodes TF's DynamicRaggedShape.from_tensor leaves: the flat values' (or a dense
    tensor's) Shape, cast to the row partitions' dtype. Nothing reads them."""
    flat = value.flat_values if is_ragged(value) else value
    shape = array_ops.shape(flat)
    if shape.dtype != dtype:
        math_ops.cast(shape, dtype)


def _match_splits_dtypes(x: RaggedTensor, y: RaggedTensor) -> None:
    if x.row_splits.dtype != y.row_splits.dtype:
        raise ValueError(
            "Input RaggedTensors have mismatched row_splits dtypes; use "
            "RaggedTensor.with_row_splits_dtype() to convert them to compatible dtypes."
        )


def binary_elementwise(fn: Callable[..., Any], x: Any, y: Any) -> Any:
    """TF's ragged_binary_elementwise_op_impl (see the module docstring for what differs)."""
    x_ragged, y_ragged = is_ragged(x), is_ragged(y)
    x = convert_to_tensor_or_ragged(x, preferred_dtype=y.dtype if y_ragged else None)
    y = convert_to_tensor_or_ragged(y, preferred_dtype=x.dtype)
    if x_ragged and y_ragged:
        _match_splits_dtypes(x, y)
    ragged = x if x_ragged else y
    dense = None if x_ragged and y_ragged else (y if x_ragged else x)
    if dense is None or ragged.flat_values.shape.ndims <= dense.shape.ndims:
        dtype = ragged.row_splits.dtype
        _dynamic_shape_nodes(x, dtype)
        _dynamic_shape_nodes(y, dtype)
        if dense is None and _identical(_partitions(x), _partitions(y)):
            return x.with_flat_values(fn(x.flat_values, y.flat_values))
        if dense is None:
            return _same_splits_op(fn, x, y)
        dense_flat = _dense_at_flat_values(ragged, dense)
        args = (ragged.flat_values, dense_flat) if x_ragged else (dense_flat, ragged.flat_values)
        return ragged.with_flat_values(fn(*args))
    x_values = x.flat_values if x_ragged else x
    y_values = y.flat_values if y_ragged else y
    return ragged.with_flat_values(fn(x_values, y_values))


def _identical(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and all(p is q for p, q in zip(a, b))


def _same_splits_op(fn: Callable[..., Any], x: RaggedTensor, y: RaggedTensor) -> Any:
    """fn on the flat values once every level's row_splits are asserted equal."""
    x_splits, y_splits = x.nested_row_splits, y.nested_row_splits
    if len(x_splits) != len(y_splits):
        raise ValueError(
            "This client broadcasts RaggedTensors of the same ragged_rank only "
            f"({len(x_splits)} vs {len(y_splits)})"
        )
    checks = [check_ops.assert_equal(a, b) for a, b in zip(x_splits, y_splits)]
    x_flat = control_flow_ops.with_dependencies(checks, x.flat_values)
    y_flat = control_flow_ops.with_dependencies(checks, y.flat_values)
    return x.with_flat_values(fn(x_flat, y_flat))


def _dense_at_flat_values(rt: RaggedTensor, dense: Any) -> Any:
    """The dense operand broadcast against rt's [nrows, (row length), inner...] and read
    at each flat value's (row, column): index % size keeps a size-1 dimension at 0."""
    if rt.ragged_rank != 1:
        raise ValueError("This client broadcasts a dense tensor against ragged_rank 1 only")
    rank = 1 + rt.flat_values.shape.ndims
    while dense.shape.ndims < rank:
        dense = array_ops.expand_dims(dense, 0)
    dtype = rt.row_splits.dtype
    rows = rt.value_rowids()
    cols = math_ops.range(array_ops.shape(rows, out_type=dtype)[0], dtype=dtype) - array_ops.gather(
        rt.row_splits, rows
    )
    size = array_ops.shape(dense, out_type=dtype)
    index = array_ops.stack([math_ops.floormod(rows, size[0]), math_ops.floormod(cols, size[1])], 1)
    ragged_dim = size[1]
    ok = math_ops.logical_or(
        math_ops.equal(ragged_dim, 1),
        math_ops.reduce_all(math_ops.equal(rt.row_lengths(), ragged_dim)),
    )
    check = check_ops.assert_equal(ok, True, message="Incompatible shapes for broadcasting")  # noqa: FBT003
    return control_flow_ops.with_dependencies([check], gather_nd(dense, index))


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Any:
    """tf.compat.v1.where with a RaggedTensor argument (TF's ragged_where_op.where): the
    coordinates of true values, or the elementwise choice between ragged x and y of the
    condition's partitions. TF's row choice (a dense vector condition) is not built."""
    if (x is None) != (y is None):
        raise ValueError("x and y must be either both None or both non-None")
    with _ops.name_scope(name, "RaggedWhere", [condition, x, y]):
        condition = convert_to_tensor_or_ragged(condition, name="condition")
        if x is None:
            return _coordinate_where(condition)
        x = convert_to_tensor_or_ragged(x, name="x")
        y = convert_to_tensor_or_ragged(y, name="y")
        if not all(is_ragged(v) for v in (condition, x, y)):
            raise ValueError(
                "This client's ragged where takes a ragged condition, x and y together"
            )
        return map_flat_values(array_ops.where, condition, x, y)


def _coordinate_where(condition: Any) -> Any:
    if not is_ragged(condition):
        return array_ops.where(condition)
    selected = _coordinate_where(condition.values)
    if condition.row_splits.dtype != selected.dtype:
        raise ValueError("This client's coordinate where takes int64 row_splits")
    first_index = selected[:, 0]
    rows = array_ops.gather(condition.value_rowids(), first_index)
    row_starts = array_ops.gather(condition.row_splits, rows)
    cols = first_index - row_starts
    parts = [array_ops.expand_dims(rows, 1), array_ops.expand_dims(cols, 1), selected[:, 1:]]
    return array_ops.concat(parts, axis=1)


def where_api(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def api(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Any:
        if any(is_ragged(v) for v in (condition, x, y)):
            return where(condition, x, y, name)
        return fn(condition, x, y, name)

    return api


def install(namespace: dict[str, Any], math_namespace: Any) -> None:
    """Rebind the elementwise APIs in `namespace` (client's globals) and tf.math to their
    ragged-dispatching versions; set RaggedTensor's operators as TF's ragged_operators.
    A function exported under two names (tf.log1p and tf.math.log1p) gets one wrapper: the
    two names stay one function, as in TensorFlow."""
    wrapped: dict[int, Callable[..., Any]] = {}
    for names, wrap in ((UNARY, unary_api), (BINARY, binary_api)):

        def once(fn: Callable[..., Any], wrap: Callable[..., Any] = wrap) -> Callable[..., Any]:
            if id(fn) not in wrapped:
                wrapped[id(fn)] = wrap(fn)
            return wrapped[id(fn)]

        for n in names:
            if n in namespace:
                namespace[n] = once(namespace[n])
            if hasattr(math_namespace, n):
                setattr(math_namespace, n, once(getattr(math_namespace, n)))
    namespace["where"] = where_api(namespace["where"])


def _right(fn: Callable[..., Any]) -> Callable[..., Any]:
    return lambda y, x: fn(x, y)


def _ragged_operators() -> None:
    ops = {
        "__add__": math_ops.add, "__sub__": math_ops.subtract, "__mul__": math_ops.multiply,
        "__truediv__": math_ops.truediv, "__floordiv__": math_ops.floordiv,
        "__mod__": math_ops.floormod, "__pow__": math_ops.pow, "__and__": math_ops.logical_and,
        "__or__": math_ops.logical_or, "__xor__": math_ops.logical_xor,
    }  # fmt: skip
    for dunder, fn in ops.items():
        api = binary_api(fn)
        setattr(RaggedTensor, dunder, api)
        setattr(RaggedTensor, "__r" + dunder[2:], _right(api))
    for dunder, fn in (("__gt__", math_ops.greater), ("__ge__", math_ops.greater_equal),
                       ("__lt__", math_ops.less), ("__le__", math_ops.less_equal)):  # fmt: skip
        setattr(RaggedTensor, dunder, binary_api(fn))
    for dunder, fn in (("__neg__", math_ops.negative), ("__abs__", math_ops.abs),
                       ("__invert__", math_ops.logical_not)):  # fmt: skip
        setattr(RaggedTensor, dunder, unary_api(fn))


_ragged_operators()
