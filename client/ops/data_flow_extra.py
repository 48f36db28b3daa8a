"""Client, graph building: the rest of TF1's data_flow_ops — tf.PriorityQueue, Barrier,
StagingArea and MapStagingArea — named, shaped and colocated as tensorflow.compat.v1's
data_flow_ops builds them."""

from __future__ import annotations

import builtins
from typing import Any

from client.framework import dtypes as _dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape, as_shape
from client.ops import control_flow_ops
from client.ops.queues import QueueBase, _as_name_list, _as_shape_list, _as_type_list, _constant_int


class PriorityQueue(QueueBase):
    """A queue whose elements carry an int64 priority first; smallest leaves first."""

    def __init__(
        self,
        capacity: int,
        types: Any,
        shapes: Any = None,
        names: Any = None,
        shared_name: str | None = None,
        name: str = "priority_queue",
    ) -> None:
        types = _as_type_list(types)
        shapes = _as_shape_list(shapes)
        attrs = {
            "component_types": types,
            "shapes": [s.as_tuple() for s in shapes] if shapes else [],
            "capacity": capacity,
            "container": "",
            "shared_name": shared_name or "",
        }
        ref = apply_op("PriorityQueueV2", [], attrs, name).outputs[0]
        priority_types = [_dtypes.int64, *types]
        priority_shapes = [TensorShape([]), *shapes] if shapes else shapes
        super().__init__(priority_types, priority_shapes, _as_name_list(names, priority_types),
                         ref)  # fmt: skip


class Barrier:
    """TF1's Barrier: tuples keyed by string, filled one component at a time."""

    def __init__(self, types: Any, shapes: Any = None, shared_name: str | None = None,
                 name: str = "barrier") -> None:  # fmt: skip
        self._types = _as_type_list(types)
        if shapes is not None:
            self._shapes = list(_as_shape_list(shapes) or [])
            for i, shape in enumerate(self._shapes):
                if shape.num_elements() == 0:
                    raise ValueError(
                        f"Empty tensors are not supported, but received shape '{shape}' at "
                        f"index {i}"
                    )
        else:
            self._shapes = [TensorShape(None) for _ in self._types]
        attrs = {
            "component_types": self._types,
            "shapes": [s.as_tuple() for s in self._shapes],
            "capacity": -1,
            "container": "",
            "shared_name": shared_name or "",
        }
        self._barrier_ref = apply_op("Barrier", [], attrs, name).outputs[0]
        self._name = self._barrier_ref.op.name.split("/")[-1]

    def _op(self, op_type: str, inputs: list, attrs: dict, name: str) -> Any:
        """As TF's op_def_library: the inputs become tensors under the op's name, then the
        op alone (not its Consts) is colocated with the barrier whose Ref edge it takes.
        `inputs` holds (value, dtype or None, argument name) triples."""
        g = _ops.get_default_graph()
        op_name = g.unique_name(name)
        with g.name_scope(op_name + "/"):
            flat = [convert_to_tensor(v, dtype, name=arg) for v, dtype, arg in inputs]
        with _ops.colocate_with(self._barrier_ref.op):
            return apply_op(op_type, [self._barrier_ref, *flat], attrs, op_name + "/")

    def insert_many(self, component_index: int, keys: Any, values: Any,
                    name: str | None = None) -> Any:  # fmt: skip
        return self._op(
            "BarrierInsertMany",
            [(keys, _dtypes.string, "keys"), (values, None, "values")],
            {"component_index": component_index},
            name or f"{self._name}_BarrierInsertMany",
        )

    def take_many(self, num_elements: Any, allow_small_batch: bool = False,
                  timeout: Any = None, name: str | None = None) -> Any:  # fmt: skip
        op = self._op(
            "BarrierTakeMany",
            [(num_elements, _dtypes.int32, "num_elements")],
            {
                "component_types": self._types,
                "allow_small_batch": allow_small_batch,
                "timeout_ms": -1 if timeout is None else timeout,
            },
            name or f"{self._name}_BarrierTakeMany",
        )
        batch = None if allow_small_batch else _constant_int(op.inputs[1])
        op.outputs[0].set_shape(TensorShape([batch]))
        op.outputs[1].set_shape(TensorShape([batch]))
        for output, shape in zip(op.outputs[2:], self._shapes):
            output.set_shape(TensorShape([batch]).concatenate(shape))
        return op.outputs[0], op.outputs[1], list(op.outputs[2:])

    def close(self, cancel_pending_enqueues: bool = False, name: str | None = None) -> Any:
        return self._op("BarrierClose", [],
                        {"cancel_pending_enqueues": cancel_pending_enqueues},
                        name or f"{self._name}_BarrierClose")  # fmt: skip

    def ready_size(self, name: str | None = None) -> Any:
        return self._op("BarrierReadySize", [], {},
                        name or f"{self._name}_BarrierReadySize").outputs[0]  # fmt: skip

    def incomplete_size(self, name: str | None = None) -> Any:
        return self._op("BarrierIncompleteSize", [], {},
                        name or f"{self._name}_BarrierIncompleteSize").outputs[0]  # fmt: skip


class BaseStagingArea:
    """What StagingArea and MapStagingArea share: name, dtypes, shapes, the no-op every
    put and get colocates with, and TF's put-side checks."""

    def __init__(self, dtypes: Any, shapes: Any = None, names: Any = None,
                 shared_name: str | None = None, capacity: int = 0,
                 memory_limit: int = 0) -> None:  # fmt: skip
        if shared_name is None:
            self._name = _ops.get_default_graph().unique_name(type(self).__name__)
        elif isinstance(shared_name, str):
            self._name = shared_name
        else:
            raise ValueError(f"shared_name must be a string, got {shared_name}")
        self._dtypes = dtypes
        if shapes is not None:
            if len(shapes) != len(dtypes):
                raise ValueError("StagingArea shapes must be the same length as dtypes")
            self._shapes = [as_shape(s) for s in shapes]
        else:
            self._shapes = [TensorShape(None) for _ in dtypes]
        if names is not None and len(names) != len(dtypes):
            raise ValueError("StagingArea names must be the same length as dtypes")
        self._names = names
        self._capacity, self._memory_limit = capacity, memory_limit
        with _ops.name_scope(f"{self._name}_root"):
            self._coloc_op = control_flow_ops.no_op()

    name = property(lambda self: self._name)
    dtypes = property(lambda self: self._dtypes)
    shapes = property(lambda self: self._shapes)
    names = property(lambda self: self._names)
    capacity = property(lambda self: self._capacity)
    memory_limit = property(lambda self: self._memory_limit)

    def _attrs(self, dtypes: Any = None) -> dict:
        return {
            "dtypes": list(self._dtypes if dtypes is None else dtypes),
            "capacity": self._capacity,
            "memory_limit": self._memory_limit,
            "container": "",
            "shared_name": self._name,
        }

    def _check_put_dtypes(self, vals: Any, indices: Any = None) -> tuple[list, list]:
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Staging areas must have names to enqueue a dictionary")
            if not set(vals.keys()).issubset(self._names):
                raise ValueError(
                    "Keys in dictionary to put do not match names of staging area. "
                    f"Dictionary: {sorted(vals.keys())}Queue: {sorted(self._names)}"
                )
            picked = [(vals[k], i) for i, k in enumerate(self._names) if k in vals]
            vals, indices = [v for v, _ in picked], [i for _, i in picked]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a staging area with names")
            if indices is None:
                raise ValueError("Indices must be supplied when inserting a list of tensors")
            if len(indices) != len(vals):
                raise ValueError(
                    f"Number of indices {len(indices)} doesn't match number of values {len(vals)}"
                )
            if not isinstance(vals, (builtins.list, builtins.tuple)):
                vals, indices = [vals], [0]
        if not len(vals) <= len(self._dtypes):
            raise ValueError(f"Unexpected number of inputs {len(vals)} vs {len(self._dtypes)}")
        tensors = []
        for val, i in zip(vals, indices):
            dtype, shape = _dtypes.as_dtype(self._dtypes[i]), self._shapes[i]
            if val.dtype != dtype:
                raise ValueError(
                    f"Datatypes do not match. Received val.dtype {val.dtype} and dtype {dtype}"
                )
            val.shape.assert_is_compatible_with(shape)
            tensors.append(convert_to_tensor(val, dtype, name=f"component_{i}"))
        return tensors, list(indices)

    def _create_device_transfers(self, tensors: list) -> list:
        """As TF: a get placed on another device than the area reads through Identity."""
        if control_flow_ops.no_op().device != self._coloc_op.device:
            from client.ops import array_ops

            tensors = [array_ops.identity(t) for t in tensors]
        return tensors

    def _get_return_value(self, tensors: list, indices: list) -> Any:
        tensors = self._create_device_transfers(list(tensors))
        for output, i in zip(tensors, indices):
            output.set_shape(self._shapes[i])
        if self._names:
            return {self._names[i]: t for t, i in zip(tensors, indices)}
        return tensors

    @staticmethod
    def _scope_vals(vals: Any) -> list:
        if isinstance(vals, (builtins.list, builtins.tuple)):
            return list(vals)
        if isinstance(vals, dict):
            return list(vals.values())
        return [vals]


class StagingArea(BaseStagingArea):
    """A FIFO staging area (Stage / Unstage)."""

    def put(self, values: Any, name: str | None = None) -> Any:
        with _ops.name_scope(name, f"{self._name}_put", self._scope_vals(values)) as scope:
            if not isinstance(values, (builtins.list, builtins.tuple, dict)):
                values = [values]
            vals, _ = self._check_put_dtypes(values, list(range(len(values))))
            with _ops.colocate_with(self._coloc_op):
                return apply_op("Stage", [vals], self._attrs(), scope)

    def _get(self, op_type: str, inputs: list, name: str) -> Any:
        with _ops.colocate_with(self._coloc_op):
            op = apply_op(op_type, inputs, self._attrs(), name)
        return self._get_return_value(op.outputs, list(range(len(self._dtypes))))

    def get(self, name: str | None = None) -> Any:
        return self._get("Unstage", [], name or f"{self._name}_get")

    def peek(self, index: Any, name: str | None = None) -> Any:
        return self._get("StagePeek", [index], name or f"{self._name}_peek")

    def size(self, name: str | None = None) -> Any:
        return apply_op("StageSize", [], self._attrs(), name or f"{self._name}_size").outputs[0]

    def clear(self, name: str | None = None) -> Any:
        return apply_op("StageClear", [], self._attrs(), name or f"{self._name}_clear")


class MapStagingArea(BaseStagingArea):
    """A staging area keyed by int64 (MapStage family; OrderedMap* when `ordered`)."""

    def __init__(self, dtypes: Any, shapes: Any = None, names: Any = None,
                 shared_name: str | None = None, ordered: bool = False, capacity: int = 0,
                 memory_limit: int = 0) -> None:  # fmt: skip
        super().__init__(dtypes, shapes, names, shared_name, capacity, memory_limit)
        self._ordered = ordered
        self._prefix = "OrderedMap" if ordered else "Map"

    def put(self, key: Any, vals: Any, indices: Any = None, name: str | None = None) -> Any:
        with _ops.name_scope(name, f"{self._name}_put", self._scope_vals(vals)) as scope:
            vals, indices = self._check_put_dtypes(vals, indices)
            with _ops.colocate_with(self._coloc_op):
                return apply_op(
                    f"{self._prefix}Stage",
                    [key, indices, vals],
                    self._attrs(),
                    scope,
                )  # fmt: skip

    def _get_indices_and_dtypes(self, indices: Any = None) -> tuple[list, list]:
        if indices is None:
            indices = list(range(len(self._dtypes)))
        if not isinstance(indices, (builtins.tuple, builtins.list)):
            raise TypeError(f"Invalid indices type {type(indices)}")
        if len(indices) == 0:
            raise ValueError("Empty indices")
        if all(isinstance(i, str) for i in indices):
            if self._names is None:
                raise ValueError(
                    f"String indices provided {indices}, but this Staging Area was not "
                    "created with names."
                )
            try:
                indices = [self._names.index(n) for n in indices]
            except ValueError:
                raise ValueError(f"Named index not in Staging Area names {self._names}") from None
        elif not all(isinstance(i, int) for i in indices):
            raise TypeError(f"Mixed types in indices {indices}. May only be str or int")
        return list(indices), [self._dtypes[i] for i in indices]

    def _take(self, op: str, key: Any, indices: Any, name: str) -> tuple[Any, list]:
        indices, dtypes = self._get_indices_and_dtypes(indices)
        inputs = [indices] if key is None else [key, indices]
        with _ops.colocate_with(self._coloc_op):
            out = apply_op(f"{self._prefix}{op}", inputs, self._attrs(dtypes), name).outputs
        return (out[0], out[1:]) if key is None else (None, out), indices

    def peek(self, key: Any, indices: Any = None, name: str | None = None) -> Any:
        (_, values), idx = self._take("Peek", key, indices, name or f"{self._name}_pop")
        return self._get_return_value(values, idx)

    def get(self, key: Any = None, indices: Any = None, name: str | None = None) -> Any:
        if key is None:
            (k, values), idx = self._take("UnstageNoKey", None, indices,
                                          name or f"{self._name}_get_nokey")  # fmt: skip
            k = self._create_device_transfers([k])[0]
            return k, self._get_return_value(values, idx)
        (_, values), idx = self._take("Unstage", key, indices, name or f"{self._name}_get")
        return key, self._get_return_value(values, idx)

    def _scalar(self, op: str, default: str, name: str | None) -> Any:
        return apply_op(f"{self._prefix}{op}", [], self._attrs(),
                        name or f"{self._name}_{default}")  # fmt: skip

    def size(self, name: str | None = None) -> Any:
        return self._scalar("Size", "size", name).outputs[0]

    def incomplete_size(self, name: str | None = None) -> Any:
        return self._scalar("IncompleteSize", "incomplete_size", name).outputs[0]

    def clear(self, name: str | None = None) -> Any:
        return self._scalar("Clear", "clear", name)
