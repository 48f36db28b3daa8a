"""Ops (executor stage): MutableDenseHashTableV2 — tf.lookup.experimental.DenseHashTable,
a mutable table whose empty_key and deleted_key (inputs of the op) mark free and freed
buckets and so may never be used as keys (TensorFlow's MutableDenseHashTable). The
LookupTable{Find,Insert,Remove,Size,Export,Import}V2 ops of common.ops.lookup_ops work on
it. Entries are kept as a MutableHashTable keeps them: an export lists the entries, where
TensorFlow's lists every bucket (empty ones under empty_key); an import skips buckets
holding empty_key or deleted_key, so TensorFlow's exports import. Scalar keys only.
Thread-safe: the table's lock guards its entries.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops.lookup_ops import LOOKUP_TYPE_NAME, LookupTable, MutableTable, _key
from common.ops.registry import KernelConstruction, register_kernel, register_op
from common.ops.resource_op_kernel import resource_op_kernel

register_op(
    "MutableDenseHashTableV2",
    inputs=["empty_key: key_dtype", "deleted_key: key_dtype"],
    outputs=["table_handle: resource"],
    attrs=[
        "container: string = ''",
        "shared_name: string = ''",
        "use_node_name_sharing: bool = false",
        "key_dtype: type",
        "value_dtype: type",
        "value_shape: shape = []",
        "initial_num_buckets: int = 131072",
        "max_load_factor: float = 0.8",
    ],
    stateful=True,
)


class DenseTable(MutableTable):
    kind = "MutableDenseHashTable"

    def __init__(self, key_dtype, value_dtype, value_shape: tuple, empty_key: np.ndarray,
                 deleted_key: np.ndarray) -> None:  # fmt: skip
        super().__init__(key_dtype, value_dtype, value_shape)
        self.empty_key, self.deleted_key = _key(empty_key[()]), _key(deleted_key[()])

    def _check_keys(self, keys: np.ndarray) -> None:
        for k in keys.reshape(-1):
            key = _key(k)
            if key == self.empty_key:
                raise InvalidArgumentError("Using the empty_key as a table key is not allowed")
            if key == self.deleted_key:
                raise InvalidArgumentError("Using the deleted_key as a table key is not allowed")

    def find(self, keys: np.ndarray, default: np.ndarray) -> np.ndarray:
        self._check_keys(keys)
        return super().find(keys, default)

    def insert(self, keys: np.ndarray, values: np.ndarray) -> None:
        self._check_keys(keys)
        super().insert(keys, values)

    def remove(self, keys: np.ndarray) -> None:
        self._check_keys(keys)
        super().remove(keys)

    def import_(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Buckets holding empty_key or deleted_key (TensorFlow's exports) are free."""
        rows = self._rows(keys, values)
        flat = keys.reshape(-1)
        used = [_key(k) not in (self.empty_key, self.deleted_key) for k in flat]
        kept = np.array(used, dtype=bool)
        super().import_(flat[kept], rows[kept].reshape((int(kept.sum()), *self.value_shape)))


@register_kernel("MutableDenseHashTableV2")
def _dense_table(k: KernelConstruction) -> Callable:
    buckets = k.attr("initial_num_buckets")
    if buckets < 4 or buckets & (buckets - 1):
        raise InvalidArgumentError(
            f"Number of buckets must be at least 4 and a power of 2, got: {buckets}", k.node_name
        )
    shape = tuple(k.attr("value_shape") or ())

    def make(name: str, inputs: list) -> LookupTable:
        empty, deleted = np.asarray(inputs[0]), np.asarray(inputs[1])
        if empty.shape != deleted.shape:
            raise InvalidArgumentError(
                "Empty and deleted keys must have same shape, got shapes: "
                f"{list(empty.shape)} and {list(deleted.shape)}"
            )
        if empty.ndim != 0:
            raise InvalidArgumentError("Only scalar keys are supported here", k.node_name)
        if _key(empty[()]) == _key(deleted[()]):
            raise InvalidArgumentError("Empty and deleted keys cannot be equal")
        return DenseTable(k.attr("key_dtype"), k.attr("value_dtype"), shape, empty, deleted)

    compute = resource_op_kernel(
        k, make, kind=LookupTable, what="lookup table", type_name=LOOKUP_TYPE_NAME,
        use_node_name=bool(k.attr("use_node_name_sharing")), with_inputs=True,
    )  # fmt: skip
    return compute
