"""Client API: tf.sparse (and the TF1 aliases tf.sparse_tensor_dense_matmul,
tf.sparse_tensor_to_dense, tf.sparse_placeholder), building the graphs TensorFlow's
sparse_ops.py builds with its node names, and the static shapes of the sparse ops.
Not thread-safe (graph building).
"""

from __future__ import annotations

from typing import Any

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.sparse_tensor import SparseTensor
from client.framework.sparse_tensor import convert_to_sparse_tensor as _convert_to_sparse_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops


def sparse_tensor_dense_matmul(
    sp_a: Any, b: Any, adjoint_a: bool = False, adjoint_b: bool = False, name: str | None = None
) -> Any:
    """A (sparse, rank 2) times b (dense): one SparseTensorDenseMatMul under its scope."""
    sp_a = _convert_to_sparse_tensor(sp_a)
    # The node is named after its op inside the scope, as TF's:
    # "SparseTensorDenseMatMul/SparseTensorDenseMatMul".
    with _ops.name_scope(name, "SparseTensorDenseMatMul", [sp_a.indices, sp_a.values, b]):
        b = convert_to_tensor(b, name="b")
        attrs = {"adjoint_a": adjoint_a, "adjoint_b": adjoint_b}
        inputs = [sp_a.indices, sp_a.values, sp_a.dense_shape, b]
        return apply_op("SparseTensorDenseMatMul", inputs, attrs).outputs[0]


def to_dense(
    sp_input: Any, default_value: Any = None, validate_indices: bool = True, name: str | None = None
) -> Any:
    """The dense tensor of a SparseTensor: one SparseToDense node."""
    sp_input = _convert_to_sparse_tensor(sp_input)
    if default_value is None:
        default_value = array_ops.zeros([], dtype=sp_input.dtype)
    inputs = [sp_input.indices, sp_input.dense_shape, sp_input.values, default_value]
    op = apply_op(
        "SparseToDense",
        inputs,
        {"validate_indices": validate_indices},
        name=name or "SparseToDense",
    )
    return op.outputs[0]


def placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> SparseTensor:
    """tf.sparse.placeholder (TF1's tf.sparse_placeholder): a SparseTensor of placeholders
    "<name>/values", "<name>/indices" and "<name>/shape", fed with a SparseTensorValue. A
    given `shape` becomes the feedable default of the shape (a PlaceholderWithDefault of a
    "<name>/shape_default" Const, -1 for unknown dimensions), as in TF's array_ops."""
    shape_name = None if name is None else name + "/shape"
    if shape is None:
        rank = None
        dense_shape = array_ops.placeholder(dtypes.int64, shape=[rank], name=shape_name)
        static = shape_fns._shape_from_tensor(dense_shape)
    elif isinstance(shape, _ops.Tensor):
        rank = shape.shape[0]
        static = shape_fns._shape_from_tensor(shape)
        dense_shape = array_ops.placeholder_with_default(shape, shape.shape, name=shape_name)
    else:
        dims = [None if d is None or d == -1 else int(d) for d in TensorShape(shape).as_list()]
        rank, static = len(dims), TensorShape(dims)
        default = convert_to_tensor(
            [-1 if d is None else d for d in dims],
            dtype=dtypes.int64,
            name=None if name is None else name + "/shape_default",
        )
        dense_shape = array_ops.placeholder_with_default(default, [rank], name=shape_name)
    values = array_ops.placeholder(
        dtype, shape=[None], name=None if name is None else name + "/values"
    )
    indices = array_ops.placeholder(
        dtypes.int64, shape=[None, rank], name=None if name is None else name + "/indices"
    )
    result = SparseTensor(indices, values, dense_shape)
    result.set_shape(static)
    return result


sparse_placeholder = placeholder
sparse_tensor_to_dense = to_dense
matmul = sparse_dense_matmul = sparse_tensor_dense_matmul


# -- static shapes ------------------------------------------------------------------------------
@shape_fns._reg("SparseTensorDenseMatMul")
def _sparse_dense_matmul_shape(op: Any) -> list[Any]:
    a_shape = shape_fns.constant_value(op.inputs[2])
    b = op.inputs[3].shape
    adj_a, adj_b = op.get_attr("adjoint_a"), op.get_attr("adjoint_b")
    rows = None if a_shape is None else int(a_shape[1 if adj_a else 0])
    cols = None
    if b.ndims is not None:
        cols = b.as_list()[0 if adj_b else 1]
    return [TensorShape([rows, cols])]


# -- tf.sparse's reshaping, joining and normalizing ops (TF1 signatures) -----------------------
from client.ops import sparse_extra_ops as _extra  # noqa: E402

concat = _extra.sparse_concat
maximum = _extra.sparse_maximum
minimum = _extra.sparse_minimum
reshape = _extra.sparse_reshape
slice = _extra.sparse_slice  # noqa: A001  (tf.sparse.slice)
softmax = _extra.sparse_softmax
split = _extra.sparse_split
sparse_slice = _extra.sparse_slice  # TF1's tf.sparse_slice

# -- tf.sparse's add, reductions, row filling, retain, transpose, from_dense, reorder ----------
from client.ops import sparse_gap_ops as _gap  # noqa: E402

add = _gap.sparse_add  # TF1's tf.sparse.add keeps the thresh argument
reduce_sum, reduce_max = _gap.sparse_reduce_sum, _gap.sparse_reduce_max
fill_empty_rows, retain = _gap.sparse_fill_empty_rows, _gap.sparse_retain
transpose, reorder, from_dense = _gap.sparse_transpose, _gap.sparse_reorder, _gap.from_dense
