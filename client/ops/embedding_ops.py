"""Client, graph building: tf.nn.embedding_lookup — rows of an embedding table gathered
where the table lives (its gradient is IndexedSlices: client.framework.indexed_slices)."""

from __future__ import annotations

from typing import Any

from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.ops import array_ops


def embedding_lookup(
    params: Any,
    ids: Any,
    partition_strategy: str = "mod",
    name: str | None = None,
    validate_indices: bool = True,
    max_norm: Any = None,
) -> Any:
    """TF's embedding_lookup for one table (a Variable or Tensor, or a list of one): the
    gather is colocated with the table, so only the looked-up rows leave its device."""
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            raise NotImplementedError(
                "embedding_lookup over a partitioned table (more than one params tensor)"
            )
        params = params[0]
    if params is None:
        raise ValueError("Need at least one param")
    if max_norm is not None:
        raise NotImplementedError("embedding_lookup with max_norm")
    with _ops.name_scope(name, "embedding_lookup", [ids]) as scope:
        ids = convert_to_tensor(ids, name="ids")
        with _ops.colocate_with(params):
            result = array_ops.gather(params, ids, name=scope)
        return array_ops.identity(result)
