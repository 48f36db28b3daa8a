"""Ops (executor stage), tf.data transformations that call functions: MapDataset,
ParallelMapDataset(V2), FilterDataset, FlatMapDataset, InterleaveDataset and
ParallelInterleaveDatasetV4 (TensorFlow's map_dataset_op.cc, filter_dataset_op.cc,
flat_map_dataset_op.cc, interleave_dataset_op.cc).

A function gets an element's components followed by the tensors it captured
(`other_arguments`), and runs through the function runtime as a child step of the step
asking for the element (base.CapturedFunction). Parallel variants make one call at
a time, in input order: the order TensorFlow guarantees when deterministic (Python
bodies would gain nothing from concurrent calls under the GIL). Iterators are used under
their own lock; datasets are immutable.
"""

from __future__ import annotations

import os

from common.errors import InvalidArgumentError
from common.ops.data.base import (
    CapturedFunction,
    Dataset,
    DatasetFn,
    DatasetIterator,
    Element,
    IteratorContext,
    as_element,
    dataset_kernel,
    dataset_of,
    function_factory,
    scalar_arg,
    spec_of,
)
from common.ops.registry import KernelConstruction, OpKernelContext, register_op

_SPEC = ["output_types: list(type) >= 1", "output_shapes: list(shape) >= 1"]
_METADATA = "metadata: string = ''"
_TARGS = "Targuments: list(type) >= 0"
_ARGS = ["input_dataset: variant", "other_arguments: Targuments"]
_OUT = ["handle: variant"]

register_op("MapDataset", inputs=_ARGS, outputs=_OUT,
            attrs=["f: func", _TARGS, *_SPEC, "use_inter_op_parallelism: bool = true",
                   "preserve_cardinality: bool = false", "force_synchronous: bool = false",
                   _METADATA])  # fmt: skip
register_op("ParallelMapDataset", inputs=[*_ARGS, "num_parallel_calls: int32"], outputs=_OUT,
            attrs=["f: func", _TARGS, *_SPEC, "use_inter_op_parallelism: bool = true",
                   "sloppy: bool = false", "preserve_cardinality: bool = false",
                   _METADATA])  # fmt: skip
register_op("ParallelMapDatasetV2", inputs=[*_ARGS, "num_parallel_calls: int64"], outputs=_OUT,
            attrs=["f: func", _TARGS, *_SPEC, "use_inter_op_parallelism: bool = true",
                   "deterministic: string = 'default'", "preserve_cardinality: bool = false",
                   "use_unbounded_threadpool: bool = false", _METADATA])  # fmt: skip
register_op("FilterDataset", inputs=_ARGS, outputs=_OUT,
            attrs=["predicate: func", _TARGS, *_SPEC, _METADATA])  # fmt: skip
register_op("FlatMapDataset", inputs=_ARGS, outputs=_OUT,
            attrs=["f: func", _TARGS, *_SPEC, _METADATA])  # fmt: skip
register_op("InterleaveDataset", inputs=[*_ARGS, "cycle_length: int64", "block_length: int64"],
            outputs=_OUT, attrs=["f: func", _TARGS, *_SPEC, _METADATA])  # fmt: skip
register_op("ParallelInterleaveDatasetV4",
            inputs=[*_ARGS, "cycle_length: int64", "block_length: int64",
                    "buffer_output_elements: int64", "prefetch_input_elements: int64",
                    "num_parallel_calls: int64"],
            outputs=_OUT,
            attrs=["f: func", "deterministic: string = 'default'", _TARGS, *_SPEC,
                   _METADATA])  # fmt: skip


# -- Map ----------------------------------------------------------------------------------------
class MapDataset(Dataset):
    def __init__(self, input_ds: Dataset, f: CapturedFunction, types: list, shapes: list,
                 preserve_cardinality: bool) -> None:  # fmt: skip
        super().__init__(types, shapes)
        self.input, self.f = input_ds, f
        self.preserve_cardinality = preserve_cardinality

    def make_iterator(self) -> DatasetIterator:
        return _MapIterator(self)

    def cardinality(self) -> int:
        return self.input.cardinality()


class _MapIterator(DatasetIterator):
    def __init__(self, ds: MapDataset) -> None:
        super().__init__()
        self.ds = ds
        self.input = ds.input.make_iterator()

    def _next(self, ctx: IteratorContext) -> Element | None:
        element = self.input.get_next(ctx)
        if element is None:
            return None
        outputs = self.ds.f(ctx, element)
        if len(outputs) != len(self.ds.output_types):
            raise InvalidArgumentError(
                f"Function {self.ds.f.name} returned {len(outputs)} values, the dataset "
                f"declares {len(self.ds.output_types)} components",
                self.ds.f.node_name,
            )
        return as_element(outputs, self.ds.output_types)


def _map_factory(k: KernelConstruction) -> DatasetFn:
    types, shapes = spec_of(k)
    make_f = function_factory(k, "f")
    preserve = bool(k.attrs.get("preserve_cardinality", False))

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        f = make_f(ctx, inputs)
        return MapDataset(dataset_of(inputs[0], k.node_name), f, types, shapes, preserve)

    return make


for _op in ("MapDataset", "ParallelMapDataset", "ParallelMapDatasetV2"):
    dataset_kernel(_op)(_map_factory)


# -- Filter -------------------------------------------------------------------------------------
class FilterDataset(Dataset):
    def __init__(self, input_ds: Dataset, predicate: CapturedFunction) -> None:
        super().__init__(input_ds.output_types, input_ds.output_shapes)
        self.input, self.predicate = input_ds, predicate

    def make_iterator(self) -> DatasetIterator:
        return _FilterIterator(self)


class _FilterIterator(DatasetIterator):
    def __init__(self, ds: FilterDataset) -> None:
        super().__init__()
        self.predicate = ds.predicate
        self.input = ds.input.make_iterator()

    def _next(self, ctx: IteratorContext) -> Element | None:
        while True:
            element = self.input.get_next(ctx)
            if element is None:
                return None
            result = self.predicate(ctx, element)
            if len(result) != 1 or result[0].dtype != bool or result[0].size != 1:
                raise InvalidArgumentError(
                    "Filter predicate `f` must return a scalar bool.", self.predicate.node_name
                )
            if bool(result[0].reshape(())):
                return element


@dataset_kernel("FilterDataset")
def _filter(k: KernelConstruction) -> DatasetFn:
    make_f = function_factory(k, "predicate")

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        f = make_f(ctx, inputs)
        return FilterDataset(dataset_of(inputs[0], k.node_name), f)

    return make


# -- FlatMap / Interleave -------------------------------------------------------------------------
def _dataset_from(f: CapturedFunction, ctx: IteratorContext, element: Element) -> Dataset:
    """The dataset `f` makes of one input element."""
    outputs = f(ctx, element)
    if len(outputs) != 1 or outputs[0].dtype != object or outputs[0].shape != ():
        raise InvalidArgumentError(
            "Function must return a single scalar of dtype DT_VARIANT.", f.node_name
        )
    return dataset_of(outputs[0], f.node_name)


class InterleaveDataset(Dataset):
    """Interleave; FlatMap is the case cycle_length 1, block_length unbounded."""

    def __init__(self, input_ds: Dataset, f: CapturedFunction, cycle_length: int,
                 block_length: int, types: list, shapes: list) -> None:  # fmt: skip
        super().__init__(types, shapes)
        self.input, self.f = input_ds, f
        self.cycle_length, self.block_length = cycle_length, block_length

    def make_iterator(self) -> DatasetIterator:
        return _InterleaveIterator(self)


class _InterleaveIterator(DatasetIterator):
    """TF's InterleaveDatasetOp::Iterator: a cycle of open element iterators, taking
    block_length elements from each in turn; an exhausted one is replaced by the next
    input element's dataset."""

    def __init__(self, ds: InterleaveDataset) -> None:
        super().__init__()
        self.ds = ds
        self.input = ds.input.make_iterator()
        self.current: list[DatasetIterator | None] = [None] * ds.cycle_length
        self.cycle_index = 0
        self.block_index = 0
        self.num_open = 0
        self.end_of_input = False

    def _advance_cycle(self) -> None:
        self.block_index = 0
        self.cycle_index = (self.cycle_index + 1) % self.ds.cycle_length

    def _next(self, ctx: IteratorContext) -> Element | None:
        while not self.end_of_input or self.num_open > 0:
            current = self.current[self.cycle_index]
            if current is not None:
                element = current.get_next(ctx)
                if element is not None:
                    self.block_index += 1
                    if self.block_index == self.ds.block_length:
                        self._advance_cycle()
                    return element
                self.current[self.cycle_index] = None
                self.num_open -= 1
                self._advance_cycle()
            elif not self.end_of_input:
                arg = self.input.get_next(ctx)
                if arg is None:
                    self.end_of_input = True
                    continue
                dataset = _dataset_from(self.ds.f, ctx, arg)
                self.current[self.cycle_index] = dataset.make_iterator()
                self.num_open += 1
            else:
                self._advance_cycle()
        return None


_UNBOUNDED = 1 << 62


@dataset_kernel("FlatMapDataset")
def _flat_map(k: KernelConstruction) -> DatasetFn:
    types, shapes = spec_of(k)
    make_f = function_factory(k, "f")

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        f = make_f(ctx, inputs)
        input_ds = dataset_of(inputs[0], k.node_name)
        return InterleaveDataset(input_ds, f, 1, _UNBOUNDED, types, shapes)

    return make


def _interleave_factory(k: KernelConstruction) -> DatasetFn:
    types, shapes = spec_of(k)
    make_f = function_factory(k, "f")
    n = len(k.attr("Targuments"))

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        node = k.node_name
        cycle = int(scalar_arg(inputs[1 + n], "cycle_length", node))
        block = int(scalar_arg(inputs[2 + n], "block_length", node))
        if cycle == -1:  # AUTOTUNE: TF takes the machine's parallelism
            cycle = _parallelism()
        if cycle <= 0:
            raise InvalidArgumentError("cycle_length must be greater than zero.", node)
        if block <= 0:
            raise InvalidArgumentError("block_length must be greater than zero.", node)
        f = make_f(ctx, inputs)
        input_ds = dataset_of(inputs[0], node)
        return InterleaveDataset(input_ds, f, cycle, block, types, shapes)

    return make


def _parallelism() -> int:
    return os.cpu_count() or 1


for _op in ("InterleaveDataset", "ParallelInterleaveDatasetV4"):
    dataset_kernel(_op)(_interleave_factory)
