"""Client, graph building: tf.nn.embedding_lookup and embedding_lookup_sparse, as
tensorflow.compat.v1's embedding_ops.py builds them (the same ops and node names). One
table is one gather colocated with it; a table split over several tensors (a list of
shards, "mod" or "div" partitioned) routes ids through DynamicPartition, gathers each
shard's rows where the shard lives and stitches them back (ParallelDynamicStitch), so
each shard's gradient stays IndexedSlices (client.ops.gradients.data_flow_grad)."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.framework.sparse_tensor import SparseTensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, clip_ops, data_flow_ops, math_ops


def _shape_of(x: Any) -> TensorShape:
    return x.shape if hasattr(x, "shape") else convert_to_tensor(x).shape


def _clip(params: Any, ids: Any, max_norm: Any) -> Any:
    """Each looked-up row clipped to an L2 norm of `max_norm` (over the row's axes)."""
    if max_norm is None:
        return params
    ids_rank = _shape_of(ids).ndims
    params_rank = _shape_of(params).ndims
    if ids_rank and params_rank:
        axes: Any = list(range(ids_rank, params_rank))
    else:
        first = ids_rank if ids_rank else array_ops.rank(ids)
        last = params_rank if params_rank else array_ops.rank(params)
        axes = math_ops.range(first, last)
    return clip_ops.clip_by_norm(params, max_norm, axes=axes)


def _as_params(params: Any) -> list[Any]:
    if params is None:
        raise ValueError("params must be specified")
    if isinstance(params, (list, tuple)) and not params:
        raise ValueError("Length of params is currently 0. Need at least one param.")
    if hasattr(params, "_get_variable_list"):  # a PartitionedVariable
        params = list(params)
    return list(params) if isinstance(params, (list, tuple)) else [params]


def _is_variable(p: Any) -> bool:
    return hasattr(p, "sparse_read")


def embedding_lookup(
    params: Any,
    ids: Any,
    partition_strategy: str = "mod",
    name: str | None = None,
    validate_indices: bool = True,
    max_norm: Any = None,
) -> Any:
    """tf.compat.v1.nn.embedding_lookup: rows `ids` of the table `params` (a Variable or
    Tensor, or a list of shards), each row clipped to `max_norm` when given."""
    params = _as_params(params)
    with _ops.name_scope(name, "embedding_lookup", [*params, ids]) as scope:
        n = len(params)
        if not any(_is_variable(p) for p in params):
            # TF's convert_n_to_tensor_or_indexed_slices: "params_0", "params_1", ...
            params = [convert_to_tensor(p, name=f"params_{i}") for i, p in enumerate(params)]
        ids = convert_to_tensor(ids, name="ids")
        if n == 1:
            with _ops.colocate_with(params[0]):
                result = _clip(array_ops.gather(params[0], ids, name=scope), ids, max_norm)
            # The result leaves the table's colocation group, as the stitch below does.
            return array_ops.identity(result)
        return _partitioned_lookup(params, ids, partition_strategy, scope, max_norm)


def _assignments(params: list[Any], flat_ids: Any, strategy: str) -> tuple[Any, Any]:
    """(shard of each id, its row within the shard) for TF's "mod" and "div" layouts."""
    n = len(params)
    if strategy == "mod":
        return flat_ids % n, flat_ids // n
    if strategy != "div":
        raise ValueError(
            f"Unrecognized partition strategy: {strategy}.Must be one of either `mod` or `div`."
        )
    rows = [p.shape[0] if p.shape.ndims else None for p in params]
    if all(r is not None for r in rows):
        total = convert_to_tensor(sum(rows), dtype=flat_ids.dtype, name="Const")
    else:
        sizes = []
        for p, r in zip(params, rows):
            if r is not None:
                sizes.append(r)
            else:
                with _ops.colocate_with(p):
                    sizes.append(array_ops.shape(p)[0])
        total = math_ops.reduce_sum(math_ops.cast(array_ops.stack(sizes), flat_ids.dtype))
    per_shard = total // n
    extras = total % n
    shard = math_ops.maximum(flat_ids // (per_shard + 1), (flat_ids - extras) // per_shard)
    row = array_ops.where(
        shard < extras, flat_ids % (per_shard + 1), (flat_ids - extras) % per_shard
    )
    return shard, row


def _partitioned_lookup(
    params: list[Any], ids: Any, strategy: str, scope: str, max_norm: Any
) -> Any:
    n = len(params)
    flat_ids = array_ops.reshape(ids, [-1])
    original_indices = math_ops.range(array_ops.size(flat_ids, out_type=dtypes.int32))
    shard, new_ids = _assignments(params, flat_ids, strategy)
    shard = math_ops.cast(shard, dtypes.int32)
    gather_ids = data_flow_ops.dynamic_partition(new_ids, shard, n)
    pindices = data_flow_ops.dynamic_partition(original_indices, shard, n)
    partitioned = []
    for p in range(n):
        with _ops.device(None), _ops.colocate_with(params[p]):
            partitioned.append(array_ops.gather(params[p], gather_ids[p]))
    ret = data_flow_ops.parallel_dynamic_stitch(pindices, partitioned, name=scope)
    element_shape = params[0].shape[1:]
    for p in params[1:]:
        element_shape = element_shape.merge_with(p.shape[1:])
    if element_shape.is_fully_defined():
        element_dims: Any = element_shape.as_list()
    else:
        # The shape of shard 0 is computed where the shard lives (no data motion).
        with _ops.colocate_with(params[0]):
            params_shape = array_ops.shape(params[0])
        element_dims = params_shape[1:]
    ret = array_ops.reshape(ret, array_ops.concat([array_ops.shape(ids), element_dims], 0))
    ret.set_shape(ids.shape.concatenate(element_shape))
    return _clip(ret, ids, max_norm)


def embedding_lookup_sparse(
    params: Any,
    sp_ids: Any,
    sp_weights: Any,
    partition_strategy: str = "mod",
    name: str | None = None,
    combiner: str | None = None,
    max_norm: Any = None,
    allow_fast_lookup: bool = False,
) -> Any:
    """tf.compat.v1.nn.embedding_lookup_sparse: per row of the SparseTensor `sp_ids`, the
    looked-up embeddings combined ("sum", "mean", "sqrtn"), weighted by `sp_weights`."""
    combiner = combiner or "mean"
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}")
    params = _as_params(params)
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError(f"sp_ids must be SparseTensor, got {type(sp_ids)}")
    if sp_weights is not None and not isinstance(sp_weights, SparseTensor):
        raise TypeError(f"sp_weights must be either None or SparseTensor,got {type(sp_weights)}")
    with _ops.name_scope(name, "embedding_lookup_sparse", [*params, sp_ids]) as scope:
        segment_ids = sp_ids.indices[:, 0]
        return _lookup_sparse(
            params, segment_ids, sp_weights, sp_ids.values, combiner, max_norm,
            allow_fast_lookup, partition_strategy, scope,
        )  # fmt: skip


def _lookup_sparse(
    params: list[Any],
    segment_ids: Any,
    sp_weights: Any,
    ids: Any,
    combiner: str,
    max_norm: Any,
    allow_fast_lookup: bool,
    partition_strategy: str,
    name: str,
) -> Any:
    """TF's embedding_lookup_sparse_impl: without weights over one table on this device, a
    SparseSegment{Sum,Mean,SqrtN} straight from the table (sparse gradient); otherwise
    the unique ids looked up, weighted, and combined by SegmentSum."""
    ignore_weights = sp_weights is None
    segment_ids = convert_to_tensor(segment_ids, name="segment_ids")
    if len(params) == 1 and not isinstance(params[0], _ops.Tensor) and not _is_variable(params[0]):
        params = [convert_to_tensor(params[0], name="params")]
    sparse_gradient = False
    # A Variable is a CompositeTensor in TensorFlow 2.x: only a plain tensor table takes
    # the fast path (SparseSegment* straight from the table, with a sparse gradient).
    if (
        len(params) == 1
        and not _is_variable(params[0])
        and params[0].device == segment_ids.device
        and max_norm is None
        and (allow_fast_lookup or ignore_weights)
    ):
        idx = ids
        embeddings = params[0]
        sparse_gradient = not allow_fast_lookup
    else:
        ids, idx = math_ops.unique(ids)
        embeddings = embedding_lookup(
            params, ids, partition_strategy=partition_strategy, max_norm=max_norm
        )
    if ignore_weights:
        if segment_ids.dtype not in (dtypes.int32, dtypes.int64):
            segment_ids = math_ops.cast(segment_ids, dtypes.int32)
        reduce = {
            "sum": math_ops.sparse_segment_sum,
            "mean": math_ops.sparse_segment_mean,
        }.get(combiner, math_ops.sparse_segment_sqrt_n)
        return reduce(embeddings, idx, segment_ids, name=name, sparse_gradient=sparse_gradient)
    if segment_ids.dtype != dtypes.int32:
        segment_ids = math_ops.cast(segment_ids, dtypes.int32)
    weights = sp_weights.values
    embeddings = array_ops.gather(embeddings, idx)
    original_dtype = embeddings.dtype
    if embeddings.dtype in (dtypes.float16, dtypes.bfloat16):
        embeddings = math_ops.cast(embeddings, dtypes.float32)
    if weights.dtype != embeddings.dtype:
        weights = math_ops.cast(weights, embeddings.dtype)
    ones_shape = array_ops.expand_dims(array_ops.rank(embeddings) - 1, 0)
    weights_shape = array_ops.shape(weights)
    ones = array_ops.ones(ones_shape, dtype=weights_shape.dtype)
    bcast_weights_shape = array_ops.concat([weights_shape, ones], 0)
    orig_weights_shape = weights.shape
    weights = array_ops.reshape(weights, bcast_weights_shape)
    if embeddings.shape.ndims is not None:
        weights.set_shape(orig_weights_shape.concatenate([1] * (embeddings.shape.ndims - 1)))
    embeddings *= weights
    if combiner == "sum":
        embeddings = math_ops.segment_sum(embeddings, segment_ids, name=name)
    else:
        embeddings = math_ops.segment_sum(embeddings, segment_ids)
        if combiner == "mean":
            weight_sum = math_ops.segment_sum(weights, segment_ids)
        else:
            weight_sum = math_ops.sqrt(math_ops.segment_sum(math_ops.pow(weights, 2), segment_ids))
        embeddings = math_ops.div_no_nan(embeddings, weight_sum, name=name)
    if embeddings.dtype != original_dtype:
        embeddings = math_ops.cast(embeddings, original_dtype)
    return embeddings
