"""Client graph building: tf.RaggedTensor (values, which may be ragged again, and row
splits, as tf.io.RaggedFeature parses them) and tf.compat.v1.ragged.RaggedTensorValue, what
Session.run returns for one. Immutable values."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor


class RaggedTensorValue(NamedTuple):
    """A fetched RaggedTensor: numpy values and row_splits (row i is
    values[row_splits[i]:row_splits[i + 1]])."""

    values: Any
    row_splits: Any

    def to_list(self) -> list:
        s = np.asarray(self.row_splits)
        if isinstance(self.values, RaggedTensorValue):
            rows = self.values.to_list()
            return [rows[s[i] : s[i + 1]] for i in range(len(s) - 1)]
        v = np.asarray(self.values)
        return [v[s[i] : s[i + 1]].tolist() for i in range(len(s) - 1)]

    @property
    def flat_values(self) -> Any:
        v = self.values
        return v.flat_values if isinstance(v, RaggedTensorValue) else v

    @property
    def nested_row_splits(self) -> tuple[Any, ...]:
        v = self.values
        inner = v.nested_row_splits if isinstance(v, RaggedTensorValue) else ()
        return (self.row_splits, *inner)

    @property
    def dtype(self) -> Any:
        v = self.values
        return v.dtype if isinstance(v, RaggedTensorValue) else np.asarray(v).dtype


class RaggedTensor:
    """Rows of varying length: row i is values[row_splits[i]:row_splits[i + 1]]."""

    def __init__(self, values: Any, row_splits: Any) -> None:
        # values may be a RaggedTensor itself (a nested ragged dimension).
        self._values = (
            values if isinstance(values, RaggedTensor) else convert_to_tensor(values, name="values")
        )
        # Python splits become int64, TF's dtype hint for them (nested splits must agree).
        hint = None if isinstance(row_splits, _ops.Tensor) else dtypes.int64
        self._row_splits = convert_to_tensor(row_splits, dtype=hint, name="row_splits")

    @classmethod
    def from_row_splits(
        cls, values: Any, row_splits: Any, name: str | None = None, validate: bool = True
    ) -> RaggedTensor:
        return cls(values, row_splits)

    # The graph-building methods live in client.ops.ragged_ops (imported when called:
    # client.ops imports this module).
    @classmethod
    def from_value_rowids(
        cls,
        values: Any,
        value_rowids: Any,
        nrows: Any = None,
        name: str | None = None,
        validate: bool = True,
    ) -> RaggedTensor:
        from client.ops import ragged_ops

        return ragged_ops.from_value_rowids(values, value_rowids, nrows, name)

    @classmethod
    def from_row_lengths(
        cls, values: Any, row_lengths: Any, name: str | None = None, validate: bool = True
    ) -> RaggedTensor:
        from client.ops import ragged_ops

        return ragged_ops.from_row_lengths(values, row_lengths, name)

    def nrows(self, out_type: Any = None, name: str | None = None) -> Any:
        from client.ops import ragged_ops

        return ragged_ops.nrows(self, out_type or dtypes.int64, name)

    def row_lengths(self, axis: int = 1, name: str | None = None) -> Any:
        from client.ops import ragged_ops

        if axis != 1:
            raise ValueError("This client's row_lengths takes axis=1 only")
        return ragged_ops.row_lengths(self, name)

    def to_tensor(
        self, default_value: Any = None, name: str | None = None, shape: Any = None
    ) -> Any:
        from client.ops import ragged_ops

        return ragged_ops.to_tensor(self, default_value, name, shape)

    def to_sparse(self, name: str | None = None) -> Any:
        from client.ops import ragged_ops

        return ragged_ops.to_sparse(self, name)

    @property
    def nested_row_splits(self) -> tuple[Any, ...]:
        from client.ops import ragged_ops

        return tuple(ragged_ops.nested_row_splits(self))

    values = property(lambda self: self._values)
    row_splits = property(lambda self: self._row_splits)
    dtype = property(lambda self: self._values.dtype)
    graph = property(lambda self: self._values.graph)

    @property
    def flat_values(self) -> Any:
        v = self._values
        return v.flat_values if isinstance(v, RaggedTensor) else v

    @property
    def ragged_rank(self) -> int:
        v = self._values
        return 1 + (v.ragged_rank if isinstance(v, RaggedTensor) else 0)

    def __repr__(self) -> str:
        return f"tf.RaggedTensor(values={self._values!r}, row_splits={self._row_splits!r})"

    def consumers(self) -> list[_ops.Operation]:
        return self._values.consumers()
