"""Client, graph building: partitioned variables (TF's PartitionedVariable and the
tf.compat.v1 partitioners).

get_variable(..., partitioner=p) asks `p(shape=..., dtype=...)` how many shards to cut
along one axis and creates one variable per shard, "<name>/part_<i>", each knowing its
slice of the whole (SaveSliceInfo: the Saver writes every shard as a slice of `<name>`).
Shards are plain variables, so a device function (replica_device_setter) places each in
turn, round-robin over the ps tasks, and optimizers update each shard. A
PartitionedVariable iterates over its shards, and converts to a tensor by concatenating
them ("<name>/ConcatPartitions/concat", then an Identity named "<name>"). Graph building:
not thread-safe.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple, cast

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops
from client.ops.variables import Variable


class PartitionInfo(NamedTuple):
    """TF's _PartitionInfo, passed to initializers: the whole variable's shape and this
    shard's offset in it (VarianceScaling counts fans over the full shape)."""

    full_shape: list[int]
    var_offset: list[int]


def call_partitioner(partitioner: Any, shape: TensorShape, dtype: Any) -> list[int]:
    """TF's _call_partitioner: the partitioner's list, checked (rank, >= 1, one axis)."""
    if not shape.is_fully_defined():
        raise ValueError(
            f"Shape of a new partitioned variable must be fully defined, but instead was {shape}."
        )
    if not shape.ndims:  # fully defined, so 0 rather than None
        raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape}")
    slicing = partitioner(shape=shape, dtype=dtype)
    if not isinstance(slicing, Sequence):
        raise ValueError(f"Partitioner must return a sequence, but saw: {slicing}")
    if len(slicing) != shape.ndims:
        raise ValueError(
            "Partitioner returned a partition list that does not match the Variable's rank: "
            f"{slicing} vs. {shape}"
        )
    if any(p < 1 for p in slicing):
        raise ValueError(f"Partitioner returned zero partitions for some axes: {slicing}")
    if sum(p > 1 for p in slicing) > 1:
        raise ValueError(
            "Can only slice a variable along one dimension: "
            f"shape: {shape}, partitioning: {slicing}"
        )
    return list(slicing)


def slice_dim_and_num_slices(partitions: list[int]) -> tuple[int, int]:
    for dim, n in enumerate(partitions):
        if n > 1:
            return dim, n
    return 0, 1  # no axis cut: one shard


def iter_slices(
    full_shape: list[int], num_slices: int, slice_dim: int
) -> Iterator[tuple[list[int], list[int]]]:
    """(offset, shape) of each shard: the first `full % n` shards get one extra row."""
    excess = full_shape[slice_dim] % num_slices
    least = full_shape[slice_dim] // num_slices
    offset = [0] * len(full_shape)
    for i in range(num_slices):
        shape = list(full_shape)
        shape[slice_dim] = least + (1 if i < excess else 0)
        yield list(offset), shape
        offset[slice_dim] += shape[slice_dim]


class PartitionedVariable:
    """tf.PartitionedVariable: the shards of one variable, in offset order."""

    def __init__(
        self,
        name: str,
        shape: TensorShape,
        dtype: Any,
        variable_list: list[Variable],
        partitions: list[int],
    ) -> None:
        if not variable_list:
            raise ValueError("variable_list may not be empty")
        for v in variable_list:
            info = v._get_save_slice_info()
            if info is None:
                raise ValueError(
                    "All variables must have a save_slice_info available: "
                    f"{[v.name for v in variable_list]}"
                )
            if list(info.full_shape) != shape.as_list():
                raise ValueError(
                    f"All variables' full shapes must match shape: {shape}; but full shapes "
                    f"were: {list(info.full_shape)}"
                )
        self._variable_list = sorted(
            variable_list,
            key=lambda v: v._get_save_slice_info().var_offset,  # type: ignore[union-attr]
        )
        self._name = name
        self._shape = shape
        self._dtype = dtypes.as_dtype(dtype)
        self._partitions = list(partitions)

    def __iter__(self) -> Iterator[Variable]:
        return iter(self._variable_list)

    def __len__(self) -> int:
        if len(self._partition_axes()) > 1:
            raise ValueError("Cannot get a length for a PartitionedVariable cut on more axes")
        return len(self._variable_list)

    def _partition_axes(self) -> list[int]:
        if all(p == 1 for p in self._partitions):
            return [0]
        return [i for i, p in enumerate(self._partitions) if p > 1]

    def _concat(self) -> Any:
        """The whole value: the shards concatenated along the cut axis, as "<name>"."""
        g = _ops.get_default_graph()
        if len(self._variable_list) == 1:
            with g.name_scope(None):
                return array_ops.identity(self._variable_list[0], name=self._name)
        (axis,) = self._partition_axes()
        with g.name_scope(self._name + "/ConcatPartitions/"):
            concatenated = array_ops.concat(self._variable_list, axis)
        with g.name_scope(None):
            return array_ops.identity(concatenated, name=self._name)

    def as_tensor(self) -> Any:
        with _ops.control_dependencies(None):
            return self._concat()

    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype)
    shape = property(lambda self: self._shape)

    def get_shape(self) -> TensorShape:
        return self._shape

    def _get_variable_list(self) -> list[Variable]:
        return self._variable_list

    def _get_partitions(self) -> list[int]:
        return self._partitions

    def _split(self, value: Any) -> list[Any]:
        """TF's _apply_assign_fn: a list or PartitionedVariable as is, else the value split
        along the cut axis into the shards' sizes."""
        if isinstance(value, (list, PartitionedVariable)):
            return list(value)
        (axis,) = self._partition_axes()
        sizes = [v.shape[axis] for v in self._variable_list]
        return array_ops.split(value, sizes, axis=axis)

    def assign(self, value: Any, use_locking: bool = False, name: str | None = None) -> list[Any]:
        return [v.assign(x, use_locking, name) for v, x in zip(self, self._split(value))]

    def assign_add(self, value: Any, use_locking: bool = False, name: str | None = None) -> Any:
        return [v.assign_add(x, use_locking, name) for v, x in zip(self, self._split(value))]

    def assign_sub(self, value: Any, use_locking: bool = False, name: str | None = None) -> Any:
        return [v.assign_sub(x, use_locking, name) for v, x in zip(self, self._split(value))]

    def __repr__(self) -> str:
        return f"<tf.PartitionedVariable '{self._name}' shape={self._shape} parts={len(self)}>"


def _to_tensor(
    v: PartitionedVariable, dtype: Any = None, name: str | None = None, as_ref: bool = False
) -> Any:
    if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(v.dtype):
        raise ValueError(
            f"Incompatible type conversion requested to type '{dtypes.as_dtype(dtype).name}' "
            f"for variable of type '{v.dtype.name}'"
        )
    if as_ref:
        raise NotImplementedError("PartitionedVariable doesn't support being used as a reference.")
    return v.as_tensor()


_ops.register_tensor_conversion_function(PartitionedVariable, _to_tensor)


def fully_defined_dims(shape: TensorShape) -> list[int]:
    """The dims of a shape known fully defined (call_partitioner checks it first)."""
    return cast(list[int], shape.as_list())


def _element_size(dtype: Any, bytes_per_string_element: int) -> int:
    dtype = dtypes.as_dtype(dtype)
    return bytes_per_string_element if dtype.base_dtype == dtypes.string else dtype.size


def fixed_size_partitioner(num_shards: int, axis: int = 0) -> Any:
    """tf.compat.v1.fixed_size_partitioner: `num_shards` shards along `axis` (at most one
    per row)."""

    def _partitioner(shape: TensorShape, **unused: Any) -> list[int]:
        partitions = [1] * len(shape)
        partitions[axis] = min(num_shards, fully_defined_dims(shape)[axis])
        return partitions

    return _partitioner


def min_max_variable_partitioner(
    max_partitions: int = 1,
    axis: int = 0,
    min_slice_size: int = 256 << 10,
    bytes_per_string_element: int = 16,
) -> Any:
    """tf.compat.v1.min_max_variable_partitioner: as many shards of at least
    `min_slice_size` bytes as fit, at most `max_partitions` and one per row."""

    def _partitioner(shape: TensorShape, dtype: Any) -> list[int]:
        if axis >= len(shape):
            raise ValueError(
                f"Cannot partition variable along axis {axis} when shape is only {shape}"
            )
        dims = fully_defined_dims(shape)
        total_bytes = math.prod(dims) * _element_size(dtype, bytes_per_string_element)
        partitions = [1] * len(dims)
        wanted = int(math.ceil(total_bytes / min_slice_size))
        partitions[axis] = max(1, min(dims[axis], max_partitions, wanted))
        return partitions

    return _partitioner


def variable_axis_size_partitioner(
    max_shard_bytes: int,
    axis: int = 0,
    bytes_per_string_element: int = 16,
    max_shards: int | None = None,
) -> Any:
    """tf.compat.v1.variable_axis_size_partitioner: shards of at most `max_shard_bytes`
    (at least one row each), at most `max_shards`."""
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError(
            "Both max_shard_bytes and bytes_per_string_element must be positive. "
            f"Currently, max_shard_bytes is {max_shard_bytes} and"
            f"bytes_per_string_element is {bytes_per_string_element}"
        )
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape: TensorShape, dtype: Any) -> list[int]:
        if not isinstance(shape, TensorShape):
            raise ValueError(f"shape is not a TensorShape: {shape}")
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        dims = fully_defined_dims(shape)
        rows = dims[axis]
        bytes_per_row = math.prod(dims) / rows * _element_size(dtype, bytes_per_string_element)
        rows_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_row))
        shards = int(math.ceil(rows / rows_per_shard))
        if max_shards:
            shards = min(max_shards, shards)
        partitions = [1] * len(dims)
        partitions[axis] = shards
        return partitions

    return _partitioner
