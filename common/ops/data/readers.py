"""Ops (executor stage), tf.data file sources: TFRecordDataset(V2), TextLineDataset,
FixedLengthRecordDataset(V2) (TensorFlow's core/kernels/data/tf_record_dataset_op.cc,
text_line_dataset_op.cc, fixed_length_record_dataset_op.cc).

Each element is one scalar string: a record, a line (without "\\n" or a "\\r" before it),
a fixed-length record. Files are read in the order given, one open at a time, from the
filesystem of the process the iterator runs in (for a cluster: the task the dataset's
iterator is placed on); compressed files ("ZLIB", "GZIP") are inflated as streamed
(common.record_io). Iterators are used under their own lock (DatasetIterator).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import numpy as np

from common import record_io
from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops.data.base import (
    Dataset,
    DatasetFn,
    DatasetIterator,
    Element,
    IteratorContext,
    dataset_kernel,
    scalar_arg,
)
from common.ops.registry import KernelConstruction, OpKernelContext, register_op

_METADATA = "metadata: string = ''"
_FILE_ARGS = ["filenames: string", "compression_type: string", "buffer_size: int64"]
register_op("TFRecordDataset", inputs=_FILE_ARGS, outputs=["handle: variant"],
            attrs=[_METADATA], stateful=True)  # fmt: skip
register_op("TFRecordDatasetV2", inputs=[*_FILE_ARGS, "byte_offsets: int64"],
            outputs=["handle: variant"], attrs=[_METADATA], stateful=True)  # fmt: skip
register_op("TextLineDataset", inputs=_FILE_ARGS, outputs=["handle: variant"],
            attrs=[_METADATA], stateful=True)  # fmt: skip
_FIXED_ARGS = ["filenames: string", "header_bytes: int64", "record_bytes: int64",
               "footer_bytes: int64", "buffer_size: int64"]  # fmt: skip
register_op("FixedLengthRecordDataset", inputs=_FIXED_ARGS, outputs=["handle: variant"],
            attrs=[_METADATA], stateful=True)  # fmt: skip
register_op("FixedLengthRecordDatasetV2", inputs=[*_FIXED_ARGS, "compression_type: string"],
            outputs=["handle: variant"], attrs=[_METADATA], stateful=True)  # fmt: skip

Records = Callable[[str], Iterator[bytes]]  # one file's elements


def filenames_arg(value: np.ndarray, node: str) -> list[str]:
    arr = np.asarray(value, dtype=object)
    if arr.ndim > 1:
        raise InvalidArgumentError("`filenames` must be a scalar or a vector.", node)
    return [os.fsdecode(v) for v in arr.reshape(-1)]


def _string_arg(value: np.ndarray, name: str, node: str) -> str:
    v = scalar_arg(value, name, node)
    return v.decode() if isinstance(v, bytes) else str(v)


class FileDataset(Dataset):
    """The elements of each file in turn; `records(path)` yields one file's."""

    def __init__(self, filenames: list[str], records: Records) -> None:
        super().__init__([DataType.DT_STRING], [()])
        self.filenames = filenames
        self.records = records

    def make_iterator(self) -> DatasetIterator:
        return _FileIterator(self)


class _FileIterator(DatasetIterator):
    def __init__(self, ds: FileDataset) -> None:
        super().__init__()
        self.ds = ds
        self.index = 0
        self.current: Iterator[bytes] | None = None

    def _next(self, ctx: IteratorContext) -> Element | None:
        while self.index < len(self.ds.filenames):
            if self.current is None:
                self.current = self.ds.records(self.ds.filenames[self.index])
            record = next(self.current, None)
            if record is not None:
                return [np.array(record, dtype=object)]
            self.current = None
            self.index += 1
        return None


def _tf_records(compression: str) -> Records:
    def records(path: str) -> Iterator[bytes]:
        reader = record_io.RecordReader(path, compression)
        try:
            yield from reader
        finally:
            reader.close()

    return records


def _lines(compression: str) -> Records:
    def lines(path: str) -> Iterator[bytes]:
        stream = record_io.InputStream(record_io.open_file(path), compression)
        try:
            while (line := stream.readline()) is not None:
                yield line[:-1] if line.endswith(b"\r") else line
        finally:
            stream.close()

    return lines


def _fixed_length(header: int, size: int, footer: int, compression: str, node: str) -> Records:
    def records(path: str) -> Iterator[bytes]:
        stream = record_io.InputStream(record_io.open_file(path), compression)
        try:
            stream.read(header)
            data = b""
            while True:
                data += stream.read(size + footer + 1 - len(data))
                if len(data) <= footer:
                    break
                if len(data) < size + footer:
                    body = len(data) - footer
                    raise InvalidArgumentError(
                        f"Excluding the header ({header} bytes) and footer ({footer} bytes), "
                        f"input file \"{path}\" has body length {body}, which is not an exact "
                        f"multiple of the record length ({size} bytes).", node
                    )  # fmt: skip
                yield data[:size]
                data = data[size:]
        finally:
            stream.close()

    return records


def _compression(value: np.ndarray, node: str) -> str:
    compression = _string_arg(value, "compression_type", node)
    if compression not in record_io.COMPRESSIONS:
        raise InvalidArgumentError(f"Unsupported compression_type: {compression}.", node)
    return compression


def _file_source(op: str, make_records: Callable[[str], Records]) -> None:
    @dataset_kernel(op)
    def factory(k: KernelConstruction) -> DatasetFn:
        def make(ctx: OpKernelContext, inputs: list) -> Dataset:
            names = filenames_arg(inputs[0], k.node_name)
            if len(inputs) > 3 and np.asarray(inputs[3]).size:
                raise InvalidArgumentError("byte_offsets are not supported", k.node_name)
            return FileDataset(names, make_records(_compression(inputs[1], k.node_name)))

        return make

    factory.__qualname__ = factory.__name__ = f"_{op}"


_file_source("TFRecordDataset", _tf_records)
_file_source("TFRecordDatasetV2", _tf_records)
_file_source("TextLineDataset", _lines)


def _fixed_length_source(op: str) -> None:
    @dataset_kernel(op)
    def factory(k: KernelConstruction) -> DatasetFn:
        def make(ctx: OpKernelContext, inputs: list) -> Dataset:
            node = k.node_name
            names = filenames_arg(inputs[0], node)
            header, size, footer = (int(scalar_arg(v, n, node)) for v, n in zip(
                inputs[1:4], ("header_bytes", "record_bytes", "footer_bytes")))  # fmt: skip
            if header < 0 or footer < 0:
                raise InvalidArgumentError("header_bytes and footer_bytes must be >= 0", node)
            if size <= 0:
                raise InvalidArgumentError("record_bytes must be > 0", node)
            compression = _compression(inputs[5], node) if len(inputs) > 5 else ""
            return FileDataset(names, _fixed_length(header, size, footer, compression, node))

        return make

    factory.__qualname__ = factory.__name__ = f"_{op}"


_fixed_length_source("FixedLengthRecordDataset")
_fixed_length_source("FixedLengthRecordDatasetV2")
