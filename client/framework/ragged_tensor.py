"""Client graph building: tf.RaggedTensor (values, which may be ragged again, and row
splits, as tf.io.RaggedFeature parses them) and tf.compat.v1.ragged.RaggedTensorValue, what
Session.run returns for one. Immutable values."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

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
        self._row_splits = convert_to_tensor(row_splits, name="row_splits")

    @classmethod
    def from_row_splits(cls, values: Any, row_splits: Any, validate: bool = True) -> RaggedTensor:
        return cls(values, row_splits)

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
