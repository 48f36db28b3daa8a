"""Ops (executor stage), the v1 readers: WholeFileReaderV2, TextLineReaderV2,
TFRecordReaderV2, FixedLengthRecordReaderV2 and ReaderReadV2, ReaderReadUpToV2,
ReaderNumRecordsProducedV2, ReaderNumWorkUnitsCompletedV2, ReaderResetV2 (TensorFlow's
reader_base.cc and its readers).

A reader is a resource of its device (named as queues are: shared_name or private to the
session) that reads one "work unit" (a file name) at a time, taking the next from a string
queue when the current one is done; ReaderRead waits on that queue without blocking a
thread (the queue's parked attempts, common.ops.queue_ops) and fails with OutOfRange when
it is closed and empty. Keys are TensorFlow's: "file:offset" (TFRecord), "file:line"
(TextLine, counting skipped header lines), "file:index" (FixedLength), the file name
(WholeFile). Reads of one reader run one after another in arrival order (its lock and
waiting list); safe from any thread.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from common import record_io
from common.errors import InvalidArgumentError, NotFoundError, OpError, OutOfRangeError
from common.ops import queue_ops
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op
from common.ops.resource_op_kernel import resource_op_kernel
from common.resource_mgr import handle_of

READER_TYPE_NAME = "ReaderInterface"
Done = Callable[[Any, Any], None]
Records = Iterator[tuple[bytes, bytes]]  # (key, value) of one work unit

_SHARED = ["container: string = ''", "shared_name: string = ''"]
register_op("WholeFileReaderV2", outputs=["reader_handle: resource"], attrs=_SHARED,
            stateful=True)  # fmt: skip
register_op("TextLineReaderV2", outputs=["reader_handle: resource"],
            attrs=["skip_header_lines: int = 0", *_SHARED], stateful=True)  # fmt: skip
register_op("TFRecordReaderV2", outputs=["reader_handle: resource"],
            attrs=[*_SHARED, "compression_type: string = ''"], stateful=True)  # fmt: skip
register_op("FixedLengthRecordReaderV2", outputs=["reader_handle: resource"],
            attrs=["header_bytes: int = 0", "record_bytes: int", "footer_bytes: int = 0",
                   "hop_bytes: int = 0", *_SHARED, "encoding: string = ''"],
            stateful=True)  # fmt: skip
register_op("ReaderReadV2", inputs=["reader_handle: resource", "queue_handle: resource"],
            outputs=["key: string", "value: string"], stateful=True)  # fmt: skip
register_op("ReaderReadUpToV2",
            inputs=["reader_handle: resource", "queue_handle: resource", "num_records: int64"],
            outputs=["keys: string", "values: string"], stateful=True)  # fmt: skip
register_op("ReaderNumRecordsProducedV2", inputs=["reader_handle: resource"],
            outputs=["records_produced: int64"], stateful=True)  # fmt: skip
register_op("ReaderNumWorkUnitsCompletedV2", inputs=["reader_handle: resource"],
            outputs=["units_completed: int64"], stateful=True)  # fmt: skip
register_op("ReaderResetV2", inputs=["reader_handle: resource"], stateful=True)


# -- what each reader makes of one work unit ---------------------------------------------------
def _whole_file(path: str) -> Records:
    with record_io.open_file(path) as f:
        yield path.encode(), f.read()


def _text_lines(skip: int) -> Callable[[str], Records]:
    def records(path: str) -> Records:
        stream = record_io.InputStream(record_io.open_file(path))
        try:
            line_number = 0
            while (line := stream.readline()) is not None:
                line_number += 1
                if line_number > skip:
                    yield f"{path}:{line_number}".encode(), line.removesuffix(b"\r")
        finally:
            stream.close()

    return records


def _tf_records(compression: str) -> Callable[[str], Records]:
    def records(path: str) -> Records:
        reader = record_io.RecordReader(path, compression)
        try:
            while True:
                offset = reader.stream.offset
                data = reader.next()
                if data is None:
                    return
                yield f"{path}:{offset}".encode(), data
        finally:
            reader.close()

    return records


def _fixed_length(header: int, size: int, footer: int, hop: int, encoding: str):  # noqa: ANN202
    step = hop if hop > 0 else size

    def records(path: str) -> Records:
        stream = record_io.InputStream(record_io.open_file(path), encoding)
        try:
            stream.read(header)
            data, index = b"", 0
            while True:
                data += stream.read(size + footer - len(data))
                if len(data) < size + footer:
                    return
                yield f"{path}:{index}".encode(), data[:size]
                index += 1
                data = data[step:]
        finally:
            stream.close()

    return records


class Reader:
    """A reader's state: the work unit being read and its remaining records, counters,
    and the reads waiting their turn."""

    def __init__(self, records: Callable[[str], Records]) -> None:
        self.records = records
        self.lock = threading.Lock()
        self.current: Records | None = None
        self.produced = 0
        self.completed = 0
        self.busy = False
        self.waiting: collections.deque[Callable[[], None]] = collections.deque()

    def reset(self) -> None:
        with self.lock:
            self.current, self.produced, self.completed = None, 0, 0

    def next_record(self) -> tuple[bytes, bytes] | None:
        """The next record of the current work unit; None when it has none left."""
        if self.current is None:
            return None
        record = next(self.current, None)
        if record is None:
            self.current = None
            self.completed += 1
        return record

    # Reads run one at a time: `run(finish)` starts one, and `finish` starts the next.
    def submit(self, run: Callable[[Callable[[], None]], None]) -> None:
        with self.lock:
            if self.busy:
                self.waiting.append(lambda: run(self._finish))
                return
            self.busy = True
        run(self._finish)

    def _finish(self) -> None:
        with self.lock:
            nxt = self.waiting.popleft() if self.waiting else None
            if nxt is None:
                self.busy = False
        if nxt is not None:
            nxt()


def _read(ctx: OpKernelContext, reader: Reader, queue: queue_ops.Queue, want: int,
          up_to: bool, done: Done) -> None:  # fmt: skip
    """Collect `want` records (fewer when the queue closes, with up_to), taking work units
    from `queue` as needed; done([keys, values]) or done(None, error)."""
    keys: list[bytes] = []
    values: list[bytes] = []

    def run(finish: Callable[[], None]) -> None:
        def complete(outputs: Any, error: Any) -> None:
            finish()
            done(outputs, error)

        def step() -> None:
            try:
                while len(keys) < want:
                    record = reader.next_record()
                    if record is None:
                        break
                    keys.append(record[0])
                    values.append(record[1])
                    reader.produced += 1
            except OpError as e:
                complete(None, e)
                return
            if len(keys) >= want:
                complete(_outputs(keys, values, up_to), None)
                return
            queue_ops._start(ctx, queue, queue_ops._Attempt(got_work, count=-1), False, -1)

        def got_work(outputs: Any, error: Any) -> None:
            if error is not None:
                if isinstance(error, OutOfRangeError) and up_to and keys:
                    complete(_outputs(keys, values, up_to), None)
                else:
                    complete(None, error)
                return
            work = np.asarray(outputs[0]).item()
            path = work.decode() if isinstance(work, bytes) else str(work)
            reader.current = reader.records(path)
            step()

        step()

    reader.submit(run)


def _outputs(keys: list[bytes], values: list[bytes], batched: bool) -> list[np.ndarray]:
    if not batched:
        return [np.array(keys[0], dtype=object), np.array(values[0], dtype=object)]
    k, v = np.empty(len(keys), dtype=object), np.empty(len(values), dtype=object)
    k[:], v[:] = keys, values
    return [k, v]


# -- kernels ---------------------------------------------------------------------------------------
def _reader_factory(make: Callable[[KernelConstruction], Callable[[str], Records]]):
    def factory(k: KernelConstruction) -> Callable:
        records = make(k)
        return resource_op_kernel(k, lambda name: Reader(records), kind=Reader, what="reader",
                                  type_name=READER_TYPE_NAME)  # fmt: skip

    return factory


def _compression(value: str) -> str:
    if value not in record_io.COMPRESSIONS:
        raise InvalidArgumentError(f"Unsupported compression_type: {value}.")
    return value


register_kernel("WholeFileReaderV2")(_reader_factory(lambda k: _whole_file))
register_kernel("TextLineReaderV2")(
    _reader_factory(lambda k: _text_lines(k.attr("skip_header_lines")))
)
register_kernel("TFRecordReaderV2")(
    _reader_factory(lambda k: _tf_records(_compression(k.attr("compression_type"))))
)
register_kernel("FixedLengthRecordReaderV2")(
    _reader_factory(
        lambda k: _fixed_length(
            k.attr("header_bytes"),
            k.attr("record_bytes"),
            k.attr("footer_bytes"),
            k.attr("hop_bytes"),
            _compression(k.attr("encoding")),
        )  # fmt: skip
    )
)


def lookup_reader(ctx: OpKernelContext, handle_value: Any) -> Reader:
    h = handle_of(handle_value, ctx.node_name)
    r = ctx.step.resource_mgr.find(h.container, h.name)
    if not isinstance(r, Reader):
        raise NotFoundError(f"Resource {h.container}/{h.name}/{READER_TYPE_NAME} does not exist.")
    return r


@register_kernel("ReaderReadV2", is_async=True)
def _reader_read(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list, done: Done) -> None:
        reader = lookup_reader(ctx, inputs[0])
        queue = queue_ops.lookup_queue(ctx, inputs[1])
        _read(ctx, reader, queue, 1, False, done)

    return compute


@register_kernel("ReaderReadUpToV2", is_async=True)
def _reader_read_up_to(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list, done: Done) -> None:
        reader = lookup_reader(ctx, inputs[0])
        queue = queue_ops.lookup_queue(ctx, inputs[1])
        n = int(np.asarray(inputs[2]))
        if n <= 0:
            raise InvalidArgumentError(f"num_records must be positive, got {n}")
        _read(ctx, reader, queue, n, True, done)

    return compute


@register_kernel("ReaderNumRecordsProducedV2")
def _num_records(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [np.int64(lookup_reader(ctx, inputs[0]).produced)]

    return compute


@register_kernel("ReaderNumWorkUnitsCompletedV2")
def _num_work_units(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [np.int64(lookup_reader(ctx, inputs[0]).completed)]

    return compute


@register_kernel("ReaderResetV2")
def _reset(k: KernelConstruction) -> Callable:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        lookup_reader(ctx, inputs[0]).reset()
        return []

    return compute
