"""Client, graph building: TF1's top-level variable updates (tf.assign, assign_add,
assign_sub, scatter_update/add/sub/mul/div/min/max, scatter_nd_update/add/sub) on resource
variables, as tensorflow.compat.v1's state_ops builds them for a ResourceVariable."""

from __future__ import annotations

from typing import Any

from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor


def assign(
    ref: Any,
    value: Any,
    validate_shape: Any = None,
    use_locking: Any = None,
    name: str | None = None,
) -> Any:
    return ref.assign(value, name=name)


def assign_add(ref: Any, value: Any, use_locking: Any = None, name: str | None = None) -> Any:
    return ref.assign_add(value, name=name)


def assign_sub(ref: Any, value: Any, use_locking: Any = None, name: str | None = None) -> Any:
    return ref.assign_sub(value, name=name)


def _scatter(op_type: str):
    def fn(
        ref: Any, indices: Any, updates: Any, use_locking: Any = True, name: str | None = None
    ) -> Any:
        updates = convert_to_tensor(updates, dtype=ref.dtype)
        op = apply_op(op_type, [ref.handle, indices, updates], {}, name)
        # TF returns ref._lazy_read(op): the variable's value read after the update.
        with _ops.control_dependencies([op]):
            return ref._lazy_read()

    fn.__name__ = op_type
    return fn


scatter_update = _scatter("ResourceScatterUpdate")
scatter_add = _scatter("ResourceScatterAdd")
scatter_sub = _scatter("ResourceScatterSub")
scatter_mul = _scatter("ResourceScatterMul")
scatter_div = _scatter("ResourceScatterDiv")
scatter_min = _scatter("ResourceScatterMin")
scatter_max = _scatter("ResourceScatterMax")
scatter_nd_update = _scatter("ResourceScatterNdUpdate")
scatter_nd_add = _scatter("ResourceScatterNdAdd")
scatter_nd_sub = _scatter("ResourceScatterNdSub")
