"""Client, checkpoints: TensorFlow's SaveableObject (training/saving/saveable_object.py),
something the Saver writes as one or more named tensors and restores with its own ops;
the saveables of mutable lookup tables (TF's lookup_ops MutableHashTable._Saveable and
DenseHashTable._Saveable) save their export and restore through LookupTableImportV2.
Graph building only; not thread-safe (as TensorFlow's graphs)."""

from __future__ import annotations

import dataclasses
from typing import Any

from client.framework import ops as _ops
from client.framework.op_builder import apply_op


@dataclasses.dataclass(frozen=True)
class SaveSpec:
    """One tensor to save: its value, slice spec ("" for whole) and checkpoint key."""

    tensor: Any
    slice_spec: str
    name: str

    @property
    def dtype(self) -> Any:
        return self.tensor.dtype.base_dtype


class SaveableObject:
    """Tensors saved together under `name`, restored by `restore` (TF's SaveableObject)."""

    def __init__(self, op: Any, specs: list[SaveSpec], name: str) -> None:
        self.op = op
        self.specs = specs
        self.name = name

    @property
    def device(self) -> str:
        """Where the first tensor is made: the Saver groups saveables by it (sharded)."""
        return str(self.specs[0].tensor.device)

    def restore(self, restored_tensors: list[Any], reshape: bool) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not restore")


class TableSaveable(SaveableObject):
    """A mutable lookup table: its keys and values as `<name>-keys` and `<name>-values`
    (the table's export, built once with the table), restored by importing both."""

    def __init__(self, table: Any, name: str, table_name: str | None = None) -> None:
        keys, values = table.export()
        specs = [SaveSpec(keys, "", name + "-keys"), SaveSpec(values, "", name + "-values")]
        # The restore scope is named after the table (the name it was given), the keys
        # after the saveable (the same, unless a Saver's var_list names it).
        self.table_name = table_name or name
        super().__init__(table, specs, name)

    def restore(self, restored_tensors: list[Any], reshape: bool) -> Any:
        handle = self.op.resource_handle
        with _ops.name_scope(f"{self.table_name}_table_restore"), _ops.colocate_with(handle):
            return apply_op("LookupTableImportV2", [handle, *restored_tensors[:2]], {})
