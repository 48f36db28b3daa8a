"""Client, graph building: row_splits_to_segment_ids (a RaggedTensor's value_rowids when
it was not built from them), through TF's array_ops.repeat graph for a vector along axis
0 (segment_id_ops.py, array_ops.repeat_with_axis)."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.framework.shape_fns import evaluated_value
from client.ops import array_ops, math_ops
from client.ops.tf1_extras import sequence_mask


def _out(op: Any) -> Any:
    return op.outputs[0]


def repeat_vector(
    data: Any, repeats: Any, name: str | None = None, known_repeats: Any = None
) -> Any:
    """tf.repeat(data, repeats, axis=0) for a vector `data`, as TF builds it.
    `known_repeats`: their values when the caller knows them while building (TF's shape
    inference evaluates such constant subgraphs, and its Shape nodes become Consts)."""
    with _ops.name_scope(name, "Repeat", [data, repeats]):
        data = convert_to_tensor(data, name="data")
        repeats = convert_to_tensor(repeats, name="repeats", preferred_dtype=dtypes.int32)
        if not repeats.dtype.is_integer:
            raise TypeError("Argument `tensor` (name: repeats) must be of type integer.")
        # TF's convert_to_int_tensor casts unconditionally (a Cast even to its dtype).
        repeats = _out(apply_op("Cast", [repeats], {"DstT": dtypes.int32, "Truncate": False}))
        if data.shape.ndims != 1:
            raise ValueError("This client repeats vectors only")
        data_shape = array_ops.shape(data, out_type=repeats.dtype)
        if repeats.shape.num_elements() == 1:
            repeats = array_ops.reshape(repeats, [])
            expanded = array_ops.expand_dims(data, 1)
            tiled = array_ops.tile(expanded, [1, repeats])
            result_shape = array_ops.concat([data_shape[:0], [repeats * data_shape[0]],
                                             data_shape[1:]], axis=0)  # fmt: skip
            return array_ops.reshape(tiled, result_shape)
        repeats = array_ops.broadcast_to(repeats, [data_shape[0]])
        axes = constant(np.arange(repeats.shape.ndims, dtype=np.int32))
        max_repeat = _out(apply_op("Max", [repeats, axes], {"keep_dims": False}))
        zero = convert_to_tensor(0, name="zero", dtype=max_repeat.dtype)
        max_repeat = _out(apply_op("Maximum", [zero, max_repeat], {}))
        mask = sequence_mask(repeats, max_repeat)
        expanded = array_ops.expand_dims(data, 1)
        tiled = array_ops.tile(expanded, [1, max_repeat])
        if known_repeats is not None:
            widest = max(0, int(np.max(known_repeats))) if np.size(known_repeats) else 0
            tiled.set_shape([np.size(known_repeats), widest])
        result = array_ops.boolean_mask(tiled, mask)
        result.set_shape([0 if repeats.shape.as_list()[0] == 0 else None])
        return result


def row_splits_to_segment_ids(splits: Any, name: str | None = None, out_type: Any = None) -> Any:
    """The row of each value: [0, 0, 1, 3, ...] from row_splits."""
    with _ops.name_scope(name, "RaggedSplitsToSegmentIds", [splits]):
        splits = convert_to_tensor(splits, name="splits", preferred_dtype=dtypes.int64)
        if splits.dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError("splits must have dtype int32 or int64")
        splits.shape.assert_has_rank(1)
        if splits.shape.as_list()[0] == 0:
            raise ValueError("Invalid row_splits: []")
        out_type = splits.dtype if out_type is None else dtypes.as_dtype(out_type)
        row_lengths = splits[1:] - splits[:-1]
        nrows = array_ops.shape(splits, out_type=out_type)[-1] - 1
        indices = math_ops.range(nrows)
        nsplits = splits.shape.as_list()[0]
        if nsplits is not None:
            indices.set_shape([nsplits - 1])
        # What TF's shape inference finds of the splits (it folds their Cumsum too).
        known = evaluated_value(splits)
        return repeat_vector(
            indices, row_lengths, known_repeats=None if known is None else np.diff(known)
        )
