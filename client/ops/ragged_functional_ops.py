"""Client, graph building: tf.ragged.map_flat_values (TF's ragged_functional_ops): `op`
applied to the flat values of its RaggedTensor arguments, the result given their row
partitions back. Ragged arguments must share their partitions (the same row_splits
tensors); TF's merge of different but equal partitions, with its runtime assertions, is
not built here."""

from __future__ import annotations

from typing import Any

from client.framework.ragged_tensor import RaggedTensor


def _partitions(rt: RaggedTensor) -> list[Any]:
    out = []
    v: Any = rt
    while isinstance(v, RaggedTensor):
        out.append(v._row_partition)
        v = v.values
    return out


def _replace(value: Any, partition_lists: list[list[Any]], nrows: list[int]) -> Any:
    """`value` with each RaggedTensor in it (through lists, tuples, dicts) replaced by its
    flat values; their partitions and static flat row counts collected."""
    if isinstance(value, RaggedTensor):
        partition_lists.append(_partitions(value))
        n = value.flat_values.shape.as_list()[0] if value.flat_values.shape.ndims else None
        if n is not None:
            nrows.append(n)
        return value.flat_values
    if isinstance(value, list):
        return [_replace(v, partition_lists, nrows) for v in value]
    if isinstance(value, tuple):
        return tuple(_replace(v, partition_lists, nrows) for v in value)
    if isinstance(value, dict):
        return {k: _replace(v, partition_lists, nrows) for k, v in value.items()}
    return value


def map_flat_values(op: Any, *args: Any, **kwargs: Any) -> Any:
    partition_lists: list[list[Any]] = []
    nrows: list[int] = []
    inner_args = _replace(list(args), partition_lists, nrows)
    inner_kwargs = _replace(kwargs, partition_lists, nrows)
    if not partition_lists:
        return op(*args, **kwargs)
    if len(set(nrows)) > 1:
        raise ValueError(
            "Input RaggedTensors' flat_values must all have the same outer-dimension size.  "
            f"Got sizes: {set(nrows)}"
        )
    first = partition_lists[0]
    for other in partition_lists[1:]:
        if len(other) != len(first):
            raise ValueError("All ragged inputs must have the same ragged_rank.")
        if any(a.row_splits() is not b.row_splits() for a, b in zip(first, other)):
            raise ValueError(
                "This client maps flat values of RaggedTensors that share their row "
                "partitions only (TF would merge them with runtime assertions)"
            )
    output = op(*inner_args, **inner_kwargs)
    if nrows and not output.shape[:1].is_compatible_with([nrows[0]]):
        raise ValueError(
            "tf.ragged.map_flat_values requires that the output of `op` have the same "
            "outer-dimension size as flat_values of any ragged inputs. (output shape: "
            f"{output.shape}; expected outer dimension size: {nrows[0]})"
        )
    result: Any = output
    for partition in reversed(first):
        result = RaggedTensor(result, row_partition=partition)
    return result
