"""Client, graph building: a few more top-level names TF1 programs use — tf.sequence_mask,
tf.gather_nd, tf.Assert, tf.matrix_transpose, tf.is_tensor, tf.get_local_variable,
tf.model_variables/moving_average_variables, tf.tables_initializer — as TF builds them."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.ops import array_ops, control_flow_ops, math_ops
from client.ops import variable_scope as vs


def sequence_mask(
    lengths: Any, maxlen: Any = None, dtype: Any = dtypes.bool, name: str | None = None
) -> Any:
    with _ops.name_scope(name, "SequenceMask", [lengths, maxlen]):
        lengths = convert_to_tensor(lengths)
        if maxlen is None:
            maxlen = math_ops.reduce_max(lengths)
            maxlen = math_ops.maximum(convert_to_tensor(0, dtype=maxlen.dtype), maxlen)
        else:
            maxlen = convert_to_tensor(maxlen)
        # gen_math_ops._range, as TF's: a raw Range node (no "range" scope)
        start = convert_to_tensor(0, dtype=maxlen.dtype)
        delta = convert_to_tensor(1, dtype=maxlen.dtype)
        row_vector = apply_op("Range", [start, maxlen, delta], {}).outputs[0]
        # gen_math_ops.cast, as TF's: a Cast node even when the dtype already matches
        matrix = apply_op(
            "Cast",
            [array_ops.expand_dims(lengths, -1)],
            {"DstT": maxlen.dtype.base_dtype, "Truncate": False},
        ).outputs[0]
        result = row_vector < matrix
        if dtype is None or dtypes.as_dtype(dtype) == dtypes.bool:
            return result
        return math_ops.cast(result, dtype)


def gather_nd(params: Any, indices: Any, name: str | None = None, batch_dims: int = 0) -> Any:
    if batch_dims:
        raise ValueError("gather_nd: batch_dims is not supported by this client")
    return apply_op("GatherNd", [params, indices], {}, name).outputs[0]


def matrix_transpose(a: Any, name: str = "matrix_transpose", conjugate: bool = False) -> Any:
    with _ops.name_scope(name, values=[a]):
        a = convert_to_tensor(a, name="a")
        ndims = a.shape.ndims
        if ndims is None:
            raise ValueError("matrix_transpose: the input's rank must be known")
        perm = list(range(ndims - 2)) + [ndims - 1, ndims - 2]
        return array_ops.transpose(a, perm)


def is_tensor(x: Any) -> bool:
    return isinstance(x, _ops.Tensor) or hasattr(x, "_as_graph_element")


def get_local_variable(
    name: str, shape: Any = None, dtype: Any = None, initializer: Any = None, **kwargs: Any
) -> Any:
    kwargs.pop("trainable", None)
    collections = list(kwargs.pop("collections", None) or []) + [_ops.GraphKeys.LOCAL_VARIABLES]
    return vs.get_variable(
        name, shape, dtype, initializer, trainable=False, collections=collections
    )


def model_variables(scope: Any = None) -> list[Any]:
    return _ops.get_collection(_ops.GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope: Any = None) -> list[Any]:
    return _ops.get_collection("moving_average_variables", scope)


def tables_initializer(name: str = "init_all_tables") -> Any:
    tables = _ops.get_collection("table_initializer")
    if tables:
        return control_flow_ops.group(*tables, name=name)
    return control_flow_ops.no_op(name=name)
