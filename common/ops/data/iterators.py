"""Ops (executor stage), tf.data iterators: the iterator resource and OneShotIterator,
Iterator(V2), AnonymousIteratorV2/V3, DeleteIterator, MakeIterator, IteratorGetNext(Sync),
IteratorGetNextAsOptional, IteratorToStringHandle, IteratorFromStringHandle(V2)
(TensorFlow's iterator_ops.cc).

An iterator is a resource in its device's ResourceMgr (container attr, shared_name or a
unique "_<id>_<node>" name, as TF's ContainerInfo names it; one per node for every
executor of the node, as TensorFlow's per-session OpSegment shares one kernel; deleted with
the last of those kernels), and persists across steps. MakeIterator (re)starts it
over a dataset; OneShotIterator starts it once, on its first run, by calling its
`dataset_factory` function. GetNext at the end of the sequence fails with OutOfRange "End
of sequence", the error TensorFlow clients catch. The resource lock guards only which
iterator is current: a MakeIterator racing a GetNext never tears state, and concurrent
GetNexts serialize on the dataset iterator's own lock.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from common import tensor as tensor_util
from common.errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
    OutOfRangeError,
    as_op_error,
)
from common.ops.data.base import (
    Dataset,
    DatasetIterator,
    Element,
    IteratorContext,
    ResourceDeleter,
    Shape,
    dataset_of,
    unique_id,
    verify_element,
    verify_shapes,
    verify_types,
)
from common.ops.optional_ops import Optional, optional_value
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op
from common.ops.variant_ops import variant_scalar
from common.resource_mgr import DEFAULT_CONTAINER, ResourceHandle, handle_of
from protos import resource_handle_pb2

ITERATOR_TYPE_NAME = "N10tensorflow4data16IteratorResourceE"
_SPEC = ["output_types: list(type) >= 1", "output_shapes: list(shape) >= 1"]

register_op("OneShotIterator", outputs=["handle: resource"],
            attrs=["dataset_factory: func", *_SPEC, "container: string = ''",
                   "shared_name: string = ''"], stateful=True)  # fmt: skip
for _op in ("Iterator", "IteratorV2"):
    register_op(_op, outputs=["handle: resource"],
                attrs=["shared_name: string", "container: string", *_SPEC],
                stateful=True)  # fmt: skip
register_op("AnonymousIteratorV2", outputs=["handle: resource", "deleter: variant"], attrs=_SPEC,
            stateful=True)  # fmt: skip
register_op("AnonymousIteratorV3", outputs=["handle: resource"], attrs=_SPEC, stateful=True)
register_op("DeleteIterator", inputs=["handle: resource", "deleter: variant"], stateful=True)
register_op("MakeIterator", inputs=["dataset: variant", "iterator: resource"], stateful=True)
for _op in ("IteratorGetNext", "IteratorGetNextSync"):
    register_op(_op, inputs=["iterator: resource"], outputs=["components: output_types"],
                attrs=_SPEC, stateful=True)  # fmt: skip
register_op("IteratorGetNextAsOptional", inputs=["iterator: resource"],
            outputs=["optional: variant"], attrs=_SPEC, stateful=True)  # fmt: skip
register_op("IteratorToStringHandle", inputs=["resource_handle: resource"],
            outputs=["string_handle: string"], stateful=True)  # fmt: skip
for _op in ("IteratorFromStringHandle", "IteratorFromStringHandleV2"):
    register_op(_op, inputs=["string_handle: string"], outputs=["resource_handle: resource"],
                attrs=["output_types: list(type) >= 0 = []",
                       "output_shapes: list(shape) >= 0 = []"],
                stateful=True)  # fmt: skip


class IteratorResource:
    """TF's IteratorResource: the element spec and the current dataset iterator."""

    def __init__(self, types: list, shapes: list[Shape]) -> None:
        self.output_types = list(types)
        self.output_shapes = list(shapes)
        self._lock = threading.Lock()
        self._iterator: DatasetIterator | None = None
        # OneShotIterator's one initialization: None (not started), "running", or done
        # (True, or the OpError it failed with); waiters get the outcome.
        self._init: Any = None
        self._waiters: list[Callable[[OpError | None], None]] = []

    def make(self, dataset: Dataset, node: str) -> None:
        """Start over `dataset` (MakeIterator): its spec must match ours."""
        verify_types(self.output_types, list(dataset.output_types), node)
        verify_shapes(self.output_shapes, list(dataset.output_shapes), node)
        iterator = dataset.make_iterator()
        with self._lock:
            self._iterator = iterator

    def get_next(self, ctx: IteratorContext, node: str) -> Element | None:
        with self._lock:
            iterator = self._iterator
        if iterator is None:
            raise FailedPreconditionError(
                "GetNext() failed because the iterator has not been initialized. Ensure that "
                "you have run the initializer operation for this iterator before getting the "
                "next element.",
                node,
            )
        return iterator.get_next(ctx)

    def initialize_once(
        self, start: Callable[[Callable[[OpError | None], None]], None],
        waiter: Callable[[OpError | None], None],
    ) -> None:  # fmt: skip
        """Run `start(finished)` once over the resource's life; `waiter(error)` when the
        (first) initialization has finished, at once if it already has."""
        with self._lock:
            state = self._init
            if state is None or state == "running":
                self._waiters.append(waiter)
                if state is None:
                    self._init = "running"
        if state is None:
            start(self._initialized)
        elif state != "running":
            waiter(None if state is True else state)

    def _initialized(self, error: OpError | None) -> None:
        with self._lock:
            self._init = True if error is None else error
            waiters, self._waiters = self._waiters, []
        for w in waiters:
            w(error)


def lookup_iterator(ctx: OpKernelContext, value: Any, node: str) -> IteratorResource:
    h = handle_of(value, node)
    found = ctx.step.resource_mgr.find(h.container, h.name)
    if not isinstance(found, IteratorResource):
        raise NotFoundError(
            f"Resource {h.container}/{h.name}/{ITERATOR_TYPE_NAME} does not exist.", node
        )
    return found


def _handle(ctx: OpKernelContext, container: str, name: str) -> np.ndarray:
    return ResourceHandle(ctx.step.device, container, name, ITERATOR_TYPE_NAME).as_tensor()


class _PrivateName:
    """The unique name of an iterator private to one node of one scope (TF's ContainerInfo
    without a shared_name; the scope is who registered the graph: a worker session, an
    in-process session). Every kernel of the node in that scope holds it (one per
    executor: per fetch signature), so they share the iterator, as TensorFlow's
    per-session OpSegment shares one kernel. The scope holds the name too: TensorFlow's
    session keeps its stateful kernels for its life, so an iterator goes on where it was
    when the session's graph grows and its executors are rebuilt. The iterator is deleted
    when the scope closes (without a scope: when the last of those kernels is gone);
    another session over the same graph has its own."""

    def __init__(self, rm: Any, container: str, name: str) -> None:
        self.rm, self.container, self.name = rm, container, name

    def release(self) -> None:
        if self.rm.find(self.container, self.name) is not None:
            with contextlib.suppress(NotFoundError):
                self.rm.delete(self.container, self.name)

    def __del__(self) -> None:
        self.release()


# Where a device keeps, per node name, a weak reference to that node's _PrivateName.
_PRIVATE_NAMES = "__iterator_private_names"
_private_lock = threading.Lock()


def _resource_name(ctx: OpKernelContext, k: KernelConstruction, container: str) -> Any:
    """The iterator's name: shared_name, else the node's live private name (the returned
    object, which the kernel must keep) or a new one."""
    shared = k.attr("shared_name")
    if shared:
        return shared
    rm = ctx.step.resource_mgr
    key = k.node_name if k.scope is None else f"{id(k.scope):x}/{k.node_name}"
    with _private_lock:
        ref = rm.find(_PRIVATE_NAMES, key)
        private = ref() if ref is not None else None
        if private is None:
            private = _PrivateName(rm, container, f"_{unique_id(rm)}_{k.node_name}")
            with contextlib.suppress(NotFoundError):
                rm.delete(_PRIVATE_NAMES, key)
            rm.create(_PRIVATE_NAMES, key, weakref.ref(private))
            if k.scope is not None:
                k.scope.on_close(functools.partial(_release, rm, key, private))
        return private


def _release(rm: Any, key: str, private: _PrivateName) -> None:
    """The scope closed: delete the iterator and forget its name."""
    private.release()
    with _private_lock:
        ref = rm.find(_PRIVATE_NAMES, key)
        if ref is not None and ref() is private:
            rm.delete(_PRIVATE_NAMES, key)


def _name_of(owner: Any) -> str:
    return owner if isinstance(owner, str) else owner.name


def _get_or_create(ctx: OpKernelContext, k: KernelConstruction, container: str, name: str,
                   types: list, shapes: list) -> IteratorResource:  # fmt: skip
    found = ctx.step.resource_mgr.lookup_or_create(
        container, name, lambda: IteratorResource(types, shapes)
    )
    if not isinstance(found, IteratorResource):
        raise InvalidArgumentError(f"Resource {container}/{name} is not an iterator", k.node_name)
    verify_types(types, found.output_types, k.node_name)  # a shared one must agree
    verify_shapes(shapes, found.output_shapes, k.node_name)
    return found


# -- handles ----------------------------------------------------------------------------------
def _iterator_handle(k: KernelConstruction) -> Any:
    types, shapes = list(k.attr("output_types")), list(k.attr("output_shapes"))
    container = k.attr("container") or DEFAULT_CONTAINER
    lock = threading.Lock()
    cached: list[Any] = []  # [handle, the name's owner (kept while the kernel lives)]

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        with lock:  # ResourceOpKernel: the resource is made once per kernel
            if not cached:
                owner = _resource_name(ctx, k, container)
                _get_or_create(ctx, k, container, _name_of(owner), types, shapes)
                cached.extend((_handle(ctx, container, _name_of(owner)), owner))
            return [cached[0]]

    return compute


for _op in ("Iterator", "IteratorV2"):
    register_kernel(_op)(_iterator_handle)


@register_kernel("OneShotIterator", is_async=True)
def _one_shot_iterator(k: KernelConstruction) -> Any:
    types, shapes = list(k.attr("output_types")), list(k.attr("output_shapes"))
    container = k.attr("container") or DEFAULT_CONTAINER
    factory = k.attr("dataset_factory")
    fname, fattrs = (
        (factory, {}) if isinstance(factory, str) else (factory.name, dict(factory.attrs))
    )
    from common.function_runtime import LazyRuntime  # it imports the kernel registry

    runtimes = LazyRuntime(k.flib)

    owners: list[Any] = []  # the name's owner, kept while the kernel lives
    lock = threading.Lock()

    def compute(ctx: OpKernelContext, inputs: list, done: Any) -> None:
        with lock:
            if not owners:
                owners.append(_resource_name(ctx, k, container))
            name = _name_of(owners[0])
        resource = _get_or_create(ctx, k, container, name, types, shapes)
        handle = _handle(ctx, container, name)

        def start(finished: Callable[[OpError | None], None]) -> None:
            def made(outputs: Any, error: Any) -> None:
                if error is None:
                    try:
                        if len(outputs) != 1:
                            raise InvalidArgumentError(
                                f"The `dataset_factory` function must return a single scalar "
                                f"of dtype DT_VARIANT, got {len(outputs)} values",
                                k.node_name,
                            )
                        resource.make(dataset_of(outputs[0], k.node_name), k.node_name)
                    except Exception as e:  # noqa: BLE001  (fails this and later runs)
                        error = as_op_error(e)
                finished(None if error is None else as_op_error(error))

            runtimes.get(ctx).run_async(fname, fattrs, [], ctx.step, made)

        def waiter(error: OpError | None) -> None:
            done(None, error) if error is not None else done([handle], None)

        resource.initialize_once(start, waiter)

    return compute


@register_kernel("AnonymousIteratorV2")
def _anonymous_iterator_v2(k: KernelConstruction) -> Any:
    make = _anonymous(k)

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        handle = make(ctx)
        return [handle, variant_scalar(ResourceDeleter(handle.item()))]

    return compute


@register_kernel("AnonymousIteratorV3")
def _anonymous_iterator_v3(k: KernelConstruction) -> Any:
    make = _anonymous(k)

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [make(ctx)]

    return compute


def _anonymous(k: KernelConstruction) -> Callable[[OpKernelContext], np.ndarray]:
    types, shapes = list(k.attr("output_types")), list(k.attr("output_shapes"))

    def make(ctx: OpKernelContext) -> np.ndarray:
        rm = ctx.step.resource_mgr
        name = f"_AnonymousIterator_{unique_id(rm)}"
        rm.create(DEFAULT_CONTAINER, name, IteratorResource(types, shapes))
        return _handle(ctx, DEFAULT_CONTAINER, name)

    return make


@register_kernel("DeleteIterator")
def _delete_iterator(k: KernelConstruction) -> Any:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        h = handle_of(inputs[0], k.node_name)
        try:
            ctx.step.resource_mgr.delete(h.container, h.name)
        except NotFoundError as e:
            raise NotFoundError(e.message, k.node_name) from None
        return []

    return compute


# -- using an iterator ---------------------------------------------------------------------------
@register_kernel("MakeIterator")
def _make_iterator(k: KernelConstruction) -> Any:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        dataset = dataset_of(inputs[0], k.node_name)
        lookup_iterator(ctx, inputs[1], k.node_name).make(dataset, k.node_name)
        return []

    return compute


def _bare(error: OpError) -> OpError:
    """`error` without the frames it was raised through."""
    error.__traceback__ = error.__context__ = error.__cause__ = None
    return error


def _get_next_kernel(k: KernelConstruction) -> Any:
    """Async only in form: it completes before returning. Its errors reach the executor
    through `done`, never raised, so they carry no traceback: a failed step's error (kept
    by the worker for a while) must not keep the executor's frames, and with them every
    kernel of the graph and the iterators they own, alive past the session (the end of
    the sequence fails every client's last step)."""
    types, shapes = list(k.attr("output_types")), list(k.attr("output_shapes"))

    def compute(ctx: OpKernelContext, inputs: list, done: Any) -> None:
        try:
            resource = lookup_iterator(ctx, inputs[0], k.node_name)
            element = resource.get_next(IteratorContext(ctx.step), k.node_name)
            if element is not None:
                verify_element(element, types, shapes, k.node_name)
        except Exception as e:  # noqa: BLE001  (any failure fails the node)
            done(None, _bare(as_op_error(e)))
            return
        if element is None:
            done(None, OutOfRangeError("End of sequence", k.node_name))
        else:
            done(list(element), None)

    return compute


for _op in ("IteratorGetNext", "IteratorGetNextSync"):
    register_kernel(_op, is_async=True)(_get_next_kernel)


@register_kernel("IteratorGetNextAsOptional")
def _get_next_as_optional(k: KernelConstruction) -> Any:
    types, shapes = list(k.attr("output_types")), list(k.attr("output_shapes"))

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        resource = lookup_iterator(ctx, inputs[0], k.node_name)
        element = resource.get_next(IteratorContext(ctx.step), k.node_name)
        if element is None:
            return [optional_value(Optional())]
        verify_element(element, types, shapes, k.node_name)
        return [optional_value(Optional(tuple(element)))]

    return compute


@register_kernel("IteratorToStringHandle")
def _to_string_handle(k: KernelConstruction) -> Any:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        h = handle_of(inputs[0], k.node_name)
        out = np.empty((), dtype=object)
        out[()] = tensor_util.handle_to_proto(h).SerializeToString()
        return [out]

    return compute


def _from_string_handle(k: KernelConstruction) -> Any:
    types, shapes = list(k.attr("output_types")), list(k.attr("output_shapes"))

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        data = np.asarray(inputs[0]).item()
        try:
            proto = resource_handle_pb2.ResourceHandleProto.FromString(bytes(data))
        except Exception:  # noqa: BLE001  (any malformed bytes)
            raise InvalidArgumentError(
                "Could not parse string_handle as a valid ResourceHandle", k.node_name
            ) from None
        h = tensor_util.handle_from_proto(proto)
        if h.device != ctx.step.device:
            raise InvalidArgumentError(
                f'Attempted create an iterator on device "{ctx.step.device}" from handle '
                f'defined on device "{h.device}"',
                k.node_name,
            )
        resource = lookup_iterator(ctx, h.as_tensor(), k.node_name)
        if types:
            verify_types(types, resource.output_types, k.node_name)
        if shapes:
            verify_shapes(shapes, resource.output_shapes, k.node_name)
        return [h.as_tensor()]

    return compute


for _op in ("IteratorFromStringHandle", "IteratorFromStringHandleV2"):
    register_kernel(_op)(_from_string_handle)
