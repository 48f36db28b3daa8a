"""Ops (executor stage), tf.data transformations without functions: Repeat, Take, Skip,
BatchDatasetV2, PaddedBatchDatasetV2, Zip, Concatenate, CacheDataset(V2) (memory only),
DatasetCardinality, and the ops that do not change the elements (Prefetch, Optimize(V2),
Model, MaxIntraOpParallelism, PrivateThreadPool), which hand their input dataset on.

Each dataset is immutable (the memory cache guards itself); each iterator is used under
its own lock (base.py). TensorFlow's semantics and words: a negative Repeat count
repeats forever (and ends at once on an empty input), a negative Take count takes all, a
negative Skip count skips all.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from common import dtypes
from common.errors import InvalidArgumentError, UnimplementedError
from common.ops.data.base import (
    INFINITE,
    UNKNOWN,
    Dataset,
    DatasetFn,
    DatasetIterator,
    Element,
    EmptyIterator,
    IteratorContext,
    ResourceDeleter,
    dataset_kernel,
    dataset_of,
    scalar_arg,
    spec_of,
    unique_id,
    verify_types,
)
from common.ops.registry import (
    KernelConstruction,
    OpKernelContext,
    register_kernel,
    register_op,
)
from common.ops.variant_ops import variant_scalar
from common.resource_mgr import ResourceHandle, handle_of
from common.tensor_shape import shape_string

_SPEC = ["output_types: list(type) >= 1", "output_shapes: list(shape) >= 1"]
_METADATA = "metadata: string = ''"

for _op in ("RepeatDataset", "TakeDataset", "SkipDataset"):
    register_op(_op, inputs=["input_dataset: variant", "count: int64"],
                outputs=["handle: variant"], attrs=[*_SPEC, _METADATA])  # fmt: skip
register_op("BatchDatasetV2",
            inputs=["input_dataset: variant", "batch_size: int64", "drop_remainder: bool"],
            outputs=["handle: variant"],
            attrs=["parallel_copy: bool = false", *_SPEC, _METADATA])  # fmt: skip
register_op(
    "PaddedBatchDatasetV2",
    inputs=["input_dataset: variant", "batch_size: int64", "padded_shapes: N * int64",
            "padding_values: Toutput_types", "drop_remainder: bool"],
    outputs=["handle: variant"],
    attrs=["parallel_copy: bool = false", "Toutput_types: list(type) >= 1",
           "output_shapes: list(shape) >= 1", "N: int >= 1", _METADATA],
)  # fmt: skip
register_op("ZipDataset", inputs=["input_datasets: N * variant"], outputs=["handle: variant"],
            attrs=[*_SPEC, "N: int >= 1", _METADATA])  # fmt: skip
register_op("ConcatenateDataset", inputs=["input_dataset: variant", "another_dataset: variant"],
            outputs=["handle: variant"], attrs=[*_SPEC, _METADATA])  # fmt: skip
register_op("PrefetchDataset", inputs=["input_dataset: variant", "buffer_size: int64"],
            outputs=["handle: variant"],
            attrs=[*_SPEC, "slack_period: int = 0", "legacy_autotune: bool = true",
                   "buffer_size_min: int = 0", _METADATA])  # fmt: skip
_CONFIGS = "optimization_configs: list(string) = []"
register_op("OptimizeDataset", inputs=["input_dataset: variant", "optimizations: string"],
            outputs=["handle: variant"], attrs=[*_SPEC, _CONFIGS])  # fmt: skip
register_op("OptimizeDatasetV2",
            inputs=["input_dataset: variant", "optimizations_enabled: string",
                    "optimizations_disabled: string", "optimizations_default: string"],
            outputs=["handle: variant"], attrs=[*_SPEC, _CONFIGS])  # fmt: skip
register_op("ModelDataset", inputs=["input_dataset: variant"], outputs=["handle: variant"],
            attrs=["algorithm: int = 0", "cpu_budget: int = 0", "ram_budget: int = 0",
                   *_SPEC])  # fmt: skip
register_op("MaxIntraOpParallelismDataset",
            inputs=["input_dataset: variant", "max_intra_op_parallelism: int64"],
            outputs=["handle: variant"], attrs=_SPEC)  # fmt: skip
register_op("PrivateThreadPoolDataset", inputs=["input_dataset: variant", "num_threads: int64"],
            outputs=["handle: variant"], attrs=_SPEC)  # fmt: skip
register_op("CacheDataset", inputs=["input_dataset: variant", "filename: string"],
            outputs=["handle: variant"], attrs=[*_SPEC, _METADATA])  # fmt: skip
register_op("CacheDatasetV2",
            inputs=["input_dataset: variant", "filename: string", "cache: resource"],
            outputs=["handle: variant"], attrs=[*_SPEC, _METADATA], stateful=True)  # fmt: skip
register_op("DatasetCardinality", inputs=["input_dataset: variant"],
            outputs=["cardinality: int64"],
            attrs=["cardinality_options: string = ''"])  # fmt: skip
register_op("DummyMemoryCache", outputs=["handle: resource"], stateful=True)
register_op("AnonymousMemoryCache", outputs=["handle: resource", "deleter: variant"],
            stateful=True)  # fmt: skip
register_op("DeleteMemoryCache", inputs=["handle: resource", "deleter: variant"], stateful=True)


def _times(n: int, count: int) -> int:
    """Cardinality arithmetic: n elements `count` times."""
    if n == 0 or count == 0:
        return 0
    if count < 0 or n == INFINITE:
        return INFINITE
    if n == UNKNOWN:
        return UNKNOWN
    return n * count


# -- Repeat ---------------------------------------------------------------------------------
class RepeatDataset(Dataset):
    def __init__(self, input_ds: Dataset, count: int) -> None:
        super().__init__(input_ds.output_types, input_ds.output_shapes)
        self.input, self.count = input_ds, count

    def make_iterator(self) -> DatasetIterator:
        if self.count == 0:
            return EmptyIterator()
        return _RepeatIterator(self)

    def cardinality(self) -> int:
        return _times(self.input.cardinality(), self.count)


class _RepeatIterator(DatasetIterator):
    def __init__(self, ds: RepeatDataset) -> None:
        super().__init__()
        self.ds = ds
        self.epoch = 0
        self.input: DatasetIterator | None = ds.input.make_iterator()
        self.epoch_empty = True  # nothing produced yet in this epoch

    def _next(self, ctx: IteratorContext) -> Element | None:
        while self.input is not None:
            element = self.input.get_next(ctx)
            if element is not None:
                self.epoch_empty = False
                return element
            self.epoch += 1
            forever = self.ds.count < 0
            if (forever and self.epoch_empty) or (not forever and self.epoch >= self.ds.count):
                self.input = None  # an empty input repeated forever ends (TF's first_call_)
                break
            self.input = self.ds.input.make_iterator()
            self.epoch_empty = True
        return None


@dataset_kernel("RepeatDataset")
def _repeat(k: KernelConstruction) -> DatasetFn:
    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        count = int(scalar_arg(inputs[1], "count", k.node_name))
        return RepeatDataset(dataset_of(inputs[0], k.node_name), count)

    return make


# -- Take / Skip ------------------------------------------------------------------------------
class TakeDataset(Dataset):
    def __init__(self, input_ds: Dataset, count: int) -> None:
        super().__init__(input_ds.output_types, input_ds.output_shapes)
        self.input, self.count = input_ds, count

    def make_iterator(self) -> DatasetIterator:
        if self.count == 0:
            return EmptyIterator()
        return _TakeIterator(self)

    def cardinality(self) -> int:
        n = self.input.cardinality()
        if self.count < 0:
            return n
        if n == UNKNOWN:
            return UNKNOWN
        return self.count if n == INFINITE else min(n, self.count)


class _TakeIterator(DatasetIterator):
    def __init__(self, ds: TakeDataset) -> None:
        super().__init__()
        self.count = ds.count
        self.taken = 0
        self.input: DatasetIterator | None = ds.input.make_iterator()

    def _next(self, ctx: IteratorContext) -> Element | None:
        if self.input is None or (self.count >= 0 and self.taken >= self.count):
            self.input = None
            return None
        element = self.input.get_next(ctx)
        if element is None:
            self.input = None
            return None
        self.taken += 1
        return element


class SkipDataset(Dataset):
    def __init__(self, input_ds: Dataset, count: int) -> None:
        super().__init__(input_ds.output_types, input_ds.output_shapes)
        self.input, self.count = input_ds, count

    def make_iterator(self) -> DatasetIterator:
        return _SkipIterator(self)

    def cardinality(self) -> int:
        n = self.input.cardinality()
        if n in (INFINITE, UNKNOWN):
            return n if self.count >= 0 else (0 if n == INFINITE else UNKNOWN)
        return 0 if self.count < 0 else max(0, n - self.count)


class _SkipIterator(DatasetIterator):
    def __init__(self, ds: SkipDataset) -> None:
        super().__init__()
        self.to_skip = ds.count
        self.input: DatasetIterator | None = ds.input.make_iterator()

    def _next(self, ctx: IteratorContext) -> Element | None:
        if self.input is None:
            return None
        while self.to_skip != 0:  # negative: skip everything
            if self.input.get_next(ctx) is None:
                self.input = None
                return None
            self.to_skip -= 1 if self.to_skip > 0 else 0
        element = self.input.get_next(ctx)
        if element is None:
            self.input = None
        return element


@dataset_kernel("TakeDataset")
def _take(k: KernelConstruction) -> DatasetFn:
    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        count = int(scalar_arg(inputs[1], "count", k.node_name))
        return TakeDataset(dataset_of(inputs[0], k.node_name), count)

    return make


@dataset_kernel("SkipDataset")
def _skip(k: KernelConstruction) -> DatasetFn:
    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        count = int(scalar_arg(inputs[1], "count", k.node_name))
        return SkipDataset(dataset_of(inputs[0], k.node_name), count)

    return make


# -- Batch / PaddedBatch -------------------------------------------------------------------------
def _batch_cardinality(n: int, batch_size: int, drop_remainder: bool) -> int:
    if n in (INFINITE, UNKNOWN):
        return n
    return n // batch_size if drop_remainder else -(-n // batch_size)


def _take_batch(it: DatasetIterator, ctx: IteratorContext, n: int) -> list[Element]:
    batch: list[Element] = []
    while len(batch) < n:
        element = it.get_next(ctx)
        if element is None:
            break
        batch.append(element)
    return batch


def _shape_text(shape: Sequence[int]) -> str:
    return shape_string(tuple(int(d) for d in shape))


def stack_batch(batch: list[Element], node: str) -> Element:
    """TF's CopyBatch: each component stacked along a new dimension 0."""
    out = []
    for i in range(len(batch[0])):
        first = batch[0][i].shape
        for j, element in enumerate(batch[1:], start=1):
            if element[i].shape != first:
                raise InvalidArgumentError(
                    f"Cannot batch tensors with different shapes in component {i}. First "
                    f"element had shape {_shape_text(first)} and element {j} had shape "
                    f"{_shape_text(element[i].shape)}.",
                    node,
                )
        out.append(np.stack([e[i] for e in batch]))
    return out


class BatchDataset(Dataset):
    def __init__(self, input_ds: Dataset, batch_size: int, drop_remainder: bool,
                 types: list, shapes: list, node: str) -> None:  # fmt: skip
        super().__init__(types, shapes)
        self.input, self.batch_size, self.drop_remainder = input_ds, batch_size, drop_remainder
        self.node = node

    def make_iterator(self) -> DatasetIterator:
        return _BatchIterator(self)

    def cardinality(self) -> int:
        return _batch_cardinality(self.input.cardinality(), self.batch_size, self.drop_remainder)

    def combine(self, batch: list[Element]) -> Element:
        return stack_batch(batch, self.node)


class _BatchIterator(DatasetIterator):
    def __init__(self, ds: BatchDataset) -> None:
        super().__init__()
        self.ds = ds
        self.input: DatasetIterator | None = ds.input.make_iterator()

    def _next(self, ctx: IteratorContext) -> Element | None:
        if self.input is None:
            return None
        batch = _take_batch(self.input, ctx, self.ds.batch_size)
        if len(batch) < self.ds.batch_size:
            self.input = None
        if not batch or (self.ds.drop_remainder and len(batch) < self.ds.batch_size):
            return None
        return self.ds.combine(batch)


def _batch_size(value: object, node: str) -> int:
    size = int(scalar_arg(value, "batch_size", node))
    if size <= 0:
        raise InvalidArgumentError("Batch size must be greater than zero.", node)
    return size


@dataset_kernel("BatchDatasetV2")
def _batch(k: KernelConstruction) -> DatasetFn:
    types, shapes = spec_of(k)

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        size = _batch_size(inputs[1], k.node_name)
        drop = bool(scalar_arg(inputs[2], "drop_remainder", k.node_name))
        input_ds = dataset_of(inputs[0], k.node_name)
        return BatchDataset(input_ds, size, drop, types, shapes, k.node_name)

    return make


class PaddedBatchDataset(BatchDataset):
    """Batches whose components are padded to `padded_shapes` (-1: the batch's largest)."""

    def __init__(self, input_ds: Dataset, batch_size: int, drop_remainder: bool,
                 padded_shapes: list[list[int]], padding_values: list[np.ndarray],
                 types: list, shapes: list, node: str) -> None:  # fmt: skip
        super().__init__(input_ds, batch_size, drop_remainder, types, shapes, node)
        self.padded_shapes = padded_shapes
        self.padding_values = padding_values

    def combine(self, batch: list[Element]) -> Element:
        return [self._pad_component(batch, i) for i in range(len(self.padded_shapes))]

    def _pad_component(self, batch: list[Element], i: int) -> np.ndarray:
        want = self.padded_shapes[i]
        for element in batch:
            if element[i].ndim != len(want):
                raise InvalidArgumentError(
                    f"All elements in a batch must have the same rank as the padded shape "
                    f"for component{i}: expected rank {len(want)} but got element with rank "
                    f"{element[i].ndim}",
                    self.node,
                )
        dims = [d if d >= 0 else max(e[i].shape[j] for e in batch) for j, d in enumerate(want)]
        pad = self.padding_values[i]
        out = np.full((len(batch), *dims), pad.item(), dtype=pad.dtype)
        for b, element in enumerate(batch):
            value = element[i]
            if any(s > d for s, d in zip(value.shape, dims)):
                raise InvalidArgumentError(
                    "Attempted to pad to a smaller size than the input element.", self.node
                )
            region: tuple[int | slice, ...] = (b,) + tuple(slice(0, s) for s in value.shape)
            out[region] = value
        return out


@dataset_kernel("PaddedBatchDatasetV2")
def _padded_batch(k: KernelConstruction) -> DatasetFn:
    types, shapes = spec_of(k, "Toutput_types")
    n = k.attr("N")

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        size = _batch_size(inputs[1], k.node_name)
        padded = [[int(d) for d in np.asarray(v).reshape(-1)] for v in inputs[2 : 2 + n]]
        values = [np.asarray(v) for v in inputs[2 + n : 2 + 2 * n]]
        if any(v.shape != () for v in values):
            raise InvalidArgumentError("All padding values must be scalars.", k.node_name)
        drop = bool(scalar_arg(inputs[2 + 2 * n], "drop_remainder", k.node_name))
        input_ds = dataset_of(inputs[0], k.node_name)
        return PaddedBatchDataset(input_ds, size, drop, padded, values, types, shapes,
                                  k.node_name)  # fmt: skip

    return make


# -- Zip / Concatenate -----------------------------------------------------------------------------
class ZipDataset(Dataset):
    def __init__(self, inputs: list[Dataset], types: list, shapes: list) -> None:
        super().__init__(types, shapes)
        self.inputs = inputs

    def make_iterator(self) -> DatasetIterator:
        return _ZipIterator(self)

    def cardinality(self) -> int:
        ns = [d.cardinality() for d in self.inputs]
        finite = [n for n in ns if n >= 0]
        if finite:
            return min(finite)
        return UNKNOWN if UNKNOWN in ns else INFINITE


class _ZipIterator(DatasetIterator):
    def __init__(self, ds: ZipDataset) -> None:
        super().__init__()
        self.inputs: list[DatasetIterator] | None = [d.make_iterator() for d in ds.inputs]

    def _next(self, ctx: IteratorContext) -> Element | None:
        if self.inputs is None:
            return None
        out: Element = []
        for it in self.inputs:
            element = it.get_next(ctx)
            if element is None:
                self.inputs = None
                return None
            out.extend(element)
        return out


@dataset_kernel("ZipDataset")
def _zip(k: KernelConstruction) -> DatasetFn:
    types, shapes = spec_of(k)

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        return ZipDataset([dataset_of(v, k.node_name) for v in inputs], types, shapes)

    return make


class ConcatenateDataset(Dataset):
    def __init__(self, first: Dataset, second: Dataset, types: list, shapes: list) -> None:
        super().__init__(types, shapes)
        self.first, self.second = first, second

    def make_iterator(self) -> DatasetIterator:
        return _ConcatenateIterator(self)

    def cardinality(self) -> int:
        a, b = self.first.cardinality(), self.second.cardinality()
        if INFINITE in (a, b):
            return INFINITE
        return UNKNOWN if UNKNOWN in (a, b) else a + b


class _ConcatenateIterator(DatasetIterator):
    def __init__(self, ds: ConcatenateDataset) -> None:
        super().__init__()
        self.ds = ds
        self.on_second = False
        self.input: DatasetIterator | None = ds.first.make_iterator()

    def _next(self, ctx: IteratorContext) -> Element | None:
        while self.input is not None:
            element = self.input.get_next(ctx)
            if element is not None:
                return element
            if self.on_second:
                self.input = None
            else:
                self.on_second = True
                self.input = self.ds.second.make_iterator()
        return None


@dataset_kernel("ConcatenateDataset")
def _concatenate(k: KernelConstruction) -> DatasetFn:
    types, shapes = spec_of(k)

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        first, second = (dataset_of(v, k.node_name) for v in inputs)
        if [dtypes.base(t) for t in first.output_types] != [
            dtypes.base(t) for t in second.output_types
        ]:
            raise InvalidArgumentError(
                "input dataset and dataset to concatenate have different types", k.node_name
            )
        return ConcatenateDataset(first, second, types, shapes)

    return make


# -- pass-throughs -------------------------------------------------------------------------------
def _pass_through(k: KernelConstruction) -> DatasetFn:
    """Ops that change how elements are produced, never which: the input dataset itself
    (prefetching is left to the caller's pace)."""
    types = list(k.attr("output_types"))

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        ds = dataset_of(inputs[0], k.node_name)
        verify_types(types, list(ds.output_types), k.node_name)
        return ds

    return make


for _op in ("PrefetchDataset", "OptimizeDataset", "OptimizeDatasetV2", "ModelDataset",
            "MaxIntraOpParallelismDataset", "PrivateThreadPoolDataset"):  # fmt: skip
    dataset_kernel(_op)(_pass_through)


# -- Cache (memory) ------------------------------------------------------------------------------
class MemoryCache:
    """The elements of a dataset's first complete pass (TF's MemoryCache). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._elements: list[Element] | None = None

    def complete(self, elements: list[Element]) -> None:
        with self._lock:
            if self._elements is None:
                self._elements = elements

    def elements(self) -> list[Element] | None:
        with self._lock:
            return self._elements


class CacheDataset(Dataset):
    def __init__(self, input_ds: Dataset, cache: MemoryCache) -> None:
        super().__init__(input_ds.output_types, input_ds.output_shapes)
        self.input, self.cache = input_ds, cache

    def make_iterator(self) -> DatasetIterator:
        cached = self.cache.elements()
        if cached is not None:
            return _ListIterator(cached)
        return _CacheWriter(self)

    def cardinality(self) -> int:
        return self.input.cardinality()


class _ListIterator(DatasetIterator):
    def __init__(self, elements: list[Element]) -> None:
        super().__init__()
        self.elements, self.index = elements, 0

    def _next(self, ctx: IteratorContext) -> Element | None:
        if self.index >= len(self.elements):
            return None
        self.index += 1
        return list(self.elements[self.index - 1])


class _CacheWriter(DatasetIterator):
    def __init__(self, ds: CacheDataset) -> None:
        super().__init__()
        self.cache = ds.cache
        self.seen: list[Element] = []
        self.input: DatasetIterator | None = ds.input.make_iterator()

    def _next(self, ctx: IteratorContext) -> Element | None:
        if self.input is None:
            return None
        element = self.input.get_next(ctx)
        if element is None:
            self.input = None
            self.cache.complete(self.seen)
            return None
        self.seen.append(list(element))
        return element


def _cache_kernel(k: KernelConstruction) -> DatasetFn:
    with_resource = k.op == "CacheDatasetV2"
    own = MemoryCache()

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        filename = scalar_arg(inputs[1], "filename", k.node_name)
        if filename:
            raise UnimplementedError(
                f"CacheDataset to a file ({filename!r}) is not supported: only the in-memory "
                "cache (filename '') is",
                k.node_name,
            )
        cache = own
        if with_resource:
            cache = _memory_cache(ctx, inputs[2], k.node_name)
        return CacheDataset(dataset_of(inputs[0], k.node_name), cache)

    return make


dataset_kernel("CacheDataset")(_cache_kernel)
dataset_kernel("CacheDatasetV2")(_cache_kernel)


def _memory_cache(ctx: OpKernelContext, handle_value: object, node: str) -> MemoryCache:
    h = handle_of(handle_value, node)
    return ctx.step.resource_mgr.lookup_or_create(h.container, h.name, MemoryCache)


def _cache_handle(ctx: OpKernelContext, name: str) -> np.ndarray:
    return ResourceHandle(ctx.step.device, "tf_data", name, "MemoryCache").as_tensor()


@register_kernel("DummyMemoryCache")
def _dummy_memory_cache(k: KernelConstruction):  # noqa: ANN202
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        # Each use of a dummy handle gets a cache of its own (TF: the dataset's own cache).
        return [_cache_handle(ctx, f"_dummy_memory_cache_{unique_id(ctx.step.resource_mgr)}")]

    return compute


@register_kernel("AnonymousMemoryCache")
def _anonymous_memory_cache(k: KernelConstruction):  # noqa: ANN202
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        name = f"_anonymous_memory_cache_{unique_id(ctx.step.resource_mgr)}"
        handle = _cache_handle(ctx, name)
        return [handle, variant_scalar(ResourceDeleter(handle.item()))]

    return compute


@register_kernel("DeleteMemoryCache")
def _delete_memory_cache(k: KernelConstruction):  # noqa: ANN202
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        h = handle_of(inputs[0], k.node_name)
        if ctx.step.resource_mgr.find(h.container, h.name) is not None:
            ctx.step.resource_mgr.delete(h.container, h.name)
        return []

    return compute


# -- DatasetCardinality --------------------------------------------------------------------------
@register_kernel("DatasetCardinality")
def _cardinality(k: KernelConstruction):  # noqa: ANN202
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [np.int64(dataset_of(inputs[0], k.node_name).cardinality())]

    return compute
