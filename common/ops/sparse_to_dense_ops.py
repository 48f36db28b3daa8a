"""Ops (executor stage): SparseToDense, as TensorFlow's sparse_to_dense_op.cc — a dense
tensor of default_value with sparse_values written at sparse_indices (tf.sparse_to_dense,
the accidental-hit mask of tf.nn.sampled_softmax_loss). With validate_indices the indices
must be in bounds, sorted and distinct (SparseTensor::IndicesValid's messages); without,
only in bounds, and a repeated index keeps its last value. Pure kernel: safe from any
thread."""

from __future__ import annotations

import numpy as np

from common import memory
from common.errors import InvalidArgumentError
from common.ops.array_ops import as_int_list, shape_str
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op

register_op(
    "SparseToDense",
    inputs=[
        "sparse_indices: Tindices",
        "output_shape: Tindices",
        "sparse_values: T",
        "default_value: T",
    ],
    outputs=["dense: T"],
    attrs=["validate_indices: bool = true", "T: type", "Tindices: {int32, int64}"],
)


def _check_shapes(indices: np.ndarray, out_shape: np.ndarray, values: np.ndarray) -> None:
    """TF's CheckSparseToDenseShapes."""
    if indices.ndim > 2:
        raise InvalidArgumentError(
            "sparse_indices should be a scalar, vector, or matrix, got shape "
            f"{shape_str(indices.shape)}"
        )
    if out_shape.ndim != 1:
        raise InvalidArgumentError(
            f"output_shape must be rank 1, got shape {shape_str(out_shape.shape)}"
        )
    num_elems = indices.shape[0] if indices.ndim > 0 else 1
    num_dims = indices.shape[1] if indices.ndim > 1 else 1
    if out_shape.size != num_dims:
        raise InvalidArgumentError(
            f"output_shape has incorrect number of elements: {out_shape.size} should be: {num_dims}"
        )
    if values.ndim > 1 or (values.ndim == 1 and values.shape[0] != num_elems):
        raise InvalidArgumentError(
            f"sparse_values has incorrect shape {shape_str(values.shape)}, "
            f"should be [] or [{num_elems}]"
        )


def _index_str(row: np.ndarray) -> str:
    return "[" + ",".join(str(int(i)) for i in row) + "]"


def indices_valid(rows: np.ndarray, dims: list[int]) -> None:
    """SparseTensor::IndicesValid: each row in bounds, rows in increasing order."""
    for n, row in enumerate(rows):
        if any(i < 0 or i >= d for i, d in zip(row, dims)):
            raise InvalidArgumentError(
                f"indices[{n}] = {_index_str(row)} is out of bounds: need 0 <= index < "
                f"{shape_str(dims)}"
            )
        if n == 0:
            continue
        prev = tuple(int(i) for i in rows[n - 1])
        here = tuple(int(i) for i in row)
        if here == prev:
            raise InvalidArgumentError(f"indices[{n}] = {_index_str(row)} is repeated")
        if here < prev:
            raise InvalidArgumentError(
                f"indices[{n}] = {_index_str(row)} is out of order. Many sparse ops require "
                "sorted indices.\n    Use `tf.sparse.reorder` to create a correctly ordered "
                "copy.\n\n"
            )


@register_kernel("SparseToDense")
def _sparse_to_dense(k: KernelConstruction):
    validate = bool(k.attrs.get("validate_indices", True))

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        indices, out_shape, values, default = (np.asarray(x) for x in inputs)
        _check_shapes(indices, out_shape, values)
        if default.ndim != 0:
            raise InvalidArgumentError("default_value should be a scalar.")
        dims = as_int_list(out_shape)
        rows = indices.reshape(-1, len(dims)).astype(np.int64)
        if validate:
            indices_valid(rows, dims)
        elif np.any((rows < 0) | (rows >= np.array(dims, np.int64))):
            raise InvalidArgumentError(
                f"Indices are not valid (out of bounds).  Shape: {shape_str(dims)}"
            )
        if np.prod(dims, dtype=object) > 2**63 - 1:  # TensorFlow's TensorShape bound
            raise InvalidArgumentError(
                f"Shape {shape_str(dims)} would have more than 2**63 - 1 elements"
            )
        memory.check_allocation(k, dims, values.dtype)
        out = np.full(dims, default, dtype=values.dtype)
        out[tuple(rows.T)] = np.broadcast_to(values, (len(rows),))
        return [out]

    return compute
