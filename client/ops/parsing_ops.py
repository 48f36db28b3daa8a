"""Client, graph building: tf.io.parse_example / parse_single_example with FixedLenFeature,
VarLenFeature, FixedLenSequenceFeature and RaggedFeature without partitions (TensorFlow's
parsing_ops.py / parsing_config.py: keys sorted, dense defaults built as TF builds them:
"Const" for a required key, "key_<k>" reshaped to the feature's shape, a scalar padding
value for sequence features), plus decode_raw and decode_csv, and the static shapes of
their outputs. Not thread-safe.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import numpy as np

from client.framework import dtypes as _dtypes
from client.framework import ops as _ops
from client.framework import shape_fns
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.framework.ragged_tensor import RaggedTensor
from client.framework.sparse_tensor import SparseTensor
from client.framework.tensor_shape import TensorShape


class FixedLenFeature(NamedTuple):
    shape: Any
    dtype: Any
    default_value: Any = None


class FixedLenSequenceFeature(NamedTuple):
    shape: Any
    dtype: Any
    allow_missing: bool = False
    default_value: Any = None


class VarLenFeature(NamedTuple):
    dtype: Any


class RaggedFeature(NamedTuple):
    """tf.io.RaggedFeature without partitions: each example's values as one row of a
    RaggedTensor (row splits of `row_splits_dtype`), read from `value_key` (default: the
    feature's key)."""

    dtype: Any
    value_key: str | None = None
    partitions: tuple = ()
    row_splits_dtype: Any = _dtypes.int32
    validate: bool = False


def _key_name(prefix: str, key: str) -> str:
    return prefix + re.sub("[^A-Za-z0-9_.\\-/]", "_", key)


def _reshape(t: _ops.Tensor, shape: Any) -> _ops.Tensor:
    return apply_op("Reshape", [t, np.asarray(list(shape), np.int32)], {}, "Reshape").outputs[0]


def _dense_default(key: str, feature: Any) -> tuple[_ops.Tensor, TensorShape]:
    dtype = _dtypes.as_dtype(feature.dtype)
    if isinstance(feature, FixedLenSequenceFeature):
        shape = TensorShape([None, *TensorShape(feature.shape).as_list()])
        if feature.default_value is None:
            return convert_to_tensor("" if dtype == _dtypes.string else 0, dtype=dtype), shape
        value = convert_to_tensor(
            feature.default_value, dtype=dtype, name=_key_name("padding_", key)
        )
        return _reshape(value, []), shape
    shape = TensorShape(feature.shape)
    if feature.default_value is None:
        return constant([], dtype=dtype), shape
    value = convert_to_tensor(feature.default_value, dtype=dtype, name=_key_name("key_", key))
    return _reshape(value, shape.as_list()), shape


def _parse(
    serialized: Any, features: dict, names: Any, name: str | None, single: bool = False
) -> dict:
    if not features:
        raise ValueError("Must provide at least one feature key.")
    with _ops.name_scope(name, "ParseExample"):
        serialized = convert_to_tensor(serialized, name="serialized")
        items = sorted(features.items())
        sparse = [(k, f) for k, f in items if isinstance(f, VarLenFeature)]
        ragged = [(k, f) for k, f in items if isinstance(f, RaggedFeature)]
        dense = [(k, f) for k, f in items if not isinstance(f, (VarLenFeature, RaggedFeature))]
        for key, feature in ragged:
            if feature.partitions:
                raise NotImplementedError(
                    f"RaggedFeature {key!r} with partitions (only flat rows are supported)"
                )
        defaults, shapes = [], []
        for key, feature in dense:
            if not isinstance(feature, (FixedLenFeature, FixedLenSequenceFeature)):
                raise ValueError(f"Unsupported feature for key {key}: {feature!r}")
            d, s = _dense_default(key, feature)
            defaults.append(d)
            shapes.append(s)
        attrs = {
            "num_sparse": len(sparse),
            "sparse_types": [_dtypes.as_dtype(f.dtype) for _, f in sparse],
            "ragged_value_types": [_dtypes.as_dtype(f.dtype) for _, f in ragged],
            "ragged_split_types": [_dtypes.as_dtype(f.row_splits_dtype) for _, f in ragged],
            "dense_shapes": shapes,
        }
        keys = (
            [k for k, _ in sparse] or _empty_strings(),
            [k for k, _ in dense] or _empty_strings(),
            [f.value_key or k for k, f in ragged] or _empty_strings(),
        )
        op = apply_op(
            "ParseExampleV2",
            [serialized, [] if names is None else names, *keys, defaults],
            attrs,
            name or "ParseExampleV2",
        )
    n = len(sparse)
    outs = op.outputs
    result: dict[str, Any] = {}
    for i, (key, _) in enumerate(sparse):
        result[key] = SparseTensor(outs[i], outs[n + i], outs[2 * n + i])
    for i, (key, _) in enumerate(dense):
        result[key] = outs[3 * n + i]
    first_ragged = 3 * n + len(dense)
    for i, (key, _) in enumerate(ragged):
        values, splits = outs[first_ragged + i], outs[first_ragged + len(ragged) + i]
        result[key] = values if single else RaggedTensor(values, splits)
    return result


def _empty_strings() -> Any:
    return np.zeros([0], dtype=object)


def parse_example(
    serialized: Any, features: dict, name: str | None = None, example_names: Any = None
) -> dict:
    """tf.io.parse_example: a batch (vector) of serialized Examples into a dict of dense
    Tensors and SparseTensors, keyed as `features`."""
    return _parse(serialized, features, example_names, name)


def parse_single_example(
    serialized: Any, features: dict, name: str | None = None, example_names: Any = None
) -> dict:
    """tf.io.parse_single_example: one serialized Example (a scalar)."""
    if not features:
        raise ValueError("Invalid argument: features cannot be empty.")
    with _ops.name_scope(name, "ParseSingleExample"):
        serialized = convert_to_tensor(serialized, name="serialized")
        if serialized.shape.ndims not in (None, 0):
            raise ValueError(f"Input serialized must be a scalar, got {serialized.shape}")
        return _parse(serialized, features, example_names, None, single=True)


def decode_raw(
    input_bytes: Any = None,
    out_type: Any = None,
    little_endian: bool = True,
    name: str | None = None,
    bytes: Any = None,  # noqa: A002  (tf.compat.v1.decode_raw's old keyword)
) -> _ops.Tensor:
    value = input_bytes if input_bytes is not None else bytes
    attrs = {"out_type": _dtypes.as_dtype(out_type), "little_endian": little_endian}
    return apply_op("DecodeRaw", [value], attrs, name).outputs[0]


def decode_csv(
    records: Any,
    record_defaults: Any,
    field_delim: str = ",",
    use_quote_delim: bool = True,
    name: str | None = None,
    na_value: str = "",
    select_cols: Any = None,
) -> list[_ops.Tensor]:
    defaults = list(record_defaults)
    attrs = {
        "OUT_TYPE": [_default_dtype(d) for d in defaults],
        "field_delim": field_delim,
        "use_quote_delim": use_quote_delim,
        "na_value": na_value,
        "select_cols": list(select_cols or []),
    }
    return list(apply_op("DecodeCSV", [records, defaults], attrs, name).outputs)


def _default_dtype(value: Any) -> Any:
    """The dtype a record default converts to (Python ints int32, floats float32), without
    adding a node: the op converts it under its own name ("DecodeCSV/record_defaults_0")."""
    if isinstance(value, _ops.Tensor):
        return value.dtype.base_dtype
    arr = np.asarray(value)
    if arr.dtype.kind in "USO":
        return _dtypes.string
    if arr.dtype == np.float64 and not isinstance(value, np.ndarray):
        return _dtypes.float32
    if arr.dtype == np.int64 and not isinstance(value, np.ndarray):
        return _dtypes.int32
    return _dtypes.as_dtype(arr.dtype)


# -- static shapes ------------------------------------------------------------------------------
@shape_fns._reg("ParseExampleV2")
def _parse_example_shape(op: Any) -> list[Any]:
    batch = op.inputs[0].shape
    rank = batch.ndims
    n = shape_fns._attr(op, "num_sparse")
    dense_shapes = [TensorShape(s) for s in shape_fns._attr(op, "dense_shapes")]
    ragged = len(shape_fns._attr(op, "ragged_value_types"))
    sparse_rank = None if rank is None else rank + 1
    out = [TensorShape([None, sparse_rank]) for _ in range(n)]
    out += [TensorShape([None]) for _ in range(n)]
    out += [TensorShape([sparse_rank]) for _ in range(n)]
    out += [batch.concatenate(s) if rank is not None else TensorShape(None) for s in dense_shapes]
    out += [TensorShape([None]) for _ in range(2 * ragged)]
    return out


@shape_fns._reg("DecodeRaw")
def _decode_raw_shape(op: Any) -> list[Any]:
    s = op.inputs[0].shape
    return [s.concatenate([None]) if s.ndims is not None else TensorShape(None)]


@shape_fns._reg("DecodeCSV")
def _decode_csv_shape(op: Any) -> list[Any]:
    return [op.inputs[0].shape] * len(op.outputs)


# -- SequenceExamples ----------------------------------------------------------------------------
def _sequence_parse(
    serialized: Any, context: dict, sequence: dict, names: Any, single: bool = False
) -> tuple:
    """The ParseSequenceExampleV2 node (under the caller's scope) and its outputs as dicts."""

    def split(features: dict) -> tuple[list, list, list]:
        items = sorted(features.items())
        ragged = [(k, f) for k, f in items if isinstance(f, RaggedFeature)]
        for key, feature in ragged:
            if feature.partitions:
                raise NotImplementedError(
                    f"RaggedFeature {key!r} with partitions (only flat rows are supported)"
                )
        return (
            [(k, f) for k, f in items if isinstance(f, VarLenFeature)],
            [(k, f) for k, f in items if not isinstance(f, (VarLenFeature, RaggedFeature))],
            ragged,
        )

    c_sparse, c_dense, c_ragged = split(context)
    f_sparse, f_dense, f_ragged = split(sequence)
    defaults, shapes = [], []
    for key, feature in c_dense:
        d, s = _dense_default(key, feature)
        defaults.append(d)
        shapes.append(s)
    empty = [bool(getattr(f, "allow_missing", False)) for _, f in f_dense]
    attrs = {
        "Ncontext_sparse": len(c_sparse),
        "context_sparse_types": [_dtypes.as_dtype(f.dtype) for _, f in c_sparse],
        "context_dense_shapes": shapes,
        "Nfeature_list_sparse": len(f_sparse),
        "Nfeature_list_dense": len(f_dense),
        "feature_list_sparse_types": [_dtypes.as_dtype(f.dtype) for _, f in f_sparse],
        "feature_list_dense_types": [_dtypes.as_dtype(f.dtype) for _, f in f_dense],
        "feature_list_dense_shapes": [TensorShape(f.shape) for _, f in f_dense],
        "context_ragged_value_types": [_dtypes.as_dtype(f.dtype) for _, f in c_ragged],
        "context_ragged_split_types": [_dtypes.as_dtype(f.row_splits_dtype) for _, f in c_ragged],
        "feature_list_ragged_value_types": [_dtypes.as_dtype(f.dtype) for _, f in f_ragged],
        "feature_list_ragged_split_types": [
            _dtypes.as_dtype(f.row_splits_dtype) for _, f in f_ragged
        ],
    }
    keys = [[getattr(f, "value_key", None) or k for k, f in part] or _empty_strings()
            for part in (c_sparse, c_dense, c_ragged, f_sparse, f_dense, f_ragged)]  # fmt: skip
    empty_flags = np.asarray(empty, dtype=bool)
    op = apply_op(
        "ParseSequenceExampleV2",
        [serialized, _empty_strings() if names is None else names, *keys, empty_flags, defaults],
        attrs,
        "ParseSequenceExampleV2",
    )
    outs = list(op.outputs)
    n = len(c_sparse)
    ctx: dict[str, Any] = {k: SparseTensor(outs[i], outs[n + i], outs[2 * n + i])
                           for i, (k, _) in enumerate(c_sparse)}  # fmt: skip
    pos = 3 * n
    for k, _ in c_dense:
        ctx[k] = outs[pos]
        pos += 1
    r = len(c_ragged)
    for i, (k, _) in enumerate(c_ragged):
        ctx[k] = outs[pos + i] if single else RaggedTensor(outs[pos + i], outs[pos + r + i])
    pos += 2 * r
    m = len(f_sparse)
    lists: dict[str, Any] = {
        k: SparseTensor(outs[pos + i], outs[pos + m + i], outs[pos + 2 * m + i])
        for i, (k, _) in enumerate(f_sparse)
    }
    pos += 3 * m
    lengths: dict[str, Any] = {}
    for i, (k, _) in enumerate(f_dense):
        lists[k] = outs[pos + i]
        lengths[k] = outs[pos + len(f_dense) + i]
    pos += 2 * len(f_dense)
    q = len(f_ragged)
    for i, (k, _) in enumerate(f_ragged):
        steps = RaggedTensor(outs[pos + i], outs[pos + 2 * q + i])
        lists[k] = steps if single else RaggedTensor(steps, outs[pos + q + i])
    return ctx, lists, lengths


def parse_sequence_example(serialized: Any, context_features: Any = None,
                           sequence_features: Any = None, example_names: Any = None,
                           name: str | None = None) -> tuple:  # fmt: skip
    """tf.io.parse_sequence_example: (context, feature_lists, lengths) dicts."""
    # TF nests two "ParseSequenceExample" scopes (the public function and the raw one).
    with (
        _ops.name_scope(name, "ParseSequenceExample"),
        _ops.name_scope(None, "ParseSequenceExample"),
    ):
        serialized = convert_to_tensor(serialized, name="serialized")
        return _sequence_parse(serialized, context_features or {}, sequence_features or {},
                               example_names)  # fmt: skip


def parse_single_sequence_example(serialized: Any, context_features: Any = None,
                                  sequence_features: Any = None, example_name: Any = None,
                                  name: str | None = None) -> tuple:  # fmt: skip
    """tf.io.parse_single_sequence_example: (context, feature_lists) of one example."""
    with _ops.name_scope(name, "ParseSingleSequenceExample"):
        with _ops.name_scope(None, "ParseSingleExample"):
            serialized = convert_to_tensor(serialized, name="serialized")
        with _ops.name_scope(None, "ParseSequenceExample"):
            ctx, lists, _ = _sequence_parse(serialized, context_features or {},
                                            sequence_features or {}, example_name,
                                            single=True)  # fmt: skip
    return ctx, lists
