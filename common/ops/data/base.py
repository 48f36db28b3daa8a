"""Ops (executor stage), tf.data core: the dataset value, its iterator protocol, and the
function calls datasets make (TensorFlow's DatasetBase / IteratorBase / CapturedFunction).

A dataset is a DT_VARIANT scalar holding an immutable `Dataset`: its element spec
(output_types, output_shapes) and how to make an iterator. `Dataset.make_iterator()` builds
a fresh `DatasetIterator` (and, recursively, its inputs' iterators, as TF's Initialize);
`DatasetIterator.get_next(ctx)` returns one element — a list of numpy arrays, one per
component — or None at the end of the sequence. Every iterator serializes its own
get_next calls with its lock (acquired outermost-first down the pipeline, so no cycles),
which makes iterators safe to share between threads; datasets are immutable apart from
the seed generators and caches, which guard themselves.

Functions (map, filter, flat_map ... and OneShotIterator's factory) run through the
function runtime captured when the dataset op ran, as child steps of the step that asks
for the element (`IteratorContext.step`), so a GetNext's abort stops its function calls.
A call blocks the thread asking for the element; the body runs inline on it (see
FunctionRuntime), so nothing waits on a pool thread.

A dataset never leaves its process: the variant codec registered here refuses to encode
one (TensorFlow's DatasetVariantWrapper cannot be encoded either); the placer colocates
dataset ops with their consumers so a well-formed graph never tries.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from common import dtypes
from common import tensor as tensor_util
from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops import variant_ops
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel
from common.tensor_shape import shape_string

Shape = tuple[int | None, ...] | None  # a partial shape; None: unknown rank
Element = list[np.ndarray]  # one array per component

# TensorFlow's cardinality sentinels (tf.data.INFINITE_CARDINALITY / UNKNOWN_CARDINALITY).
INFINITE = -1
UNKNOWN = -2


@dataclasses.dataclass
class IteratorContext:
    """What an iterator needs per get_next: the step asking (its function calls run as
    child steps of it)."""

    step: Any


class DatasetIterator:
    """One pass over a dataset (TF's IteratorBase). Subclasses implement `_next`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def get_next(self, ctx: IteratorContext) -> Element | None:
        """The next element, or None at the end of the sequence. Thread-safe."""
        with self._lock:
            return self._next(ctx)

    def _next(self, ctx: IteratorContext) -> Element | None:
        raise NotImplementedError


class Dataset:
    """An immutable description of a sequence of elements (TF's DatasetBase)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # The variant registry matches exact classes: every kind of dataset refuses to
        # be encoded (see the module docstring).
        super().__init_subclass__(**kwargs)
        tensor_util.register_variant_codec(DATASET_TYPE_NAME, cls, _refuse_encode,
                                           _refuse_decode)  # fmt: skip

    def __init__(self, types: Sequence[DataType], shapes: Sequence[Shape]) -> None:
        self.output_types = tuple(types)
        self.output_shapes = tuple(shapes)

    def make_iterator(self) -> DatasetIterator:
        raise NotImplementedError

    def cardinality(self) -> int:
        """The number of elements, INFINITE or UNKNOWN (TF's Cardinality)."""
        return UNKNOWN

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(dtypes.tf_name(t) for t in self.output_types)})"


class EmptyIterator(DatasetIterator):
    def _next(self, ctx: IteratorContext) -> Element | None:
        return None


# ---------------------------------------------------------------------------------------
# The variant value
# ---------------------------------------------------------------------------------------

DATASET_TYPE_NAME = "tensorflow::data::(anonymous namespace)::DatasetVariantWrapper"


def dataset_value(ds: Dataset) -> np.ndarray:
    """The DT_VARIANT scalar holding `ds`."""
    return variant_ops.variant_scalar(ds)


def dataset_of(value: Any, node_name: str) -> Dataset:
    """The Dataset a DT_VARIANT input holds (TF's GetDatasetFromVariantTensor)."""
    if isinstance(value, np.ndarray) and value.shape != ():
        raise InvalidArgumentError("Dataset tensor must be a scalar", node_name)
    return variant_ops.held(value, Dataset, "Tensor must be a Dataset object.", node_name)


def _refuse_encode(ds: Dataset) -> tensor_util.VariantTensorDataProto:
    raise InvalidArgumentError(
        f"A tf.data dataset ({ds!r}) cannot be sent to another process: place the dataset "
        "ops on the device of the iterator that consumes them"
    )


def _refuse_decode(proto: tensor_util.VariantTensorDataProto) -> Dataset:
    raise InvalidArgumentError(f"A {DATASET_TYPE_NAME} variant cannot be decoded")


tensor_util.register_variant_codec(DATASET_TYPE_NAME, Dataset, _refuse_encode, _refuse_decode)


@dataclasses.dataclass(frozen=True)
class ResourceDeleter:
    """The `deleter` variant of an anonymous resource (TF's ResourceDeleter): names the
    resource its Delete op drops."""

    handle: Any


# ---------------------------------------------------------------------------------------
# Scalar arguments and element checks
# ---------------------------------------------------------------------------------------


def scalar_arg(value: Any, name: str, node_name: str) -> Any:
    """A dataset op's scalar input (TF's ParseScalarArgument)."""
    arr = np.asarray(value)
    if arr.shape != ():
        raise InvalidArgumentError(f"{name} must be a scalar", node_name)
    return arr.item()


def spec_of(k: KernelConstruction, types_attr: str = "output_types") -> tuple[list, list]:
    """The element spec a dataset op declares: (types, shapes)."""
    return list(k.attr(types_attr)), list(k.attr("output_shapes"))


def shape_compatible(shape: Sequence[int], partial: Shape) -> bool:
    if partial is None:
        return True
    return len(shape) == len(partial) and all(p is None or p == d for d, p in zip(shape, partial))


def verify_types(expected: Sequence[DataType], got: Sequence[DataType], node: str) -> None:
    """TF's VerifyTypesMatch, its words."""
    if len(expected) != len(got):
        raise InvalidArgumentError(
            f"Number of components does not match: expected {len(expected)} types but got "
            f"{len(got)}.",
            node,
        )
    for i, (want, have) in enumerate(zip(expected, got)):
        if dtypes.base(want) != dtypes.base(have):
            raise InvalidArgumentError(
                f"Data type mismatch at component {i}: expected {dtypes.tf_name(want)} but "
                f"got {dtypes.tf_name(have)}.",
                node,
            )


def verify_shapes(expected: Sequence[Shape], got: Sequence[Shape], node: str) -> None:
    """TF's VerifyShapesCompatible on two partial shapes per component."""
    if len(expected) != len(got):
        raise InvalidArgumentError(
            f"Number of components does not match: expected {len(expected)} shapes but got "
            f"{len(got)}.",
            node,
        )
    for i, (want, have) in enumerate(zip(expected, got)):
        if not _partial_compatible(want, have):
            raise InvalidArgumentError(
                f"Incompatible shapes at component {i}: expected {shape_string(want)} but "
                f"got {shape_string(have)}.",
                node,
            )


def _partial_compatible(a: Shape, b: Shape) -> bool:
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def verify_element(
    element: Sequence[np.ndarray], types: Sequence[DataType], shapes: Sequence[Shape], node: str
) -> None:
    """An element against a declared spec: IteratorGetNext's checks."""
    if len(element) != len(types):
        verify_types(types, [DataType.DT_INVALID] * len(element), node)
    got = [_object_type(t) if v.dtype == object else dtypes.from_numpy(v.dtype)
           for v, t in zip(element, types)]  # fmt: skip
    verify_types(types, got, node)
    verify_shapes(shapes, [tuple(v.shape) for v in element], node)


def _object_type(declared: DataType) -> DataType:
    """Object arrays are strings, resources or variants alike: trust the declaration."""
    base = dtypes.base(declared)
    if base in (DataType.DT_STRING, DataType.DT_RESOURCE, DataType.DT_VARIANT):
        return base
    return DataType.DT_STRING


def as_element(values: Sequence[Any], types: Sequence[DataType]) -> Element:
    """Function outputs or input tensors as an element of arrays of the declared types."""
    return [_as_array(v, t) for v, t in zip(values, types)]


def _as_array(value: Any, dt: DataType) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype == object:
        return arr
    want = dtypes.as_numpy(dt)
    return arr if arr.dtype == want else arr.astype(want)


# ---------------------------------------------------------------------------------------
# Functions (TF's CapturedFunction)
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CapturedFunction:
    """A library function with the tensors it captured (`other_arguments`), callable on
    an element's components."""

    name: str
    attrs: dict
    captured: tuple[np.ndarray, ...]
    runtime: Any
    node_name: str

    def __call__(self, ctx: IteratorContext, args: Sequence[np.ndarray]) -> list[np.ndarray]:
        outputs = self.runtime.run(self.name, self.attrs, [*args, *self.captured], ctx.step)
        return [np.asarray(v) for v in outputs]


def function_factory(
    k: KernelConstruction, attr: str, args_attr: str = "Targuments", offset: int = 1
) -> Callable[[OpKernelContext, list], CapturedFunction]:
    """For a dataset op with func attr `attr`: make(ctx, inputs) -> the function with
    the tensors it captured, the op's inputs from `offset`, as many as the list attr
    `args_attr` has types (TF's CapturedFunction::Create over that OpInputList; after
    the input dataset by default)."""
    f = k.attr(attr)
    name, attrs = (f, {}) if isinstance(f, str) else (f.name, dict(f.attrs))
    count = len(k.attr(args_attr))
    from common.function_runtime import LazyRuntime  # it imports the kernel registry

    runtimes = LazyRuntime(k.flib)

    def make(ctx: OpKernelContext, inputs: list) -> CapturedFunction:
        values = tuple(np.asarray(v) for v in inputs[offset : offset + count])
        return CapturedFunction(name, attrs, values, runtimes.get(ctx), k.node_name)

    return make


# ---------------------------------------------------------------------------------------
# Registration helpers
# ---------------------------------------------------------------------------------------

DatasetFn = Callable[[OpKernelContext, list], Dataset]


def dataset_kernel(op: str) -> Callable[[Callable[[KernelConstruction], DatasetFn]], Any]:
    """Decorator: `factory(k) -> fn(ctx, inputs) -> Dataset` as op's kernel, whose one
    output is the dataset variant."""

    def deco(factory: Callable[[KernelConstruction], DatasetFn]) -> Any:
        def kernel_factory(k: KernelConstruction) -> Any:
            make = factory(k)

            def compute(ctx: OpKernelContext, inputs: list) -> list:
                return [dataset_value(make(ctx, inputs))]

            return compute

        kernel_factory.__module__ = factory.__module__
        kernel_factory.__qualname__ = factory.__qualname__
        register_kernel(op)(kernel_factory)
        return factory

    return deco


_unique_ids: dict[int, itertools.count] = {}
_unique_lock = threading.Lock()


def unique_id(rm: Any) -> int:
    """TensorFlow's ResourceMgr::GenerateUniqueId: a counter per resource manager."""
    with _unique_lock:
        return next(_unique_ids.setdefault(id(rm), itertools.count()))
