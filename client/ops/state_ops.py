"""Client, graph building: TF1's top-level variable updates (tf.assign, assign_add,
assign_sub, scatter_update/add/sub/mul/div/min/max, scatter_nd_update/add/sub,
count_up_to) as tensorflow.compat.v1's state_ops builds them: on a reference (a
RefVariable or a ref tensor) the ref ops (Assign, ScatterUpdate ...) returning the updated
ref; on a resource variable its Resource* ops and a read after them."""

from __future__ import annotations

from typing import Any

from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.ops.ref_variable import is_ref


def assign(
    ref: Any,
    value: Any,
    validate_shape: Any = None,
    use_locking: Any = None,
    name: str | None = None,
) -> Any:
    if is_ref(ref):
        attrs = {"validate_shape": validate_shape, "use_locking": use_locking}
        return apply_op("Assign", [ref, value], attrs, name).outputs[0]
    return ref.assign(value, name=name)


def assign_add(ref: Any, value: Any, use_locking: Any = None, name: str | None = None) -> Any:
    if is_ref(ref):
        return apply_op("AssignAdd", [ref, value], {"use_locking": use_locking}, name).outputs[0]
    return ref.assign_add(value, name=name)


def assign_sub(ref: Any, value: Any, use_locking: Any = None, name: str | None = None) -> Any:
    if is_ref(ref):
        return apply_op("AssignSub", [ref, value], {"use_locking": use_locking}, name).outputs[0]
    return ref.assign_sub(value, name=name)


def count_up_to(ref: Any, limit: int, name: str | None = None) -> Any:
    if is_ref(ref):
        return apply_op("CountUpTo", [ref], {"limit": limit}, name).outputs[0]
    return apply_op(
        "ResourceCountUpTo", [ref.handle], {"limit": limit, "T": ref.dtype}, name
    ).outputs[0]


def _scatter(op_type: str, locking_default: bool):
    """TF's state_ops.<op>: `use_locking` defaults as TF's (True for the updates, False
    for the arithmetic ones); resource variables take no lock attr."""

    def fn(
        ref: Any,
        indices: Any,
        updates: Any,
        use_locking: Any = locking_default,
        name: str | None = None,
    ) -> Any:
        if is_ref(ref):
            attrs = {"use_locking": use_locking}
            return apply_op(op_type, [ref, indices, updates], attrs, name).outputs[0]
        updates = convert_to_tensor(updates, dtype=ref.dtype)
        op = apply_op("Resource" + op_type, [ref.handle, indices, updates], {}, name)
        # TF returns ref._lazy_read(op): the variable's value read after the update.
        with _ops.control_dependencies([op]):
            return ref._lazy_read()

    fn.__name__ = op_type
    return fn


scatter_update = _scatter("ScatterUpdate", True)
scatter_add = _scatter("ScatterAdd", False)
scatter_sub = _scatter("ScatterSub", False)
scatter_mul = _scatter("ScatterMul", False)
scatter_div = _scatter("ScatterDiv", False)
scatter_min = _scatter("ScatterMin", False)
scatter_max = _scatter("ScatterMax", False)
scatter_nd_update = _scatter("ScatterNdUpdate", True)
scatter_nd_add = _scatter("ScatterNdAdd", False)
scatter_nd_sub = _scatter("ScatterNdSub", False)
