"""Ops (executor stage): lookup tables (tf.lookup.*), resources in the device's ResourceMgr.

HashTableV2 is initialized once (InitializeTableV2) and then read-only; MutableHashTableV2
and MutableHashTableOfTensorsV2 take inserts, removes and imports. A table lives under
(container, shared_name) as TensorFlow's LookupTableOp places it: an empty shared_name
names the table after the node (use_node_name_sharing) or privately to the kernel, and
the table lives until the container is reset or the kernel's session closes.
LookupTableFindV2/SizeV2/InsertV2/RemoveV2/ExportV2/ImportV2 work on any table.
Thread-safe: each table guards its entries with its own lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from common import dtypes
from common.dtypes import DataType
from common.errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    UnimplementedError,
)
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op
from common.ops.resource_op_kernel import resource_op_kernel
from common.resource_mgr import handle_of

LOOKUP_TYPE_NAME = "N10tensorflow6lookup15LookupInterfaceE"

_TABLE_ATTRS = [
    "container: string = ''",
    "shared_name: string = ''",
    "use_node_name_sharing: bool = false",
    "key_dtype: type",
    "value_dtype: type",
]
register_op("HashTableV2", outputs=["table_handle: resource"], attrs=_TABLE_ATTRS, stateful=True)
register_op(
    "MutableHashTableV2", outputs=["table_handle: resource"], attrs=_TABLE_ATTRS, stateful=True
)
register_op(
    "MutableHashTableOfTensorsV2",
    outputs=["table_handle: resource"],
    attrs=[*_TABLE_ATTRS, "value_shape: shape = []"],
    stateful=True,
)
register_op(
    "InitializeTableV2",
    inputs=["table_handle: resource", "keys: Tkey", "values: Tval"],
    attrs=["Tkey: type", "Tval: type"],
    stateful=True,
)
register_op(
    "LookupTableFindV2",
    inputs=["table_handle: resource", "keys: Tin", "default_value: Tout"],
    outputs=["values: Tout"],
    attrs=["Tin: type", "Tout: type"],
    stateful=True,
)
register_op(
    "LookupTableSizeV2", inputs=["table_handle: resource"], outputs=["size: int64"], stateful=True
)
for _op in ("LookupTableInsertV2", "LookupTableImportV2"):
    register_op(
        _op,
        inputs=["table_handle: resource", "keys: Tin", "values: Tout"],
        attrs=["Tin: type", "Tout: type"],
        stateful=True,
    )
register_op(
    "LookupTableRemoveV2",
    inputs=["table_handle: resource", "keys: Tin"],
    attrs=["Tin: type"],
    stateful=True,
)
register_op(
    "LookupTableExportV2",
    inputs=["table_handle: resource"],
    outputs=["keys: Tkeys", "values: Tvalues"],
    attrs=["Tkeys: type", "Tvalues: type"],
    stateful=True,
)


def defaults_per_key(default: np.ndarray, shape: tuple) -> np.ndarray:
    """The default value of each of shape[0] keys: `default` per key, or one for all
    (a scalar, or one value of shape[1:])."""
    per_key = default.size != 1 and default.size == int(np.prod(shape))
    if per_key:
        return default.reshape(shape)
    if default.size == 1:
        return np.broadcast_to(default.reshape(-1)[:1], shape)
    return np.broadcast_to(default.reshape(shape[1:]), shape)


def _key(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x


class LookupTable:
    """A hash table from scalar keys to values of `value_shape` (TensorFlow's
    LookupInterface). Entries keep insertion order; TensorFlow's order is unspecified."""

    kind = "HashTable"
    mutable = False

    def __init__(self, key_dtype: DataType, value_dtype: DataType, value_shape: tuple) -> None:
        self.key_dtype, self.value_dtype = key_dtype, value_dtype
        self.value_shape = tuple(value_shape)
        self._lock = threading.Lock()
        self._entries: dict[Any, np.ndarray] = {}
        self._initialized = False

    def signature(self) -> str:
        return f"{dtypes.tf_name(self.key_dtype)}->{dtypes.tf_name(self.value_dtype)}"

    def check_types(self, key: DataType, value: DataType, what: str) -> None:
        if key != self.key_dtype or value != self.value_dtype:
            have = what.format(k=dtypes.tf_name(key), v=dtypes.tf_name(value))
            want = what.format(k=dtypes.tf_name(self.key_dtype), v=dtypes.tf_name(self.value_dtype))
            raise InvalidArgumentError(f"Signature mismatch, have: {have} expected: {want}")

    def _rows(self, keys: np.ndarray, values: np.ndarray) -> np.ndarray:
        want = keys.shape + self.value_shape
        if values.shape != want:
            if self.mutable:
                raise InvalidArgumentError(
                    f"Expected shape {mu.shape_str(want)} for value, got "
                    f"{mu.shape_str(values.shape)}"
                )
            raise InvalidArgumentError(
                f"Keys and values must have the same size {keys.size} vs {values.size}"
            )
        return values.reshape((keys.size, *self.value_shape))

    def size(self) -> int:
        with self._lock:
            return len(self._entries)

    def initialize(self, keys: np.ndarray, values: np.ndarray) -> None:
        rows = self._rows(keys, values)
        with self._lock:
            if self._initialized:
                same = len(self._entries) == keys.size and all(
                    _key(k) in self._entries and np.array_equal(self._entries[_key(k)], v)
                    for k, v in zip(keys.reshape(-1), rows)
                )
                if not same:
                    raise FailedPreconditionError(
                        "Table was already initialized with different data."
                    )
                return
            entries: dict[Any, np.ndarray] = {}
            for k, v in zip(keys.reshape(-1), rows):
                old = entries.setdefault(_key(k), v)
                if old is not v and not np.array_equal(old, v):
                    raise FailedPreconditionError(
                        f"HashTable has different value for same key. Key {_fmt(k)} has "
                        f"{_fmt(old)} and trying to add value {_fmt(v)}"
                    )
            self._entries, self._initialized = entries, True

    def find(self, keys: np.ndarray, default: np.ndarray) -> np.ndarray:
        if not self.mutable and not self._initialized:
            raise FailedPreconditionError("Table not initialized.")
        n = keys.size
        out = np.empty((n, *self.value_shape), dtype=default.dtype)
        defaults = defaults_per_key(default, out.shape)
        with self._lock:
            for i, k in enumerate(keys.reshape(-1)):
                v = self._entries.get(_key(k))
                out[i] = defaults[i] if v is None else v
        return out.reshape(keys.shape + self.value_shape)

    def insert(self, keys: np.ndarray, values: np.ndarray) -> None:
        rows = self._rows(keys, values)
        with self._lock:
            for k, v in zip(keys.reshape(-1), rows):
                self._entries[_key(k)] = v.copy()

    def remove(self, keys: np.ndarray) -> None:
        with self._lock:
            for k in keys.reshape(-1):
                self._entries.pop(_key(k), None)

    def export(self, key_np: np.dtype, value_np: np.dtype) -> list:
        with self._lock:
            items = list(self._entries.items())
        keys = np.array([k for k, _ in items], dtype=key_np).reshape(len(items))
        values = np.array([v for _, v in items], dtype=value_np)
        return [keys, values.reshape((len(items), *self.value_shape))]

    def import_(self, keys: np.ndarray, values: np.ndarray) -> None:
        rows = self._rows(keys, values)
        with self._lock:
            self._entries = {_key(k): v.copy() for k, v in zip(keys.reshape(-1), rows)}


class MutableTable(LookupTable):
    kind = "MutableHashTable"
    mutable = True


def _fmt(v: Any) -> str:
    v = np.asarray(v)
    if v.ndim == 0:
        item = v.item()
        if isinstance(item, bytes):
            return item.decode(errors="replace")
        return format(item, "g") if isinstance(item, float) else str(item)  # as C++ ostream
    return "[" + " ".join(_fmt(x) for x in v) + "]"


def _table_factory(cls: type[LookupTable], has_value_shape: bool) -> Callable:
    def factory(k: KernelConstruction) -> Callable:
        shape = tuple(k.attr("value_shape") or ()) if has_value_shape else ()

        def make(name: str) -> LookupTable:
            return cls(k.attr("key_dtype"), k.attr("value_dtype"), shape)

        return resource_op_kernel(
            k, make, kind=LookupTable, what="lookup table", type_name=LOOKUP_TYPE_NAME,
            use_node_name=bool(k.attr("use_node_name_sharing")),
        )  # fmt: skip

    return factory


register_kernel("HashTableV2")(_table_factory(LookupTable, False))
register_kernel("MutableHashTableV2")(_table_factory(MutableTable, False))
register_kernel("MutableHashTableOfTensorsV2")(_table_factory(MutableTable, True))


def table_of(ctx: OpKernelContext, value: Any) -> LookupTable:
    h = handle_of(value, ctx.node_name)
    table = ctx.step.resource_mgr.find(h.container, h.name)
    if not isinstance(table, LookupTable):
        raise NotFoundError(
            f"Resource {h.container}/{h.name}/{LOOKUP_TYPE_NAME} does not exist.", ctx.node_name
        )
    return table


def _table_kernel(body: Callable[[KernelConstruction, LookupTable, list], list]) -> Callable:
    def factory(k: KernelConstruction) -> Callable:
        def compute(ctx: OpKernelContext, inputs: list) -> list:
            table = table_of(ctx, inputs[0])
            try:
                return body(k, table, [np.asarray(v) for v in inputs[1:]])
            except (InvalidArgumentError, FailedPreconditionError, UnimplementedError) as e:
                raise type(e)(e.message, ctx.node_name) from None

        return compute

    return factory


def _initialize(k: KernelConstruction, t: LookupTable, args: list) -> list:
    t.check_types(k.attr("Tkey"), k.attr("Tval"), "resource, {k}, {v}->")
    t.initialize(*args)
    return []


def _find(k: KernelConstruction, t: LookupTable, args: list) -> list:
    t.check_types(k.attr("Tin"), k.attr("Tout"), "resource, {k}, {v}->{v}")
    return [t.find(*args)]


def _mutating(what: str, fn: Callable[..., None]) -> Callable:
    def body(k: KernelConstruction, t: LookupTable, args: list) -> list:
        if not t.mutable:
            raise UnimplementedError(
                f"{what} not supported by InitializableLookupTable implementations"
            )
        fn(k, t, args)
        return []

    return body


def _insert(k: KernelConstruction, t: LookupTable, args: list) -> None:
    t.check_types(k.attr("Tin"), k.attr("Tout"), "resource, {k}, {v}->")
    t.insert(*args)


def _import(k: KernelConstruction, t: LookupTable, args: list) -> list:
    t.check_types(k.attr("Tin"), k.attr("Tout"), "resource, {k}, {v}->")
    if t.mutable:
        t.import_(*args)
    else:  # an InitializableLookupTable imports by initializing
        t.initialize(*args)
    return []


def _remove(k: KernelConstruction, t: LookupTable, args: list) -> None:
    t.check_types(k.attr("Tin"), t.value_dtype, "resource, {k}->")
    t.remove(*args)


def _export(k: KernelConstruction, t: LookupTable, args: list) -> list:
    return t.export(mu.np_type(k.attr("Tkeys")), mu.np_type(k.attr("Tvalues")))


register_kernel("InitializeTableV2")(_table_kernel(_initialize))
register_kernel("LookupTableFindV2")(_table_kernel(_find))
register_kernel("LookupTableSizeV2")(_table_kernel(lambda k, t, a: [np.int64(t.size())]))
register_kernel("LookupTableInsertV2")(_table_kernel(_mutating("Insert", _insert)))
register_kernel("LookupTableRemoveV2")(_table_kernel(_mutating("Remove", _remove)))
register_kernel("LookupTableImportV2")(_table_kernel(_import))
register_kernel("LookupTableExportV2")(_table_kernel(_export))
