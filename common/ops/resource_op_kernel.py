"""Ops (kernel construction): how a kernel finds or makes the resource it owns —
TensorFlow's ContainerInfo, ResourceMgr::LookupOrCreate and ResourceOpKernel, written once
for queues, accumulators, readers, barriers, staging areas and lookup tables.

A resource lives in its device's ResourceMgr under (container, name). The container is
the `container` attr or "localhost". The name is the `shared_name` attr; without one it is
the node's name where the op shares by node name (staging areas, use_node_name_sharing
tables), else a private "_<id>_<node>" name given once per node and scope (who registered
the graph) and released, with the resource, when the scope closes. A resource found
rather than made is checked (`verify`) against the attrs of the node asking for it, as
ResourceOpKernel::VerifyResource does. Thread-safe: ResourceMgr serializes look-ups and
each resource kernel makes its resource once under its own lock.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from common.errors import InvalidArgumentError, NotFoundError
from common.ops.registry import KernelConstruction, OpKernelContext
from common.resource_mgr import DEFAULT_CONTAINER, ResourceHandle, ResourceMgr

R = TypeVar("R")

_unique_ids: dict[int, itertools.count] = {}
_unique_lock = threading.Lock()


def _unique_id(rm: Any) -> int:
    """TensorFlow's ResourceMgr::GenerateUniqueId: a counter per resource manager."""
    with _unique_lock:
        return next(_unique_ids.setdefault(id(rm), itertools.count()))


# Where a device remembers the private name it gave each resource node of each scope (a
# worker session, an in-process session), so every executor of that node in that scope
# (one per cached feed/fetch signature) shares the resource, as TensorFlow's per-session
# OpSegment shares one kernel instance. Another session over the same graph has its own
# resource, and a session's private resources are deleted when it closes.
_PRIVATE_NAMES = "__queue_private_names"


def private_name(rm: Any, k: KernelConstruction, container: str) -> str:
    """The name of the resource private to node `k` in its scope (made on first use)."""
    key = k.node_name if k.scope is None else f"{id(k.scope):x}/{k.node_name}"
    made: list[str] = []

    def new_name() -> str:
        made.append(f"_{_unique_id(rm)}_{k.node_name}")
        return made[0]

    name = rm.lookup_or_create(_PRIVATE_NAMES, key, new_name)
    if made and made[0] == name and k.scope is not None:
        k.scope.on_close(functools.partial(_release, rm, key, container, name))
    return name


def _release(rm: Any, key: str, container: str, name: str) -> None:
    """The scope closed: delete its resource and forget the resource's name."""
    for resource_container, resource_name in ((container, name), (_PRIVATE_NAMES, key)):
        with contextlib.suppress(NotFoundError):
            rm.delete(resource_container, resource_name)


def container_info(k: KernelConstruction, rm: Any, use_node_name: bool = False) -> tuple[str, str]:
    """TensorFlow's ContainerInfo::Init: (container, name) of node `k`'s resource."""
    container = k.attr("container") or DEFAULT_CONTAINER
    name = k.attr("shared_name")
    if not name:
        name = k.node_name if use_node_name else private_name(rm, k, container)
    return container, name


def lookup_or_create(
    rm: ResourceMgr,
    container: str,
    name: str,
    make: Callable[[], R],
    kind: type,
    what: str,
    node_name: str,
    verify: Callable[[Any], None] | None = None,
) -> Any:
    """The `kind` resource at (container, name), made by `make` if absent. One found there
    must be a `kind` (else InvalidArgument naming `what`) and pass `verify`."""
    made: list[Any] = []

    def creator() -> Any:
        made.append(make())
        return made[0]

    resource = rm.lookup_or_create(container, name, creator)
    if not isinstance(resource, kind):
        raise InvalidArgumentError(f"Resource {container}/{name} is not a {what}", node_name)
    if verify is not None and not made:
        try:
            verify(resource)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(e.message, node_name) from None
    return resource


def resource_op_kernel(
    k: KernelConstruction,
    make: Callable[..., Any],
    *,
    kind: type,
    what: str,
    type_name: str,
    verify: Callable[..., None] | None = None,
    use_node_name: bool = False,
    ref: bool = False,
    with_inputs: bool = False,
) -> Callable[[OpKernelContext, list], list]:
    """The compute function of a kernel that outputs its resource (ResourceOpKernel): made
    once per kernel; its output is a DT_RESOURCE handle, or the object itself on a
    Ref(string) edge (`ref`), as a TF1 handle-by-ref op passes it.

    make(name) builds the resource (make(name, inputs) `with_inputs`, for ops whose inputs
    configure it); verify(found, name=name) checks one found in place."""
    cached: list[Any] = []
    lock = threading.Lock()

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        with lock:
            if not cached:
                rm = ctx.step.resource_mgr
                container, name = container_info(k, rm, use_node_name)
                check = None if verify is None else functools.partial(verify, name=name)
                args = (name, inputs) if with_inputs else (name,)
                resource = lookup_or_create(
                    rm, container, name, lambda: make(*args), kind, what, k.node_name, check
                )
                if ref:
                    cached.append(resource)
                else:
                    handle = ResourceHandle(ctx.step.device, container, name, type_name)
                    cached.append(handle.as_tensor())
            return [cached[0]]

    return compute
