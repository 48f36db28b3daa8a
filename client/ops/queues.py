"""Client, graph building: TF1's queues (tf.FIFOQueue, tf.PaddingFIFOQueue,
tf.RandomShuffleQueue): a queue resource op and the enqueue / dequeue / close / size
ops on it, named and shaped as tensorflow.compat.v1's data_flow_ops builds them."""

from __future__ import annotations

import builtins
import hashlib
from typing import Any

from client.framework import dtypes as _dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.shape_fns import constant_value
from client.framework.tensor_shape import TensorShape, as_shape
from client.ops import random_ops


def _as_type_list(dtypes: Any) -> list[Any]:
    if not isinstance(dtypes, (builtins.list, builtins.tuple)):
        return [_dtypes.as_dtype(dtypes)]
    return [_dtypes.as_dtype(t) for t in dtypes]


def _as_shape_list(shapes: Any, unknown_dim_allowed: bool = False) -> list[TensorShape] | None:
    if shapes is None:
        return None
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (builtins.list, builtins.tuple)):
        raise TypeError("Shapes must be a TensorShape or a list or tuple of TensorShapes.")
    if all(s is None or isinstance(s, int) for s in shapes):
        shapes = [shapes]  # a single shape
    out = [as_shape(s) for s in shapes]
    if not unknown_dim_allowed and any(not s.is_fully_defined() for s in out):
        raise ValueError(f"All shapes must be fully defined: {out}")
    return out


def _as_name_list(names: Any, dtypes: list[Any]) -> list[str] | None:
    if names is None:
        return None
    if not isinstance(names, (builtins.list, builtins.tuple)):
        names = [names]
    if len(names) != len(dtypes):
        raise ValueError("List of names must have the same length as the list of dtypes")
    return list(names)


class QueueBase:
    """Base class for queue implementations (TF's data_flow_ops.QueueBase)."""

    def __init__(self, dtypes: list[Any], shapes: Any, names: Any, queue_ref: Any) -> None:
        self._dtypes = dtypes
        self._shapes = shapes if shapes is not None else [TensorShape(None) for _ in dtypes]
        if len(self._shapes) != len(dtypes):
            raise ValueError("Queue shapes must have the same length as dtypes")
        self._names = names
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    queue_ref = property(lambda self: self._queue_ref)
    name = property(lambda self: self._queue_ref.op.name)
    dtypes = property(lambda self: self._dtypes)
    shapes = property(lambda self: self._shapes)
    names = property(lambda self: self._names)

    def _check_enqueue_dtypes(self, vals: Any) -> list[Any]:
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names, key=str) != sorted(vals.keys(), key=str):
                raise ValueError(
                    f"Keys in dictionary to enqueue do not match names of Queue.  "
                    f"Dictionary: {sorted(vals.keys())}, Queue: {sorted(self._names)}"
                )
            vals = [vals[k] for k in self._names]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a Queue with names")
            if not isinstance(vals, (builtins.list, builtins.tuple)):
                vals = [vals]
        return [
            convert_to_tensor(v, dtype=dt, name=f"component_{i}")
            for i, (v, dt) in enumerate(zip(vals, self._dtypes))
        ]

    def _scope_vals(self, vals: Any) -> list[Any]:
        if isinstance(vals, (builtins.list, builtins.tuple)):
            return list(vals)
        if isinstance(vals, dict):
            return list(vals.values())
        return [vals]

    def enqueue(self, vals: Any, name: str | None = None) -> Any:
        with _ops.name_scope(name, f"{self._name}_enqueue", self._scope_vals(vals)) as scope:
            vals = self._check_enqueue_dtypes(vals)
            for val, shape in zip(vals, self._shapes):
                val.shape.assert_is_compatible_with(shape)
            return apply_op("QueueEnqueueV2", [self._queue_ref, vals], {}, scope)

    def enqueue_many(self, vals: Any, name: str | None = None) -> Any:
        with _ops.name_scope(name, f"{self._name}_EnqueueMany", self._scope_vals(vals)) as scope:
            vals = self._check_enqueue_dtypes(vals)
            for val, shape in zip(vals, self._shapes):
                val.shape.with_rank_at_least(1)[1:].assert_is_compatible_with(shape)
            return apply_op("QueueEnqueueManyV2", [self._queue_ref, vals], {}, scope)

    def _dequeue_return_value(self, tensors: list[Any]) -> Any:
        if self._names:
            return {n: tensors[i] for i, n in enumerate(self._names)}
        if len(tensors) == 1:
            return tensors[0]
        return tensors

    def _dequeue(self, op_type: str, default: str, n: Any, name: Any) -> Any:
        """A dequeue op; its outputs take the queue's shapes, with a batch dimension of
        the constant `n` for DequeueMany (unknown for DequeueUpTo)."""
        op = apply_op(
            op_type,
            [self._queue_ref, *([] if n is None else [n])],
            {"component_types": self._dtypes},
            name or f"{self._name}_{default}",
        )
        batch = _constant_int(op.inputs[1]) if op_type == "QueueDequeueManyV2" else None
        for output, shape in zip(op.outputs, self._shapes):
            output.set_shape(shape if n is None else TensorShape([batch]).concatenate(shape))
        return self._dequeue_return_value(op.outputs)

    def dequeue(self, name: str | None = None) -> Any:
        return self._dequeue("QueueDequeueV2", "Dequeue", None, name)

    def dequeue_many(self, n: Any, name: str | None = None) -> Any:
        return self._dequeue("QueueDequeueManyV2", "DequeueMany", n, name)

    def dequeue_up_to(self, n: Any, name: str | None = None) -> Any:
        return self._dequeue("QueueDequeueUpToV2", "DequeueUpTo", n, name)

    def close(self, cancel_pending_enqueues: bool = False, name: str | None = None) -> Any:
        return apply_op(
            "QueueCloseV2",
            [self._queue_ref],
            {"cancel_pending_enqueues": cancel_pending_enqueues},
            name or f"{self._name}_Close",
        )

    def is_closed(self, name: str | None = None) -> Any:
        return self._scalar("QueueIsClosedV2", name or f"{self._name}_Is_Closed")

    def size(self, name: str | None = None) -> Any:
        return self._scalar("QueueSizeV2", name or f"{self._name}_Size")

    def _scalar(self, op_type: str, name: str) -> Any:
        out = apply_op(op_type, [self._queue_ref], {}, name).outputs[0]
        out.set_shape(TensorShape([]))
        return out


def _constant_int(t: Any) -> int | None:
    """The value of a scalar Const tensor, else None (unknown until run time)."""
    value = constant_value(t)
    return None if value is None else int(value)


def _queue_op(op_type: str, dtypes: list[Any], shapes: Any, attrs: dict, name: str) -> Any:
    with _ops.control_dependencies(None):
        return apply_op(
            op_type,
            [],
            {
                "component_types": dtypes,
                "shapes": [s.as_tuple() for s in shapes] if shapes is not None else [],
                **attrs,
            },
            name,
        ).outputs[0]


class FIFOQueue(QueueBase):
    def __init__(
        self,
        capacity: int,
        dtypes: Any,
        shapes: Any = None,
        names: Any = None,
        shared_name: str | None = None,
        name: str = "fifo_queue",
    ) -> None:
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes)
        names = _as_name_list(names, dtypes)
        attrs = {"capacity": capacity, "container": "", "shared_name": shared_name or ""}
        ref = _queue_op("FIFOQueueV2", dtypes, shapes, attrs, name)
        super().__init__(dtypes, shapes, names, ref)


class PaddingFIFOQueue(QueueBase):
    def __init__(
        self,
        capacity: int,
        dtypes: Any,
        shapes: Any,
        names: Any = None,
        shared_name: str | None = None,
        name: str = "padding_fifo_queue",
    ) -> None:
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, unknown_dim_allowed=True)
        names = _as_name_list(names, dtypes)
        if shapes is None or len(dtypes) != len(shapes):
            raise ValueError(
                "Shapes must be provided for all components, "
                f"but received {len(dtypes)} dtypes and {len(shapes or [])} shapes."
            )
        attrs = {"capacity": capacity, "container": "", "shared_name": shared_name or ""}
        ref = _queue_op("PaddingFIFOQueueV2", dtypes, shapes, attrs, name)
        super().__init__(dtypes, shapes, names, ref)


class RandomShuffleQueue(QueueBase):
    def __init__(
        self,
        capacity: int,
        min_after_dequeue: int,
        dtypes: Any,
        shapes: Any = None,
        names: Any = None,
        seed: int | None = None,
        shared_name: str | None = None,
        name: str = "random_shuffle_queue",
    ) -> None:
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes)
        names = _as_name_list(names, dtypes)
        seed1, seed2 = random_ops.get_seed(seed)
        graph_seed = _ops.get_default_graph().seed
        if seed is None and graph_seed is not None and shared_name is not None:
            # As TF: with a graph seed but no op seed, a shared queue's seed2 depends only
            # on the graph seed and the shared name.
            digest = hashlib.md5((str(seed1) + shared_name).encode("utf-8")).hexdigest()
            seed2 = int(digest[:8], 16) & 0x7FFFFFFF
        attrs = {
            "capacity": capacity,
            "min_after_dequeue": min_after_dequeue,
            "seed": seed1,
            "seed2": seed2,
            "container": "",
            "shared_name": shared_name or "",
        }
        ref = _queue_op("RandomShuffleQueueV2", dtypes, shapes, attrs, name)
        super().__init__(dtypes, shapes, names, ref)
