"""Client: tf.io.TFRecordWriter, TFRecordOptions, tf_record_iterator (tf.python_io in
TensorFlow 1): TFRecord files of the client's filesystem, written and read by
common.record_io in TensorFlow's format (readable by TensorFlow and by TFRecordDataset on
any task). A writer is used by one thread at a time."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from common import record_io


class TFRecordCompressionType:
    NONE = 0
    ZLIB = 1
    GZIP = 2


_NAMES = {0: "", 1: "ZLIB", 2: "GZIP", None: ""}


class TFRecordOptions:
    """How a TFRecord file is compressed: "", "ZLIB" or "GZIP" (compression levels and
    buffer sizes are accepted and not used: zlib's defaults, as TensorFlow's)."""

    compression_type_map = {
        TFRecordCompressionType.ZLIB: "ZLIB",
        TFRecordCompressionType.GZIP: "GZIP",
        TFRecordCompressionType.NONE: "",
    }

    def __init__(self, compression_type: Any = None, **unused: Any) -> None:
        self.compression_type = compression_type

    @classmethod
    def get_compression_type_string(cls, options: Any) -> str:
        if options is None:
            return ""
        if isinstance(options, TFRecordOptions):
            options = options.compression_type
        if isinstance(options, str) or options is None:
            return options or ""
        return _NAMES[options]


def _compression(options: Any) -> str:
    name = TFRecordOptions.get_compression_type_string(options)
    if name not in record_io.COMPRESSIONS:
        raise ValueError(f"Unsupported compression type: {name}")
    return name


class TFRecordWriter:
    """tf.io.TFRecordWriter: write(record) appends one record; close() (or leaving the
    `with` block) finishes the file."""

    def __init__(self, path: Any, options: Any = None) -> None:
        self._writer = record_io.RecordWriter(os.fspath(path), _compression(options))

    def write(self, record: Any) -> None:
        self._writer.write(record.encode() if isinstance(record, str) else bytes(record))

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def tf_record_iterator(path: Any, options: Any = None) -> Iterator[bytes]:
    """The records of a TFRecord file, in order (DataLossError on a corrupt one)."""
    reader = record_io.RecordReader(os.fspath(path), _compression(options))
    try:
        yield from reader
    finally:
        reader.close()
