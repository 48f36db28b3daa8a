"""Ops (executor stage): PriorityQueueV2 — a queue whose first component is an int64
scalar priority and whose dequeues take the smallest priority first (TensorFlow's
priority_queue.cc). The Queue{Enqueue,Dequeue,Close,Size}V2 ops of common.ops.queue_ops
work on it: only the order elements leave in differs, so waits, timeouts, closing and
step aborts are the queue's. Equal priorities leave in the order they came (TensorFlow's
heap leaves their order unspecified). Thread-safe as every queue: its lock guards the heap.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable
from typing import Any

from common import dtypes
from common.dtypes import DataType
from common.errors import InvalidArgumentError, OutOfRangeError
from common.ops.queue_ops import QUEUE_TYPE_NAME, Element, Queue, _Attempt
from common.ops.registry import KernelConstruction, register_kernel, register_op
from common.ops.resource_op_kernel import resource_op_kernel
from common.tensor_shape import shape_string


class _Heap:
    """Elements ordered by their priority (component 0), then by arrival; the deque-like
    face (append, extend, popleft, len) Queue's batching code uses."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Element]] = []
        self._arrivals = itertools.count()

    def append(self, element: Element) -> None:
        heapq.heappush(self._heap, (int(element[0]), next(self._arrivals), element))

    def extend(self, elements: Iterable[Element]) -> None:
        for element in elements:
            self.append(element)

    def popleft(self) -> Element:
        return heapq.heappop(self._heap)[2]

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)


class PriorityQueue(Queue):
    kind = "PriorityQueue"

    def __init__(self, name: str, component_types: list[DataType], shapes: list,
                 capacity: int) -> None:  # fmt: skip
        super().__init__(name, component_types, shapes, capacity)
        self.elements = _Heap()  # type: ignore[assignment]  # deque-like, see _Heap

    def _try_dequeue(self, a: _Attempt) -> tuple[Any, Any] | None:
        """TF's PriorityQueue::TryDequeueMany: a batch waits until all of it is queued, so
        it leaves sorted. Once closed, an empty queue (or too few elements without
        allow_small_batch) fails with OutOfRange; with allow_small_batch the elements
        there are taken and the attempt waits for the rest, failing on the next look as
        TensorFlow does (the elements taken are lost with the error)."""
        n = 1 if a.count < 0 else a.count
        if n == 0:
            return super()._try_dequeue(a)
        remaining, size = n - len(a.items), len(self.elements)
        if self.closed and (size == 0 or (not a.allow_smaller and size < remaining)):
            return None, OutOfRangeError(
                f"{self.kind} '{self.name}' is closed and has insufficient elements "
                f"(requested {remaining}, current size {size})"
            )
        if size < remaining and (size == 0 or not (self.closed and a.allow_smaller)):
            return None
        a.items.extend(self.take(min(size, remaining)))
        if len(a.items) < n:
            return None
        items, a.items = a.items, []
        return self._output(a, items)


def _check_attrs(k: KernelConstruction) -> None:
    """PriorityQueueOp's construction checks: one fully defined shape per component (the
    priority's included)."""
    types = [DataType.DT_INT64, *k.attr("component_types")]
    shapes = [(), *k.attr("shapes")] if k.attr("shapes") else []
    for shape in shapes:
        if shape is None or any(d is None for d in shape):
            raise InvalidArgumentError(f"Shape {shape_string(shape)} is not fully defined",
                                       k.node_name)  # fmt: skip
    if shapes and len(types) != len(shapes):
        names = ", ".join(dtypes.tf_name(t) for t in types)
        listed = ", ".join(shape_string(s) for s in shapes)
        raise InvalidArgumentError(
            f"Different number of component types.  Types: {names}, Shapes: [{listed}]",
            k.node_name,
        )


register_op(
    "PriorityQueueV2",
    outputs=["handle: resource"],
    attrs=[
        "component_types: list(type) >= 0 = []",
        "shapes: list(shape) >= 0",
        "capacity: int = -1",
        "container: string = ''",
        "shared_name: string = ''",
    ],
    stateful=True,
)


@register_kernel("PriorityQueueV2")
def _priority_queue(k: KernelConstruction):
    _check_attrs(k)

    # PriorityQueueOp puts the int64 scalar priority before the declared components.
    types = [DataType.DT_INT64, *k.attr("component_types")]
    shapes = [(), *k.attr("shapes")] if k.attr("shapes") else []

    def make(name: str) -> PriorityQueue:
        return PriorityQueue(name, types, shapes, k.attr("capacity"))

    def verify(found: Queue, name: str) -> None:
        found.check_matches(make(name))

    return resource_op_kernel(k, make, kind=Queue, what="queue", type_name=QUEUE_TYPE_NAME,
                              verify=verify)  # fmt: skip
