"""Client, graph building: the v1 readers (tf.WholeFileReader, TextLineReader,
TFRecordReader, FixedLengthRecordReader; TensorFlow's io_ops.ReaderBase): a reader node
and its read / read_up_to / num_records_produced / num_work_units_completed / reset ops,
reading the file names a string queue (tf.train.string_input_producer) hands out.
Graph building; not thread-safe."""

from __future__ import annotations

from typing import Any

from client.framework import ops as _ops
from client.framework import shape_fns
from client.framework.op_builder import apply_op
from client.framework.tensor_shape import TensorShape


class ReaderBase:
    """A reader resource; its ops read records from the work units of a queue."""

    def __init__(self, op_type: str, attrs: dict[str, Any], name: str | None) -> None:
        self._reader_ref = apply_op(op_type, [], attrs, name).outputs[0]
        self._reader_ref._shape = TensorShape([])

    reader_ref = property(lambda self: self._reader_ref)
    supports_serialize = False

    @staticmethod
    def _queue_ref(queue: Any) -> Any:
        return queue.queue_ref if hasattr(queue, "queue_ref") else queue

    def read(self, queue: Any, name: str | None = None) -> tuple[_ops.Tensor, _ops.Tensor]:
        """The next (key, value) record."""
        op = apply_op("ReaderReadV2", [self._reader_ref, self._queue_ref(queue)], {}, name)
        return op.outputs[0], op.outputs[1]

    def read_up_to(
        self, queue: Any, num_records: Any, name: str | None = None
    ) -> tuple[_ops.Tensor, _ops.Tensor]:
        """Up to `num_records` (keys, values); fewer only at the end of the queue."""
        inputs = [self._reader_ref, self._queue_ref(queue), num_records]
        op = apply_op("ReaderReadUpToV2", inputs, {}, name)
        return op.outputs[0], op.outputs[1]

    def num_records_produced(self, name: str | None = None) -> _ops.Tensor:
        return apply_op("ReaderNumRecordsProducedV2", [self._reader_ref], {}, name).outputs[0]

    def num_work_units_completed(self, name: str | None = None) -> _ops.Tensor:
        return apply_op("ReaderNumWorkUnitsCompletedV2", [self._reader_ref], {}, name).outputs[0]

    def reset(self, name: str | None = None) -> _ops.Operation:
        return apply_op("ReaderResetV2", [self._reader_ref], {}, name)


class WholeFileReader(ReaderBase):
    def __init__(self, name: str | None = None) -> None:
        super().__init__("WholeFileReaderV2", {}, name)


class TextLineReader(ReaderBase):
    def __init__(self, skip_header_lines: int | None = None, name: str | None = None) -> None:
        super().__init__("TextLineReaderV2", {"skip_header_lines": skip_header_lines or 0}, name)


class TFRecordReader(ReaderBase):
    def __init__(self, name: str | None = None, options: Any = None) -> None:
        from client.python_io import TFRecordOptions

        compression = TFRecordOptions.get_compression_type_string(options)
        super().__init__("TFRecordReaderV2", {"compression_type": compression}, name)


class FixedLengthRecordReader(ReaderBase):
    def __init__(
        self,
        record_bytes: int,
        header_bytes: int | None = None,
        footer_bytes: int | None = None,
        hop_bytes: int | None = None,
        name: str | None = None,
        encoding: str | None = None,
    ) -> None:
        attrs = {
            "record_bytes": record_bytes,
            "header_bytes": header_bytes or 0,
            "footer_bytes": footer_bytes or 0,
            "hop_bytes": hop_bytes or 0,
            "encoding": encoding or "",
        }
        super().__init__("FixedLengthRecordReaderV2", attrs, name)


shape_fns.SHAPE_FNS["ReaderReadV2"] = lambda op: [TensorShape([]), TensorShape([])]
shape_fns.SHAPE_FNS["ReaderReadUpToV2"] = lambda op: [TensorShape([None]), TensorShape([None])]
for _op in ("ReaderNumRecordsProducedV2", "ReaderNumWorkUnitsCompletedV2"):
    shape_fns.SHAPE_FNS[_op] = lambda op: [TensorShape([])]
