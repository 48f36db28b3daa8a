"""Client, graph building: TF1's string ops (tf.string_join, tf.substr, tf.as_string,
tf.string_to_number, tf.string_to_hash_bucket_fast, tf.regex_replace, tf.string_split and
the tf.strings namespace) as TF's string_ops.py builds them: one op each, regexes given as
Python strings becoming the Static* ops' attributes, splits returning SparseTensors."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.sparse_tensor import SparseTensor


def _out(op: Any) -> Any:
    return op.outputs[0]


def string_join(inputs: Any, separator: str = "", name: str | None = None) -> Any:
    return _out(apply_op("StringJoin", [list(inputs)], {"separator": separator}, name))


def substr(input: Any, pos: Any, len: Any, name: str | None = None, unit: str = "BYTE") -> Any:  # noqa: A002 (TF's names)
    return _out(apply_op("Substr", [input, pos, len], {"unit": unit}, name))


def as_string(
    input: Any, precision: int = -1, scientific: bool = False, shortest: bool = False,  # noqa: A002
    width: int = -1, fill: str = "", name: str | None = None,
) -> Any:  # fmt: skip
    attrs = {"precision": precision, "scientific": scientific, "shortest": shortest,
             "width": width, "fill": fill}  # fmt: skip
    return _out(apply_op("AsString", [input], attrs, name))


def string_to_number(
    string_tensor: Any = None, out_type: Any = dtypes.float32, name: str | None = None,
    input: Any = None,  # noqa: A002
) -> Any:  # fmt: skip
    string_tensor = input if string_tensor is None else string_tensor
    return _out(apply_op("StringToNumber", [string_tensor], {"out_type": out_type}, name))


def string_to_hash_bucket_fast(input: Any, num_buckets: int, name: str | None = None) -> Any:  # noqa: A002
    return _out(apply_op("StringToHashBucketFast", [input], {"num_buckets": num_buckets}, name))


def string_to_hash_bucket_strong(
    input: Any,
    num_buckets: int,
    key: Any,
    name: str | None = None,  # noqa: A002
) -> Any:
    attrs = {"num_buckets": num_buckets, "key": list(key)}
    return _out(apply_op("StringToHashBucketStrong", [input], attrs, name))


def regex_replace(
    input: Any, pattern: Any, rewrite: Any, replace_global: bool = True,  # noqa: A002
    name: str | None = None,
) -> Any:  # fmt: skip
    """StaticRegexReplace when pattern and rewrite are Python strings, else RegexReplace."""
    if isinstance(pattern, (str, bytes)) and isinstance(rewrite, (str, bytes)):
        attrs = {"pattern": pattern, "rewrite": rewrite, "replace_global": replace_global}
        return _out(apply_op("StaticRegexReplace", [input], attrs, name))
    attrs = {"replace_global": replace_global}
    return _out(apply_op("RegexReplace", [input, pattern, rewrite], attrs, name))


def regex_full_match(input: Any, pattern: Any, name: str | None = None) -> Any:  # noqa: A002
    if isinstance(pattern, (str, bytes)):
        return _out(apply_op("StaticRegexFullMatch", [input], {"pattern": pattern}, name))
    return _out(apply_op("RegexFullMatch", [input, pattern], {}, name))


def string_length(input: Any, name: str | None = None, unit: str = "BYTE") -> Any:  # noqa: A002
    return _out(apply_op("StringLength", [input], {"unit": unit}, name))


def strip(input: Any, name: str | None = None) -> Any:  # noqa: A002
    return _out(apply_op("StringStrip", [input], {}, name))


def upper(input: Any, encoding: str = "", name: str | None = None) -> Any:  # noqa: A002
    """tf.strings.upper: one StringUpper op (encoding "" is ASCII, "utf-8" Unicode)."""
    return _out(apply_op("StringUpper", [input], {"encoding": encoding}, name))


def lower(input: Any, encoding: str = "", name: str | None = None) -> Any:  # noqa: A002
    """tf.strings.lower: one StringLower op."""
    return _out(apply_op("StringLower", [input], {"encoding": encoding}, name))


def _sparse(op: Any) -> SparseTensor:
    indices, values, shape = op.outputs
    indices.set_shape([None, 2])
    values.set_shape([None])
    shape.set_shape([2])
    return SparseTensor(indices, values, shape)


def string_split(
    source: Any, sep: Any = None, skip_empty: bool = True, delimiter: Any = None,
    result_type: str = "SparseTensor", name: str | None = None,
) -> SparseTensor:  # fmt: skip
    """tf.compat.v1.string_split: each string split at any of the delimiter's characters
    (default " "), empty tokens skipped, as a SparseTensor [batch, max tokens]."""
    if result_type != "SparseTensor":
        raise ValueError(f"string_split: result_type {result_type!r} is not built by this client")
    with _ops.name_scope(name, "StringSplit", [source]):
        delimiter = sep if delimiter is None else delimiter
        delimiter = convert_to_tensor(" " if delimiter is None else delimiter, dtype=dtypes.string)
        source = convert_to_tensor(source, dtype=dtypes.string)
        attrs = {"skip_empty": skip_empty}
        return _sparse(apply_op("StringSplit", [source, delimiter], attrs))


def strings_split(
    input: Any = None, sep: Any = None, maxsplit: int = -1,  # noqa: A002
    result_type: str = "SparseTensor", source: Any = None, name: str | None = None,
) -> Any:  # fmt: skip
    """tf.compat.v1.strings.split: split at `sep` (runs of whitespace when None), at most
    `maxsplit` times, as a SparseTensor or (result_type="RaggedTensor") ragged rows."""
    if result_type not in ("SparseTensor", "RaggedTensor"):
        raise ValueError("result_type must be 'RaggedTensor' or 'SparseTensor'.")
    source = input if source is None else source
    with _ops.name_scope(name, "StringSplit", [source]):
        sep = convert_to_tensor("" if sep is None else sep, dtype=dtypes.string)
        source = convert_to_tensor(source, dtype=dtypes.string)
        sp = _sparse(apply_op("StringSplitV2", [source, sep], {"maxsplit": maxsplit}))
        if result_type == "SparseTensor":
            return sp
        from client.ops import ragged_ops  # ragged_ops builds on modules importing this one

        return ragged_ops.sparse_to_ragged(sp)


# -- static shapes ------------------------------------------------------------------------------
@shape_fns._reg(
    "AsString",
    "StringToHashBucket",
    "StringToHashBucketFast",
    "StringToHashBucketStrong",
    "StaticRegexReplace",
    "RegexReplace",
)
def _unchanged_shape(op: Any) -> list[Any]:
    return [op.inputs[0].shape]  # TF's UnchangedShape
