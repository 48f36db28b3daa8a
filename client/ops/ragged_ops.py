"""Client, graph building: what TF1 programs do with RaggedTensors, kept small: building
one from value_rowids or row_lengths, to_tensor / to_sparse (RaggedTensorToTensor /
RaggedTensorToSparse, as TF's ragged_tensor.py emits them), nrows / row_lengths, and the
string APIs returning one: tf.strings.unicode_decode(_with_offsets), unicode_split,
unicode_encode, bytes_split and strings.split(result_type="RaggedTensor").

Inputs of rank 0 and 1 only for the string APIs (TF's higher ranks add uniform row
partitions this client does not build). TF registers no gradient for the unicode ops;
to_tensor's gradient (RaggedTensorToTensor's) is not built here either."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.framework.ragged_tensor import RaggedTensor
from client.framework.sparse_tensor import SparseTensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, bincount_ops, math_ops

_DECODE_DEFAULTS = {"errors": "replace", "replacement_char": 65533}


# -- RaggedTensor factories and views ------------------------------------------------------
def row_splits_from_row_lengths(row_lengths: Any) -> Any:
    """[0, cumsum(row_lengths)...] as int64 (TF's RowPartition.from_row_lengths)."""
    lengths = math_ops.cast(convert_to_tensor(row_lengths, name="row_lengths"), dtypes.int64)
    zero = constant([0], dtype=dtypes.int64)
    return array_ops.concat([zero, math_ops.cumsum(lengths)], axis=0)


def from_value_rowids(
    values: Any, value_rowids: Any, nrows: Any = None, name: str | None = None
) -> RaggedTensor:
    """Row i holds the values whose row id is i (ids sorted), nrows defaulting to the
    largest id + 1; splits from a bincount of the ids, as TF's RowPartition builds them."""
    with _ops.name_scope(name, "RaggedFromValueRowIds", [values, value_rowids, nrows]):
        rowids = math_ops.cast(convert_to_tensor(value_rowids, name="value_rowids"), dtypes.int64)
        if nrows is None:
            nrows = math_ops.reduce_max(rowids) + 1
        nrows = math_ops.cast(convert_to_tensor(nrows, name="nrows"), dtypes.int64)
        counts = bincount_ops.bincount(rowids, minlength=nrows, maxlength=nrows, dtype=dtypes.int64)
        return RaggedTensor(values, row_splits_from_row_lengths(counts))


def from_row_lengths(values: Any, row_lengths: Any, name: str | None = None) -> RaggedTensor:
    with _ops.name_scope(name, "RaggedFromRowLengths", [values, row_lengths]):
        return RaggedTensor(values, row_splits_from_row_lengths(row_lengths))


def nested_row_splits(rt: RaggedTensor) -> list[Any]:
    out = [rt.row_splits]
    values = rt.values
    while isinstance(values, RaggedTensor):
        out.append(values.row_splits)
        values = values.values
    return out


def nrows(rt: RaggedTensor, out_type: Any = dtypes.int64, name: str | None = None) -> Any:
    with _ops.name_scope(name, "RaggedNRows", [rt.row_splits]):
        n = array_ops.shape(rt.row_splits, out_type=out_type)[0]
        return n - 1


def row_lengths(rt: RaggedTensor, name: str | None = None) -> Any:
    with _ops.name_scope(name, "RaggedRowLengths", [rt.row_splits]):
        splits = rt.row_splits
        return splits[1:] - splits[:-1]


def to_tensor(
    rt: RaggedTensor, default_value: Any = None, name: str | None = None, shape: Any = None
) -> Any:
    """RaggedTensorToTensor: rows padded with default_value (zeros when None) to the
    longest row, or cut/padded to `shape` where it gives a dimension."""
    with _ops.name_scope(name, "RaggedToTensor", [rt.flat_values, default_value]):
        flat = rt.flat_values
        if default_value is None:
            default = array_ops.zeros([], dtype=flat.dtype)
        else:
            default = convert_to_tensor(default_value, dtype=flat.dtype, name="default_value")
        if shape is None:
            shape_t = constant(-1, dtype=dtypes.int64)
        else:
            dims = [-1 if d is None else d for d in TensorShape(shape).as_list()]
            shape_t = constant(dims, dtype=dtypes.int64)
        splits = nested_row_splits(rt)
        attrs = {"row_partition_types": ["ROW_SPLITS"] * len(splits)}
        out = apply_op("RaggedTensorToTensor", [shape_t, flat, default, splits], attrs).outputs[0]
        rank = 1 + len(splits) + (flat.shape.ndims - 1 if flat.shape.ndims is not None else 0)
        out.set_shape([None] * rank if flat.shape.ndims is not None else None)
        return out


def to_sparse(rt: RaggedTensor, name: str | None = None) -> SparseTensor:
    with _ops.name_scope(name, "RaggedToSparse", [rt.flat_values]):
        splits = nested_row_splits(rt)
        indices, values, shape = apply_op(
            "RaggedTensorToSparse", [splits, rt.flat_values], {}
        ).outputs
        return SparseTensor(indices, values, shape)


# -- strings ----------------------------------------------------------------------------
def _flat_strings(input: Any) -> tuple[Any, int]:  # noqa: A002 (TF's name)
    input = convert_to_tensor(input, dtype=dtypes.string, name="input")
    ndims = input.shape.ndims
    if ndims is None:
        raise ValueError("Rank of `input` must be statically known.")  # TF's words
    if ndims > 1:
        raise ValueError(
            f"This client decodes strings of rank 0 or 1, got shape {input.shape} "
            "(TF's higher ranks add uniform row partitions)"
        )
    return array_ops.reshape(input, [-1]), ndims


def _decode(
    op: str, input: Any, input_encoding: str, errors: str, replacement_char: int,  # noqa: A002
    replace_control_characters: bool, name: str | None, scope: str,
) -> tuple[list[Any], int]:  # fmt: skip
    with _ops.name_scope(name, scope, [input]):
        flat, ndims = _flat_strings(input)
        attrs = {
            "input_encoding": input_encoding,
            "errors": errors,
            "replacement_char": replacement_char,
            "replace_control_characters": replace_control_characters,
        }
        return list(apply_op(op, [flat], attrs).outputs), ndims


def unicode_decode(
    input: Any, input_encoding: str, errors: str = "replace",  # noqa: A002
    replacement_char: int = 65533, replace_control_characters: bool = False,
    name: str | None = None,
) -> Any:  # fmt: skip
    """Code points per string: a RaggedTensor for a vector, a vector for a scalar."""
    (splits, chars), ndims = _decode(
        "UnicodeDecode", input, input_encoding, errors, replacement_char,
        replace_control_characters, name, "UnicodeDecode",
    )  # fmt: skip
    return chars if ndims == 0 else RaggedTensor(chars, splits)


def unicode_decode_with_offsets(
    input: Any, input_encoding: str, errors: str = "replace",  # noqa: A002
    replacement_char: int = 65533, replace_control_characters: bool = False,
    name: str | None = None,
) -> tuple[Any, Any]:  # fmt: skip
    """(code points, the byte offset where each starts), ragged as unicode_decode."""
    (splits, chars, starts), ndims = _decode(
        "UnicodeDecodeWithOffsets", input, input_encoding, errors, replacement_char,
        replace_control_characters, name, "UnicodeDecodeWithOffsets",
    )  # fmt: skip
    if ndims == 0:
        return chars, starts
    return RaggedTensor(chars, splits), RaggedTensor(starts, splits)


def _encode_each(chars: Any, encoding: str, errors: str, replacement_char: int) -> Any:
    """Each code point as its own string (UnicodeEncode with one-element rows)."""
    n = math_ops.cast(array_ops.size(chars), dtypes.int64)
    splits = math_ops.range(0, n + 1, dtype=dtypes.int64)
    attrs = {"output_encoding": encoding, "errors": errors, "replacement_char": replacement_char}
    return apply_op("UnicodeEncode", [chars, splits], attrs).outputs[0]


def unicode_split(
    input: Any, input_encoding: str, errors: str = "replace",  # noqa: A002
    replacement_char: int = 65533, name: str | None = None,
) -> Any:  # fmt: skip
    """Each string as its characters (strings), ragged as unicode_decode."""
    with _ops.name_scope(name, "UnicodeSplit", [input]):
        (splits, chars), ndims = _decode(
            "UnicodeDecode", input, input_encoding, errors, replacement_char, False, None,
            "UnicodeDecode",
        )  # fmt: skip
        encoding = input_encoding if input_encoding in _ENCODINGS else "UTF-8"
        pieces = _encode_each(chars, encoding, errors, replacement_char)
        return pieces if ndims == 0 else RaggedTensor(pieces, splits)


_ENCODINGS = ("UTF-8", "UTF-16-BE", "UTF-32-BE")


def unicode_encode(
    input: Any, output_encoding: str, errors: str = "replace",  # noqa: A002
    replacement_char: int = 65533, name: str | None = None,
) -> Any:  # fmt: skip
    """Rows of code points to strings: a RaggedTensor of rank 2, or a vector to a scalar."""
    with _ops.name_scope(name, "UnicodeEncode", [input]):
        attrs = {
            "output_encoding": output_encoding,
            "errors": errors,
            "replacement_char": replacement_char,
        }
        if isinstance(input, RaggedTensor):
            if isinstance(input.values, RaggedTensor):
                raise ValueError("This client encodes RaggedTensors of ragged_rank 1 only")
            args = [input.values, input.row_splits]
            return apply_op("UnicodeEncode", args, attrs).outputs[0]
        chars = convert_to_tensor(input, dtype=dtypes.int32, name="input")
        if chars.shape.ndims != 1:
            raise ValueError("This client encodes a RaggedTensor or a vector of code points")
        n = math_ops.cast(array_ops.size(chars), dtypes.int64)
        splits = array_ops.stack([constant(0, dtype=dtypes.int64), n])
        return array_ops.reshape(apply_op("UnicodeEncode", [chars, splits], attrs).outputs[0], [])


def bytes_split(input: Any, name: str | None = None) -> Any:  # noqa: A002
    """Each string as its bytes: StringSplit with an empty delimiter, rows by batch index."""
    with _ops.name_scope(name, "StringsByteSplit", [input]):
        flat, ndims = _flat_strings(input)
        delimiter = constant("", dtype=dtypes.string)
        indices, values, shape = apply_op(
            "StringSplit", [flat, delimiter], {"skip_empty": False}
        ).outputs
        if ndims == 0:
            return values
        return from_value_rowids(values, indices[:, 0], nrows=shape[0])


def sparse_to_ragged(sp: SparseTensor) -> RaggedTensor:
    """A 2-D SparseTensor whose rows are left-aligned (as StringSplit's) as ragged rows."""
    return from_value_rowids(sp.values, sp.indices[:, 0], nrows=sp.dense_shape[0])


shape_fns.SHAPE_FNS["UnicodeDecode"] = lambda op: [TensorShape([None])] * 2
shape_fns.SHAPE_FNS["UnicodeDecodeWithOffsets"] = lambda op: [TensorShape([None])] * 3
shape_fns.SHAPE_FNS["UnicodeEncode"] = lambda op: [TensorShape([None])]
shape_fns.SHAPE_FNS["RaggedTensorToSparse"] = lambda op: [
    TensorShape([None, None]),
    TensorShape([None]),
    TensorShape([None]),
]
