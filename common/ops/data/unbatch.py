"""Ops (executor stage): UnbatchDataset (tf.data's unbatch, TensorFlow's
unbatch_dataset_op.cc): each input element split along its first dimension, one output
element per row. Errors carry TensorFlow's messages; each iterator runs under its own
lock (base.py)."""

from __future__ import annotations

from common.errors import InvalidArgumentError
from common.ops.data.base import (
    UNKNOWN,
    Dataset,
    DatasetFn,
    DatasetIterator,
    Element,
    IteratorContext,
    dataset_kernel,
    dataset_of,
    spec_of,
)
from common.ops.registry import KernelConstruction, OpKernelContext, register_op

register_op("UnbatchDataset", inputs=["input_dataset: variant"], outputs=["handle: variant"],
            attrs=["output_types: list(type) >= 1", "output_shapes: list(shape) >= 1",
                   "metadata: string = ''"])  # fmt: skip


class UnbatchDataset(Dataset):
    def __init__(self, input_ds: Dataset, types: list, shapes: list, node: str) -> None:
        super().__init__(types, shapes)
        self.input, self.node = input_ds, node

    def make_iterator(self) -> DatasetIterator:
        return _UnbatchIterator(self)

    def cardinality(self) -> int:
        # The rows per element are only known when it is read (TF's kUnknownCardinality).
        return UNKNOWN


class _UnbatchIterator(DatasetIterator):
    def __init__(self, ds: UnbatchDataset) -> None:
        super().__init__()
        self.node = ds.node
        self.input: DatasetIterator | None = ds.input.make_iterator()
        self.current: Element = []
        self.row, self.rows = 0, 0

    def _next(self, ctx: IteratorContext) -> Element | None:
        while self.row >= self.rows:
            if self.input is None:
                return None
            element = self.input.get_next(ctx)
            if element is None:
                self.input = None
                return None
            self.current, self.row, self.rows = element, 0, self._batch_size(element)
        self.row += 1
        # [i, ...] keeps a 0-d array (plain indexing would give a bare scalar).
        return [c[self.row - 1, ...].copy() for c in self.current]

    def _batch_size(self, element: Element) -> int:
        if any(c.ndim == 0 for c in element):
            raise InvalidArgumentError(
                "Input element must have a non-scalar value in each component.", self.node
            )
        size = element[0].shape[0]
        for i, c in enumerate(element[1:], start=1):
            if c.shape[0] != size:
                raise InvalidArgumentError(
                    "Input element must have the same batch size in each component. "
                    f"Component 0 had size {size} but component {i} had size, {c.shape[0]}.",
                    self.node,
                )
        return int(size)


@dataset_kernel("UnbatchDataset")
def _unbatch(k: KernelConstruction) -> DatasetFn:
    types, shapes = spec_of(k)

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        return UnbatchDataset(dataset_of(inputs[0], k.node_name), types, shapes, k.node_name)

    return make
