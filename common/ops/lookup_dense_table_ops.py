"""Ops (executor stage): MutableDenseHashTableV2 — tf.lookup.experimental.DenseHashTable,
a mutable table whose empty_key and deleted_key (inputs of the op) mark free and freed
buckets and so may never be used as keys (TensorFlow's MutableDenseHashTable). The
LookupTable{Find,Insert,Remove,Size,Export,Import}V2 ops of common.ops.lookup_ops work on
it. Its buckets are TensorFlow's: a power-of-two array probed triangularly from the key's
hash (the integer itself; Hash64 of a string), doubled before an insert would pass
max_load_factor, exported whole as [buckets, 1] keys and [buckets, value elements]
values, so an export (a checkpoint) reads the same in TensorFlow. Scalar keys only.
Thread-safe: the table's lock guards its buckets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from common import memory
from common.errors import InternalError, InvalidArgumentError
from common.hashing import hash64
from common.ops import math_util as mu
from common.ops.lookup_ops import (
    LOOKUP_TYPE_NAME,
    LookupTable,
    MutableTable,
    _key,
    defaults_per_key,
)
from common.ops.registry import KernelConstruction, register_kernel, register_op
from common.ops.resource_op_kernel import resource_op_kernel

_UINT64 = (1 << 64) - 1

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


def _hash(key: Any) -> int:
    """TensorFlow's HashScalar: a string's Hash64, a number cast to uint64."""
    if isinstance(key, bytes):
        return hash64(key)
    return int(key) & _UINT64


class DenseTable(MutableTable):
    kind = "MutableDenseHashTable"

    def __init__(self, key_dtype, value_dtype, value_shape: tuple, empty_key: np.ndarray,
                 deleted_key: np.ndarray, num_buckets: int,
                 max_load_factor: float) -> None:  # fmt: skip
        super().__init__(key_dtype, value_dtype, value_shape)
        self.empty_key, self.deleted_key = _key(empty_key[()]), _key(deleted_key[()])
        self.max_load_factor = max_load_factor
        self._value_np = mu.np_type(value_dtype)
        self._allocate(num_buckets)

    def _allocate(self, num_buckets: int) -> None:
        self._keys: list[Any] = [self.empty_key] * num_buckets
        self._values = np.zeros((num_buckets, *self.value_shape), self._value_np)
        self._num_entries = 0

    def _check_key(self, key: Any) -> None:
        if key == self.empty_key:
            raise InvalidArgumentError("Using the empty_key as a table key is not allowed")
        if key == self.deleted_key:
            raise InvalidArgumentError("Using the deleted_key as a table key is not allowed")

    def _probe(self, key: Any) -> Any:
        """The buckets TensorFlow visits for `key`, in order (all of them at most)."""
        n = len(self._keys)
        bucket = _hash(key) & (n - 1)
        for probes in range(1, n + 1):
            yield bucket
            bucket = (bucket + probes) & (n - 1)
        raise InternalError("Internal error in MutableDenseHashTable lookup")

    def size(self) -> int:
        with self._lock:
            return self._num_entries

    def find(self, keys: np.ndarray, default: np.ndarray) -> np.ndarray:
        out = np.empty((keys.size, *self.value_shape), dtype=default.dtype)
        defaults = defaults_per_key(default, out.shape)
        with self._lock:
            for i, k in enumerate(keys.reshape(-1)):
                key = _key(k)
                self._check_key(key)
                out[i] = defaults[i]
                for b in self._probe(key):
                    if self._keys[b] == key:
                        out[i] = self._values[b]
                        break
                    if self._keys[b] == self.empty_key:
                        break
        return out.reshape(keys.shape + self.value_shape)

    def insert(self, keys: np.ndarray, values: np.ndarray) -> None:
        rows = self._rows(keys, values)
        with self._lock:
            n = len(self._keys)
            if self._num_entries + keys.size > n * self.max_load_factor:
                while self._num_entries + keys.size > n * self.max_load_factor:
                    n <<= 1
                self._rebucket(n)
            for k, v in zip(keys.reshape(-1), rows):
                self._insert_one(_key(k), v)

    def _insert_one(self, key: Any, value: np.ndarray) -> None:
        """TF's DoInsert: the key's bucket, or the first free or freed one on its probe."""
        self._check_key(key)
        for b in self._probe(key):
            if self._keys[b] == key:
                self._values[b] = value
                return
            if self._keys[b] in (self.empty_key, self.deleted_key):
                self._num_entries += 1
                self._keys[b] = key
                self._values[b] = value
                return

    def _rebucket(self, num_buckets: int) -> None:
        old = [(k, v) for k, v in zip(self._keys, self._values)
               if k not in (self.empty_key, self.deleted_key)]  # fmt: skip
        self._allocate(num_buckets)
        for k, v in old:
            self._insert_one(k, v)

    def remove(self, keys: np.ndarray) -> None:
        """A removed key's bucket holds deleted_key (its value stays, as TF's)."""
        with self._lock:
            for k in keys.reshape(-1):
                key = _key(k)
                self._check_key(key)
                for b in self._probe(key):
                    if self._keys[b] == key:
                        self._num_entries -= 1
                        self._keys[b] = self.deleted_key
                        break
                    if self._keys[b] == self.empty_key:
                        break

    def export(self, key_np: np.dtype, value_np: np.dtype) -> list:
        """Every bucket: keys as [buckets, 1], values as [buckets, value elements]."""
        with self._lock:
            keys = np.array(self._keys, dtype=key_np).reshape(-1, 1)
            values = self._values.astype(value_np).reshape(len(self._keys), -1)
        return [keys, values]

    def import_(self, keys: np.ndarray, values: np.ndarray) -> None:
        """TF's ImportValues: the buckets as given (an export's layout)."""
        want = keys.shape[:-1] + (int(np.prod(self.value_shape)),)
        if keys.ndim < 1 or keys.shape[-1:] != (1,) or values.shape != want:
            expected = (keys.shape[:-1] if keys.ndim else ()) + (int(np.prod(self.value_shape)),)
            raise InvalidArgumentError(
                f"Expected shape {mu.shape_str(expected)} for value, got "
                f"{mu.shape_str(values.shape)}"
            )
        n = keys.shape[0]
        with self._lock:
            self._keys = [_key(k) for k in keys.reshape(-1)]
            self._values = values.reshape((n, *self.value_shape)).astype(self._value_np)
            self._num_entries = sum(k not in (self.empty_key, self.deleted_key) for k in self._keys)


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
        # The bucket array is allocated up front (TensorFlow's layout): a client's
        # initial_num_buckets is checked against the memory budget first, the keys (one
        # slot each) and the values as ResourceExhausted naming the node.
        memory.check_allocation(k, [buckets], np.dtype(np.int64), "bucket keys")
        memory.check_allocation(k, [buckets, *shape], mu.np_type(k.attr("value_dtype")))
        return DenseTable(
            k.attr("key_dtype"), k.attr("value_dtype"), shape, empty, deleted, buckets,
            k.attr("max_load_factor"),
        )  # fmt: skip

    compute = resource_op_kernel(
        k, make, kind=LookupTable, what="lookup table", type_name=LOOKUP_TYPE_NAME,
        use_node_name=bool(k.attr("use_node_name_sharing")), with_inputs=True,
    )  # fmt: skip
    return compute
