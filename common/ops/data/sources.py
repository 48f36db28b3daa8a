"""Ops (executor stage), tf.data sources: TensorDataset, TensorSliceDataset, RangeDataset
(TensorFlow's tensor_dataset_op.cc, tensor_slice_dataset_op.cc, range_dataset_op.cc).

Datasets are immutable; their iterators hand out views of the held tensors (never written:
a view is never updated in place, see state_ops). Errors carry TensorFlow's words.
"""

from __future__ import annotations

import numpy as np

from common import dtypes
from common.errors import InvalidArgumentError
from common.ops.data.base import (
    Dataset,
    DatasetFn,
    DatasetIterator,
    Element,
    IteratorContext,
    dataset_kernel,
    scalar_arg,
    spec_of,
    verify_shapes,
)
from common.ops.registry import KernelConstruction, OpKernelContext, register_op

_SPEC = ["output_types: list(type) >= 1", "output_shapes: list(shape) >= 1"]
_T_SPEC = ["Toutput_types: list(type) >= 1", "output_shapes: list(shape) >= 1"]
_METADATA = "metadata: string = ''"
_REPLICATE = "replicate_on_split: bool = false"

register_op("TensorDataset", inputs=["components: Toutput_types"], outputs=["handle: variant"],
            attrs=[*_T_SPEC, _METADATA], stateful=True)  # fmt: skip
register_op("TensorSliceDataset", inputs=["components: Toutput_types"],
            outputs=["handle: variant"],
            attrs=[*_T_SPEC, "is_files: bool = false", _METADATA, _REPLICATE],
            stateful=True)  # fmt: skip
register_op("RangeDataset", inputs=["start: int64", "stop: int64", "step: int64"],
            outputs=["handle: variant"], attrs=[*_SPEC, _METADATA, _REPLICATE],
            stateful=True)  # fmt: skip


# -- TensorDataset ------------------------------------------------------------------------
class TensorDataset(Dataset):
    """One element: the given tensors."""

    def __init__(self, components: list[np.ndarray], types: list, shapes: list) -> None:
        super().__init__(types, shapes)
        self.components = components

    def make_iterator(self) -> DatasetIterator:
        return _TensorIterator(self)

    def cardinality(self) -> int:
        return 1


class _TensorIterator(DatasetIterator):
    def __init__(self, ds: TensorDataset) -> None:
        super().__init__()
        self.ds = ds
        self.produced = False

    def _next(self, ctx: IteratorContext) -> Element | None:
        if self.produced:
            return None
        self.produced = True
        return list(self.ds.components)


@dataset_kernel("TensorDataset")
def _tensor_dataset(k: KernelConstruction) -> DatasetFn:
    types, shapes = spec_of(k, "Toutput_types")

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        components = [np.asarray(v) for v in inputs]
        verify_shapes(shapes, [tuple(c.shape) for c in components], k.node_name)
        return TensorDataset(components, types, shapes)

    return make


# -- TensorSliceDataset -------------------------------------------------------------------
class IndexedDataset(Dataset):
    """A dataset of `num_elements` elements, each made on its own from its index: the
    slices of tensors along dimension 0 (dense or sparse)."""

    num_elements: int

    def element(self, i: int) -> Element:
        raise NotImplementedError

    def make_iterator(self) -> DatasetIterator:
        return _IndexIterator(self)

    def cardinality(self) -> int:
        return self.num_elements


class _IndexIterator(DatasetIterator):
    def __init__(self, ds: IndexedDataset) -> None:
        super().__init__()
        self.ds = ds
        self.index = 0

    def _next(self, ctx: IteratorContext) -> Element | None:
        i = self.index
        if i >= self.ds.num_elements:
            return None
        self.index = i + 1
        return self.ds.element(i)


class TensorSliceDataset(IndexedDataset):
    """One element per index of dimension 0 of every component."""

    def __init__(self, components: list[np.ndarray], types: list, shapes: list) -> None:
        super().__init__(types, shapes)
        self.components = components
        self.num_elements = int(components[0].shape[0])

    def element(self, i: int) -> Element:
        return [c[i, ...] for c in self.components]


def _check_slices(components: list[np.ndarray], node: str) -> None:
    if any(c.ndim == 0 for c in components):
        raise InvalidArgumentError("All components must be at least 1-dimensional", node)
    n = components[0].shape[0]
    if any(c.shape[0] != n for c in components):
        raise InvalidArgumentError(
            "All components must have the same size in the 0th dimension", node
        )


@dataset_kernel("TensorSliceDataset")
def _tensor_slice_dataset(k: KernelConstruction) -> DatasetFn:
    types, shapes = spec_of(k, "Toutput_types")

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        components = [np.asarray(v) for v in inputs]
        _check_slices(components, k.node_name)
        verify_shapes(shapes, [tuple(c.shape[1:]) for c in components], k.node_name)
        return TensorSliceDataset(components, types, shapes)

    return make


# -- RangeDataset ---------------------------------------------------------------------------
class RangeDataset(Dataset):
    """start, start + step, ... up to (excluding) stop, as output_types[0]."""

    def __init__(self, start: int, stop: int, step: int, types: list, shapes: list) -> None:
        super().__init__(types, shapes)
        self.start, self.stop, self.step = start, stop, step
        self.np_type = dtypes.as_numpy(types[0])

    def make_iterator(self) -> DatasetIterator:
        return _RangeIterator(self)

    def cardinality(self) -> int:
        if self.step > 0:
            return max(0, -(-(self.stop - self.start) // self.step))
        return max(0, -(-(self.start - self.stop) // -self.step))


class _RangeIterator(DatasetIterator):
    def __init__(self, ds: RangeDataset) -> None:
        super().__init__()
        self.ds = ds
        self.next_value = ds.start

    def _next(self, ctx: IteratorContext) -> Element | None:
        ds, value = self.ds, self.next_value
        if (ds.step > 0 and value >= ds.stop) or (ds.step < 0 and value <= ds.stop):
            return None
        self.next_value = value + ds.step
        return [np.asarray(value, dtype=ds.np_type)]


@dataset_kernel("RangeDataset")
def _range_dataset(k: KernelConstruction) -> DatasetFn:
    types, shapes = spec_of(k)
    if len(types) != 1:
        raise InvalidArgumentError("RangeDataset has exactly one output type", k.node_name)

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        start, stop, step = (int(scalar_arg(v, n, k.node_name))
                             for v, n in zip(inputs, ("start", "stop", "step")))  # fmt: skip
        if step == 0:
            raise InvalidArgumentError("step must be a non-zero integer.", k.node_name)
        return RangeDataset(start, stop, step, types, shapes)

    return make
