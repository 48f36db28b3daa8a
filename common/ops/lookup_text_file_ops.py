"""Ops (executor stage): InitializeTableFromTextFileV2 — a lookup table initialized from
a vocabulary file, one entry a line (TensorFlow's lookup_util.cc TextFileLineIterator).

A key or value is a column of the line split at `delimiter` (index >= 0), the whole line
(-2) or the line number plus `offset` (-1); int32 columns get `offset` added too, as
TensorFlow's iterator does. vocab_size -1 reads every line; otherwise exactly that many
(a shorter file is an error, a longer one is cut). A table already initialized is left
as it is. The file is read through common.file_access (the process's --file-root).
Thread-safe: the table guards its entries.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common import dtypes, file_access
from common.dtypes import DataType
from common.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from common.ops import math_util as mu
from common.ops.lookup_ops import table_of
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op

LINE_NUMBER, WHOLE_LINE = -1, -2

register_op(
    "InitializeTableFromTextFileV2",
    inputs=["table_handle: resource", "filename: string"],
    attrs=[
        "key_index: int >= -2",
        "value_index: int >= -2",
        "vocab_size: int >= -1 = -1",
        "delimiter: string = '\t'",  # a tab, as TF's default
        "offset: int = 0",
    ],
    stateful=True,
)

_INTEGERS = {
    DataType.DT_INT8, DataType.DT_INT16, DataType.DT_INT32, DataType.DT_INT64,
    DataType.DT_UINT8, DataType.DT_UINT16, DataType.DT_UINT32, DataType.DT_UINT64,
}  # fmt: skip


def _check_indices(key_index: int, value_index: int, key: DataType, value: DataType) -> None:
    def name(t: DataType) -> str:
        return dtypes.tf_name(t)

    if key_index == LINE_NUMBER and key != DataType.DT_INT64:
        raise InvalidArgumentError(
            f"Key index for line number requires table key dtype of int64, got {name(key)}"
        )
    if key_index == WHOLE_LINE and key not in _INTEGERS and key != DataType.DT_STRING:
        raise InvalidArgumentError(
            f"Key index for whole line requires string or integer table key, got {name(key)}"
        )
    if value_index == LINE_NUMBER and value != DataType.DT_INT64:
        raise InvalidArgumentError(
            f"Value index for line number requires table value dtype of int64, got {name(value)}"
        )
    if value_index == WHOLE_LINE and value not in _INTEGERS and value != DataType.DT_STRING:
        raise InvalidArgumentError(
            "Value index for whole line requires table value dtype of integer or string, "
            f"got {name(value)}"
        )


_PARSERS: dict[DataType, tuple[str, Callable[[str], object]]] = {
    DataType.DT_INT32: ("int32", int),
    DataType.DT_INT64: ("int64", int),
    DataType.DT_FLOAT: ("float", float),
    DataType.DT_DOUBLE: ("double", float),
}


def _field(token: bytes, line_no: int, dt: DataType, offset: int) -> object:
    if dt == DataType.DT_STRING:
        return token
    if dt not in _PARSERS:
        raise InvalidArgumentError(f"Data type {dtypes.tf_name(dt)} not supported.")
    what, parse = _PARSERS[dt]
    text = token.decode(errors="replace")
    try:
        value = parse(text.strip() if dt in (DataType.DT_FLOAT, DataType.DT_DOUBLE) else text)
    except ValueError:
        raise InvalidArgumentError(
            f"Field {text} in line {line_no} is not a valid {what}."
        ) from None
    if dt == DataType.DT_INT32:
        if not -(2**31) <= int(value) < 2**31:  # type: ignore[call-overload]
            raise InvalidArgumentError(f"Field {text} in line {line_no} is not a valid int32.")
        return int(value) + offset  # type: ignore[call-overload]
    return value


def read_vocabulary(path: str, key_index: int, value_index: int, vocab_size: int,
                    delimiter: bytes, offset: int, key_dt: DataType,
                    value_dt: DataType) -> tuple[list, list]:  # fmt: skip
    """The (keys, values) of a vocabulary file, as TextFileLineIterator reads them."""
    try:
        with open(file_access.resolve(path), "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise NotFoundError(f"{path}; No such file or directory") from None
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the newline ending the last line
    keys: list = []
    values: list = []
    position = 0
    for line_no, raw in enumerate(lines):
        position += len(raw) + 1
        if vocab_size != -1 and line_no >= vocab_size:
            break
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if not line:
            raise InvalidArgumentError(
                f"Invalid content in {path}: empty line found at position {position}."
            )
        tokens: list[bytes] = []
        if max(key_index, value_index) >= 0:
            tokens = line.split(delimiter)
            need = max(key_index, value_index) + 1
            if len(tokens) < need:
                raise InvalidArgumentError(
                    f"Invalid number of columns in {path} line {line_no} "
                    f"({line.decode(errors='replace')}) : expected at least {need} got "
                    f"{len(tokens)}"
                )
        for index, dt, out in ((key_index, key_dt, keys), (value_index, value_dt, values)):
            if index == LINE_NUMBER:
                out.append(line_no + offset)
            else:
                out.append(_field(line if index == WHOLE_LINE else tokens[index], line_no,
                                  dt, offset))  # fmt: skip
    if vocab_size != -1 and len(lines) < vocab_size:
        raise InvalidArgumentError(
            f"Invalid vocab_size in {path}: expected {vocab_size} but got {len(lines)}"
        )
    return keys, values


@register_kernel("InitializeTableFromTextFileV2")
def _initialize_from_text_file(k: KernelConstruction) -> Callable:
    delimiter = k.attr("delimiter")
    if len(delimiter) != 1:
        raise InvalidArgumentError("delimiter should be only 1 char", k.node_name)
    key_index, value_index = k.attr("key_index"), k.attr("value_index")

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        table = table_of(ctx, inputs[0])
        filename = np.asarray(inputs[1])
        if filename.ndim != 0:
            raise InvalidArgumentError(
                f"filename should be a single string, but got {mu.shape_str(filename.shape)}"
            )
        if table.mutable:
            h = inputs[0].item() if isinstance(inputs[0], np.ndarray) else inputs[0]
            raise InvalidArgumentError(f"Table {h.container} {h.name} is not initializable")
        _check_indices(key_index, value_index, table.key_dtype, table.value_dtype)
        path = filename.item()
        path = path.decode() if isinstance(path, bytes) else str(path)
        keys, values = read_vocabulary(path, key_index, value_index, k.attr("vocab_size"),
                                       delimiter.encode(), k.attr("offset"),
                                       table.key_dtype, table.value_dtype)  # fmt: skip
        key_arr = np.array(keys, dtype=mu.np_type(table.key_dtype)).reshape(len(keys))
        value_arr = np.array(values, dtype=mu.np_type(table.value_dtype)).reshape(len(values))
        try:
            table.initialize(key_arr, value_arr)
        except FailedPreconditionError:
            if not table._initialized:  # TF ignores only "already initialized"
                raise
        return []

    return compute
