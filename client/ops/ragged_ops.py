"""Client, graph building: the string APIs returning RaggedTensors (the class, its
factories and views are client/framework/ragged_tensor.py):
tf.strings.unicode_decode(_with_offsets), unicode_split, unicode_encode, bytes_split and
strings.split(result_type="RaggedTensor").

Inputs of rank 0 and 1 only for the string APIs (TF's higher ranks add uniform row
partitions this client does not build). TF registers no gradient for the unicode ops;
to_tensor's (RaggedTensorToTensor's) is client/ops/gradients/ragged_grad.py."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.framework.ragged_tensor import RaggedTensor, from_value_rowids
from client.framework.sparse_tensor import SparseTensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, math_ops

_DECODE_DEFAULTS = {"errors": "replace", "replacement_char": 65533}


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
        return from_value_rowids(values, indices[:, 0], nrows=shape[0], validate=False)


def sparse_to_ragged(sp: SparseTensor) -> RaggedTensor:
    """A 2-D SparseTensor whose rows are left-aligned (as StringSplit's) as ragged rows."""
    return from_value_rowids(sp.values, sp.indices[:, 0], nrows=sp.dense_shape[0], validate=False)


shape_fns.SHAPE_FNS["UnicodeDecode"] = lambda op: [TensorShape([None])] * 2
shape_fns.SHAPE_FNS["UnicodeDecodeWithOffsets"] = lambda op: [TensorShape([None])] * 3
shape_fns.SHAPE_FNS["UnicodeEncode"] = lambda op: [TensorShape([None])]


def _to_tensor_shape(op: Any) -> list[TensorShape]:
    """Rank 1 + ragged_rank + the values' inner rank; the sizes come from the values."""
    types = op.get_attr("row_partition_types")
    ragged_rank = sum(1 for t in types if t not in ("FIRST_DIM_SIZE", b"FIRST_DIM_SIZE"))
    values = op.inputs[1].shape
    if values.ndims is None:
        return [TensorShape(None)]
    return [TensorShape([None] * (1 + ragged_rank)).concatenate(values[1:])]


shape_fns.SHAPE_FNS["RaggedTensorToTensor"] = _to_tensor_shape
shape_fns.SHAPE_FNS["RaggedTensorToSparse"] = lambda op: [
    TensorShape([None, None]),
    TensorShape([None]),
    TensorShape([None]),
]
