"""Client, tf.data file sources: TFRecordDataset, TextLineDataset, FixedLengthRecordDataset
as tf.compat.v1 builds them: the file names flattened ("flat_filenames"), sliced
(TensorSliceDataset with is_files) and flat-mapped through a traced `read_one_file` whose
body is the reader dataset op (TFRecordDataset, TextLineDataset, FixedLengthRecordDatasetV2)
with its argument Consts named as TensorFlow names them. Graph building; not thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.data.dataset_ops import Dataset, _variant_op
from client.data.structure import TensorSpec
from client.framework import dtypes as _dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape

_DEFAULT_BUFFER = 256 * 1024  # TextLine / FixedLength readers' buffer_size when not given
_STRING = TensorSpec([], _dtypes.string)


def _files_dataset(
    filenames: Any, read_one_file: Callable[[Any], Dataset]
) -> tuple[_ops.Tensor, Any]:
    names = convert_to_tensor(filenames, dtype=_dtypes.string)
    flat = apply_op("Reshape", [names, [-1]], {}, "flat_filenames").outputs[0]
    attrs = {"output_shapes": [TensorShape([])], "is_files": True}
    files = Dataset(_variant_op("TensorSliceDataset", [[flat]], attrs), _STRING)
    out = files.flat_map(read_one_file)
    return out._variant_tensor, out.element_spec


def _string(value: Any, name: str) -> _ops.Tensor:
    return convert_to_tensor("" if value is None else value, dtype=_dtypes.string, name=name)


def _int64(value: Any, name: str) -> _ops.Tensor:
    return convert_to_tensor(value, dtype=_dtypes.int64, name=name)


def _reader(op_type: str, inputs: list[Any]) -> Dataset:
    return Dataset(_variant_op(op_type, inputs, {}), _STRING)


class TFRecordDataset(Dataset):
    """The records of TFRecord files (tf.compat.v1.data.TFRecordDataset)."""

    def __init__(
        self,
        filenames: Any,
        compression_type: Any = None,
        buffer_size: Any = None,
        num_parallel_reads: Any = None,
        name: str | None = None,
    ) -> None:
        def read_one_file(filename: Any) -> Dataset:
            return _reader("TFRecordDataset", [
                filename,
                _string(compression_type, "compression_type"),
                _int64(-1 if buffer_size is None else buffer_size, "buffer_size"),
            ])  # fmt: skip

        super().__init__(*_files_dataset(filenames, read_one_file))


class TextLineDataset(Dataset):
    """The lines of text files (tf.compat.v1.data.TextLineDataset)."""

    def __init__(
        self,
        filenames: Any,
        compression_type: Any = None,
        buffer_size: Any = None,
        num_parallel_reads: Any = None,
        name: str | None = None,
    ) -> None:
        def read_one_file(filename: Any) -> Dataset:
            return _reader("TextLineDataset", [
                filename,
                _string(compression_type, "compression_type"),
                _int64(_DEFAULT_BUFFER if buffer_size is None else buffer_size, "buffer_size"),
            ])  # fmt: skip

        super().__init__(*_files_dataset(filenames, read_one_file))


class FixedLengthRecordDataset(Dataset):
    """Fixed-length records of binary files (tf.compat.v1.data.FixedLengthRecordDataset)."""

    def __init__(
        self,
        filenames: Any,
        record_bytes: Any,
        header_bytes: Any = None,
        footer_bytes: Any = None,
        buffer_size: Any = None,
        compression_type: Any = None,
        num_parallel_reads: Any = None,
        name: str | None = None,
    ) -> None:
        def read_one_file(filename: Any) -> Dataset:
            record = _int64(record_bytes, "record_bytes")
            header = _int64(header_bytes or 0, "header_bytes")
            footer = _int64(footer_bytes or 0, "footer_bytes")
            buffer = _int64(_DEFAULT_BUFFER if buffer_size is None else buffer_size, "buffer_size")
            compression = _string(compression_type, "compression_type")
            return _reader("FixedLengthRecordDatasetV2",
                           [filename, header, record, footer, buffer, compression])  # fmt: skip

        super().__init__(*_files_dataset(filenames, read_one_file))
