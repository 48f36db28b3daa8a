"""Ops (executor stage), tf.data source: SparseTensorSliceDataset (TensorFlow's
sparse_tensor_slice_dataset_op.cc), one element per row of a SparseTensor's first
dimension: that row's entries as a SparseTensor of the remaining dimensions (indices
without their first column, values, dense_shape[1:]); a row without entries gives an empty
one. Immutable dataset; its iterators hand out fresh arrays."""

from __future__ import annotations

import numpy as np

from common.dtypes import DataType
from common.errors import InvalidArgumentError, UnimplementedError
from common.ops.data.base import Dataset, DatasetFn, Element, dataset_kernel
from common.ops.data.sources import IndexedDataset
from common.ops.math_util import shape_str
from common.ops.registry import KernelConstruction, OpKernelContext, register_op

register_op(
    "SparseTensorSliceDataset",
    inputs=["indices: int64", "values: Tvalues", "dense_shape: int64"],
    outputs=["handle: variant"],
    attrs=["Tvalues: type"],
    stateful=True,
)


class SparseTensorSliceDataset(IndexedDataset):
    """The rows of dimension 0 of a SparseTensor whose indices are ordered in that
    dimension."""

    def __init__(
        self, indices: np.ndarray, values: np.ndarray, shape: np.ndarray, t: DataType
    ) -> None:
        rank = shape.size
        super().__init__(
            [DataType.DT_INT64, t, DataType.DT_INT64],
            [(None, rank - 1), (None,), (rank - 1,)],
        )
        self.indices, self.values, self.shape = indices, values, shape
        self.num_elements = int(shape[0]) if rank else 0
        # Entries [starts[b], starts[b + 1]) are row b's (the rows are ordered).
        rows = indices[:, 0] if indices.shape[0] else np.zeros(0, np.int64)
        self.starts = np.searchsorted(rows, np.arange(self.num_elements + 1), side="left")

    def element(self, b: int) -> Element:
        lo, hi = int(self.starts[b]), int(self.starts[b + 1])
        return [self.indices[lo:hi, 1:].copy(), self.values[lo:hi].copy(), self.shape[1:].copy()]


def _check(indices: np.ndarray, values: np.ndarray, shape: np.ndarray, node: str) -> None:
    """TensorFlow's checks, its words."""
    if indices.ndim != 2:
        raise InvalidArgumentError(
            f"Input indices must be a matrix. Got: {shape_str(indices.shape)}", node
        )
    if values.ndim != 1:
        raise InvalidArgumentError(
            f"Input values must be a vector. Got: {shape_str(values.shape)}", node
        )
    if shape.ndim != 1:
        raise InvalidArgumentError(f"Input shape must be a vector. Got: {shape_str(shape.shape)}",
                                   node)  # fmt: skip
    if values.shape[0] != indices.shape[0]:
        raise InvalidArgumentError(
            f"Number of values must match first dimension of indices. Got {values.shape[0]} "
            f"values, indices shape: {shape_str(indices.shape)}",
            node,
        )
    if shape.shape[0] != indices.shape[1]:
        raise InvalidArgumentError(
            f"Number of dimensions must match second dimension of indices. Got "
            f"{shape.shape[0]} dimensions, indices shape: {shape_str(indices.shape)}",
            node,
        )
    if indices.shape[0] > 1 and np.any(np.diff(indices[:, 0]) < 0):
        raise UnimplementedError(
            "The SparseTensor must be ordered in the batch dimension; handling arbitrarily "
            "ordered input is not currently supported.",
            node,
        )


@dataset_kernel("SparseTensorSliceDataset")
def _sparse_tensor_slice_dataset(k: KernelConstruction) -> DatasetFn:
    t = DataType(k.attr("Tvalues"))

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        indices, values, shape = (np.asarray(v) for v in inputs)
        _check(indices, values, shape, k.node_name)
        return SparseTensorSliceDataset(indices.astype(np.int64), values, shape, t)

    return make
