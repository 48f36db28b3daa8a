"""Resource containers: where a device keeps state that outlives a step (variables ...).

Each device owns one ResourceMgr. Resources live in named containers ("localhost" by
default, as in TensorFlow) under a name; a `ResourceHandle` (the value of a DT_RESOURCE
tensor) says which device, container and name. Reset clears containers; step-scoped
resources live in a per-step container dropped at the end of the step.
Thread-safe: one lock guards the tables; resources guard their own contents.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from common.errors import AlreadyExistsError, InvalidArgumentError, NotFoundError

DEFAULT_CONTAINER = "localhost"


@dataclasses.dataclass(frozen=True)
class ResourceHandle:
    """The value of a DT_RESOURCE tensor element (TensorFlow's ResourceHandle)."""

    device: str
    container: str
    name: str
    maybe_type_name: str = ""
    # (dtype, shape) pairs describing the data held, as VarHandleOp declares them.
    dtypes_and_shapes: tuple = ()

    def as_tensor(self) -> np.ndarray:
        arr = np.empty((), dtype=object)
        arr[()] = self
        return arr


def handle_of(value: Any, node_name: str | None = None) -> ResourceHandle:
    """The ResourceHandle inside a DT_RESOURCE tensor value."""
    h = value.item() if isinstance(value, np.ndarray) and value.size == 1 else value
    if not isinstance(h, ResourceHandle):
        raise InvalidArgumentError(f"Expected a resource handle, got {type(h).__name__}", node_name)
    return h


class ResourceMgr:
    def __init__(self) -> None:
        # Reentrant: a finalizer may run at any allocation made under the lock (a
        # creator's, or a dropped container's resources) and use this manager again, as
        # data.iterators._PrivateName.__del__ does; a plain Lock deadlocked the worker.
        self._lock = threading.RLock()
        self._containers: dict[str, dict[str, Any]] = {}

    def create(self, container: str, name: str, resource: Any) -> None:
        with self._lock:
            table = self._containers.setdefault(container or DEFAULT_CONTAINER, {})
            if name in table:
                raise AlreadyExistsError(f"Resource {container}/{name} already exists")
            table[name] = resource

    def lookup(self, container: str, name: str) -> Any:
        with self._lock:
            try:
                return self._containers[container or DEFAULT_CONTAINER][name]
            except KeyError:
                raise NotFoundError(
                    f"Resource {container or DEFAULT_CONTAINER}/{name} does not exist."
                ) from None

    def find(self, container: str, name: str) -> Any | None:
        with self._lock:
            return self._containers.get(container or DEFAULT_CONTAINER, {}).get(name)

    def lookup_or_create(self, container: str, name: str, creator: Callable[[], Any]) -> Any:
        with self._lock:
            table = self._containers.setdefault(container or DEFAULT_CONTAINER, {})
            if name not in table:
                table[name] = creator()
            return table[name]

    def delete(self, container: str, name: str) -> None:
        with self._lock:
            table = self._containers.get(container or DEFAULT_CONTAINER, {})
            if name not in table:
                raise NotFoundError(f"Resource {container}/{name} does not exist.")
            del table[name]

    def cleanup(self, container: str) -> None:
        """Drop a whole container (no error if absent)."""
        with self._lock:
            self._containers.pop(container, None)

    def clear(self) -> None:
        with self._lock:
            self._containers.clear()

    def containers(self) -> list[str]:
        with self._lock:
            return sorted(self._containers)


class Scope:
    """Who registered some graphs (a worker session, an in-process session): kernels of
    those graphs hang the release of their private resources on it (`on_close`), and
    `close()` runs those callbacks once, when the owner goes away. Thread-safe.

    `intra_op_threads` is the owner's ConfigProto.intra_op_parallelism_threads (0: one per
    core): the pool TensorFlow would shard a kernel over, which decides the numbers of
    kernels whose results depend on the cut (common.ops.random.shard)."""

    def __init__(self, intra_op_threads: int = 0) -> None:
        self.intra_op_threads = max(0, intra_op_threads)
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []
        self.closed = False

    def on_close(self, callback: Callable[[], None]) -> None:
        """Run `callback` at close (at once if already closed)."""
        with self._lock:
            if not self.closed:
                self._callbacks.append(callback)
                return
        callback()

    def close(self) -> None:
        with self._lock:
            callbacks, self._callbacks = self._callbacks, []
            self.closed = True
        for callback in callbacks:
            callback()
