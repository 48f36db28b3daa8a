"""Client API, tf.compat.v1.metrics over the top k classes: how TF's metrics_impl shapes
the labels before counting, for dense ids and for SparseTensor ids alike. Ranks are
matched statically when both are known, else by a cond on the dynamic ranks (a
SparseTensor's always: its rank is the size of its dense_shape); a class_id keeps only
that id; out-of-range ids become -1; labels are tiled once per k. A cond over
SparseTensors has three If outputs (indices, values, dense_shape), as TF flattens them.
Graph building; not thread-safe."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.framework.sparse_tensor import SparseTensor, SparseTensorValue
from client.ops import array_ops, math_ops
from client.ops.cond_v2 import cond_v2
from client.ops.gradients.math_grad import _reduced_shape
from client.ops.sets_ops import set_intersection, set_size
from client.ops.sparse_extra_ops import sparse_concat, sparse_reshape
from client.ops.sparse_gap_ops import sparse_retain


def tensor_or_sparse(x: Any) -> Any:
    """TF's convert_to_tensor_or_sparse_tensor."""
    if isinstance(x, SparseTensorValue):
        return SparseTensor(x.indices, x.values, x.dense_shape)
    return x if isinstance(x, SparseTensor) else convert_to_tensor(x)


def _cond(pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any]) -> Any:
    """cond_v2 over branches returning a Tensor, or a SparseTensor flattened to its three
    components and packed back (TF's nest.flatten(expand_composites=True))."""
    probe: list[bool] = []

    def flat(fn: Callable[[], Any]) -> Callable[[], Any]:
        def traced() -> Any:
            out = fn()
            probe.append(isinstance(out, SparseTensor))
            return [out.indices, out.values, out.dense_shape] if probe[-1] else out

        return traced

    outputs = cond_v2(pred, flat(true_fn), flat(false_fn))
    return SparseTensor(*outputs) if probe[0] else outputs[0]


def maybe_expand_labels(labels: Any, predictions: Any) -> Any:
    """`labels` [D1..DN] made [D1..DN, 1] to match the rank of `predictions`."""
    with _ops.name_scope(None, "expand_labels", [labels, predictions]) as scope:
        labels = tensor_or_sparse(labels)
        if isinstance(labels, SparseTensor):
            return _cond(
                math_ops.equal(array_ops.rank(predictions), array_ops.size(labels.dense_shape) + 1),
                lambda: sparse_reshape(
                    labels, shape=array_ops.concat((labels.dense_shape, (1,)), 0), name=scope
                ),
                lambda: labels,
            )
        labels_rank, predictions_rank = labels.shape.ndims, predictions.shape.ndims
        if labels_rank is not None and predictions_rank is not None:
            if predictions_rank == labels_rank:
                return labels
            if predictions_rank == labels_rank + 1:
                return array_ops.expand_dims(labels, -1, name=scope)
            raise ValueError(
                f"Unexpected labels shape {labels.shape} for predictions shape "
                f"{predictions.shape}. Predictions rank should be the same rank as labels "
                "rank or labels rank plus one ."
            )
        return _cond(
            math_ops.equal(array_ops.rank(predictions), array_ops.rank(labels) + 1),
            lambda: array_ops.expand_dims(labels, -1, name=scope),
            lambda: labels,
        )


def select_class_id(ids: Any, selected_id: int) -> SparseTensor:
    """`ids` keeping only `selected_id` in each row."""
    ids = tensor_or_sparse(ids)
    if isinstance(ids, SparseTensor):
        return sparse_retain(ids, math_ops.equal(ids.values, selected_id))
    ids_shape = array_ops.shape(ids, out_type=dtypes.int64)
    ids_last_dim = array_ops.size(ids_shape) - 1
    filled_shape = _reduced_shape(ids_shape, array_ops.reshape(ids_last_dim, [1]))
    filled = array_ops.fill(filled_shape, math_ops.cast(selected_id, dtypes.int64))
    result = set_intersection(filled, ids)
    return SparseTensor(indices=result.indices, values=result.values, dense_shape=ids_shape)


def maybe_select_class_id(labels: Any, predictions_idx: Any, class_id: int | None) -> Any:
    if class_id is None:
        return labels, predictions_idx
    return select_class_id(labels, class_id), select_class_id(predictions_idx, class_id)


def expand_and_tile(tensor: Any, multiple: int, dim: int, name: str) -> Any:
    """`tensor` with a new axis before `dim` (counted from the end when < 0), tiled
    `multiple` times along it."""
    if multiple < 1:
        raise ValueError(
            f"Invalid argument multiple={multiple} for expand_and_tile  call. `multiple` "
            "must be an integer > 0"
        )
    with _ops.name_scope(name, "expand_and_tile", [tensor]) as scope:
        tensor = tensor_or_sparse(tensor)
        if isinstance(tensor, SparseTensor):
            return _expand_and_tile_sparse(tensor, multiple, dim, scope)
        expanded = array_ops.expand_dims(tensor, dim if dim >= 0 else dim - 1, name="expand")
        if multiple == 1:
            return expanded
        ones = array_ops.ones_like(array_ops.shape(tensor))
        tile_multiples = array_ops.concat(
            (ones[:dim], (multiple,), ones[dim:]), 0, name="multiples"
        )
        return array_ops.tile(expanded, tile_multiples, name=scope)


def _expand_and_tile_sparse(tensor: SparseTensor, multiple: int, dim: int, scope: str) -> Any:
    """The SparseTensor form: a SparseReshape inserting the axis, then `multiple` copies
    concatenated along it (SparseConcat)."""
    if dim < 0:
        expand_dims: Any = array_ops.reshape(array_ops.size(tensor.dense_shape) + dim, [1])
    else:
        expand_dims = [dim]
    expanded_shape = array_ops.concat(
        (
            array_ops.slice(tensor.dense_shape, [0], expand_dims),
            [1],
            array_ops.slice(tensor.dense_shape, expand_dims, [-1]),
        ),
        0,
        name="expanded_shape",
    )
    expanded = sparse_reshape(tensor, shape=expanded_shape, name="expand")
    if multiple == 1:
        return expanded
    return sparse_concat(dim - 1 if dim < 0 else dim, [expanded] * multiple, name=scope)


def num_relevant(labels: Any, k: int) -> Any:
    """Per row, min(k, number of labels): the set size of a SparseTensor's row, the
    count of non-negative ids of a dense row."""
    with _ops.name_scope(None, "num_relevant", [labels]) as scope:
        labels = tensor_or_sparse(labels)
        if isinstance(labels, SparseTensor):
            return math_ops.minimum(set_size(labels), k, name=scope)
        num_labels = math_ops.reduce_sum(
            array_ops.where_v2(
                math_ops.greater_equal(labels, 0),
                array_ops.ones_like(labels),
                array_ops.zeros_like(labels),
            ),
            axis=-1,
        )
        return math_ops.minimum(num_labels, k, name=scope)


def clean_out_of_range_indices(labels: Any, num_classes: Any) -> Any:
    """`labels` with ids >= num_classes made -1, under a cond as TF builds it (a
    SparseTensor keeps its indices and dense_shape)."""
    labels = tensor_or_sparse(labels)
    is_sparse = isinstance(labels, SparseTensor)

    def clean_values(values: Any) -> Any:
        return array_ops.where_v2(
            math_ops.greater_equal(values, num_classes), -1 * array_ops.ones_like(values), values
        )

    def clean() -> Any:
        if is_sparse:
            return SparseTensor(labels.indices, clean_values(labels.values), labels.dense_shape)
        return clean_values(labels)

    max_labels = math_ops.reduce_max(labels.values if is_sparse else labels)
    return _cond(math_ops.greater_equal(max_labels, num_classes), clean, lambda: labels)
