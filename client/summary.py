"""Client, summaries: tf.compat.v1.summary — summary ops named and collected as TensorFlow
names them (scalar, histogram, tensor_summary, text, merge, merge_all) and FileWriter,
which writes TensorFlow event files that TensorBoard and tf.compat.v1.train.summary_iterator
read.

An event file is `<logdir>/events.out.tfevents.<10-digit seconds>.<host><suffix>`: TFRecords
(little-endian uint64 length, its masked CRC32C, the serialized Event, the data's masked
CRC32C), the first Event carrying file_version "brain.Event:2". Events are buffered and
written in the client's process; there is no background thread: the buffer is flushed when
`max_queue` events wait, at the first event `flush_secs` after the last flush, and at
flush()/close(). A FileWriter is safe to share between threads (one lock). Not written: the
MetaGraphDef TensorFlow adds beside a graph, plugin assets.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import struct
import threading
import time
from collections.abc import Iterator
from typing import IO, Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.ops import logging_ops
from common.checkpoint.crc32c import crc32c, mask, unmask
from common.errors import DataLossError
from protos.event_pb2 import Event, SessionLog, TaggedRunMetadata
from protos.graph_pb2 import GraphDef
from protos.summary_pb2 import Summary, SummaryDescription, SummaryMetadata

__all__ = [
    "Event",
    "FileWriter",
    "SessionLog",
    "Summary",
    "SummaryDescription",
    "SummaryMetadata",
    "TaggedRunMetadata",
    "histogram",
    "merge",
    "merge_all",
    "scalar",
    "summary_iterator",
    "tensor_summary",
    "text",
]

GraphKeys = _ops.GraphKeys
_FILE_VERSION = "brain.Event:2"
_WRITER_NAME = "flowrt.client.summary"
_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


# -- names and collections (TF's summary_op_util) -------------------------------------------
def _clean_tag(name: str | None) -> str | None:
    """Illegal tag characters become '_'; leading slashes go (as TensorFlow)."""
    if name is None:
        return None
    return _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")


@contextlib.contextmanager
def _summary_scope(
    name: str, family: str | None = None, default_name: str | None = None, values: Any = None
) -> Iterator[tuple[str, str]]:
    """(tag, scope): the scope is unique, the tag is the scope (under `family` if set)."""
    name, family = _clean_tag(name) or "", _clean_tag(family)
    base = name if family is None else f"{family}/{name}"
    with _ops.name_scope(base, default_name, values) as scope:
        tag = scope.rstrip("/")
        yield (tag if family is None else f"{family}/{tag}"), scope


def _collect(value: Any, collections: Any, default: list[str]) -> None:
    for key in default if collections is None else collections:
        _ops.add_to_collection(key, value)


# -- summary ops -----------------------------------------------------------------------------
def scalar(name: str, tensor: Any, collections: Any = None, family: str | None = None) -> Any:
    """A ScalarSummary of the one value of `tensor`, tagged by its unique scope name."""
    with _summary_scope(name, family, values=[tensor]) as (tag, scope):
        val = logging_ops.scalar_summary(tag, tensor, name=scope)
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def histogram(name: str, values: Any, collections: Any = None, family: str | None = None) -> Any:
    """A HistogramSummary of `values` (TensorFlow's buckets)."""
    with _summary_scope(name, family, "HistogramSummary", [values]) as (tag, scope):
        val = logging_ops.histogram_summary(tag, values, name=scope)
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def image(
    name: str,
    tensor: Any,
    max_outputs: int = 3,
    collections: Any = None,
    family: str | None = None,
) -> Any:
    """An ImageSummary of up to `max_outputs` images of a [batch, h, w, 1|3|4] tensor."""
    from client.framework.op_builder import apply_op

    with _summary_scope(name, family, values=[tensor]) as (tag, scope):
        attrs = {"max_images": max_outputs}
        val = apply_op("ImageSummary", [tag, tensor], attrs, scope).outputs[0]
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def audio(
    name: str,
    tensor: Any,
    sample_rate: Any,
    max_outputs: int = 3,
    collections: Any = None,
    family: str | None = None,
) -> Any:
    """An AudioSummaryV2 of up to `max_outputs` clips of a [batch, frames(, channels)]
    float tensor in [-1, 1]."""
    from client.framework import dtypes as _dtypes
    from client.framework.op_builder import apply_op, convert_to_tensor

    with _summary_scope(name, family, values=[tensor]) as (tag, scope):
        rate = convert_to_tensor(sample_rate, dtype=_dtypes.float32, name="sample_rate")
        attrs = {"max_outputs": max_outputs}
        val = apply_op("AudioSummaryV2", [tag, tensor, rate], attrs, scope).outputs[0]
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def tensor_summary(
    name: str,
    tensor: Any,
    summary_description: str | None = None,
    collections: Any = None,
    summary_metadata: SummaryMetadata | None = None,
    family: str | None = None,
    display_name: str | None = None,
) -> Any:
    """A TensorSummaryV2 holding `tensor` itself, with `summary_metadata`."""
    metadata = SummaryMetadata()
    if summary_metadata is not None:
        metadata.CopyFrom(summary_metadata)
    if summary_description is not None:
        metadata.summary_description = summary_description
    if display_name is not None:
        metadata.display_name = display_name
    with _summary_scope(name, family, values=[tensor]) as (tag, scope):
        val = logging_ops.tensor_summary_v2(tag, tensor, metadata.SerializeToString(), name=scope)
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def text(name: str, tensor: Any, collections: Any = None) -> Any:
    """A string tensor for TensorBoard's text plugin."""
    tensor = convert_to_tensor(tensor)
    if tensor.dtype != dtypes.string:
        raise ValueError(f"Expected tensor {tensor.name} to have dtype string, got {tensor.dtype}")
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name, tensor, summary_metadata=metadata, collections=collections)


def merge(inputs: Any, collections: Any = None, name: str | None = None) -> Any:
    """A MergeSummary of serialized summaries (InvalidArgument on a repeated tag)."""
    name = _clean_tag(name)
    with _ops.name_scope(name, "Merge", inputs):
        val = logging_ops.merge_summary(inputs, name=name)
        _collect(val, collections, [])
    return val


def merge_all(
    key: str = GraphKeys.SUMMARIES, scope: str | None = None, name: str | None = None
) -> Any:
    """merge() of the `key` collection; None when it is empty."""
    summary_ops = _ops.get_collection(key, scope)
    return merge(summary_ops, name=name) if summary_ops else None


# -- records -----------------------------------------------------------------------------------
def _record(data: bytes) -> bytes:
    """One TFRecord: length, masked CRC32C of the length, data, masked CRC32C of the data."""
    header = struct.pack("<Q", len(data))
    return b"".join(
        [
            header,
            struct.pack("<I", mask(crc32c(header))),
            data,
            struct.pack("<I", mask(crc32c(data))),
        ]
    )


def _read_records(f: IO[bytes], path: str) -> Iterator[bytes]:
    """The records of a TFRecord file; DataLoss on a corrupt one, a torn tail ends it."""
    while True:
        header = f.read(12)
        if len(header) < 12:
            return
        length, length_crc = struct.unpack("<QI", header)
        if unmask(length_crc) != crc32c(header[:8]):
            raise DataLossError(f"corrupted record at {f.tell() - 12} in {path}: length CRC")
        body = f.read(length + 4)
        if len(body) < length + 4:
            return
        data = body[:length]
        if unmask(struct.unpack("<I", body[length:])[0]) != crc32c(data):
            raise DataLossError(f"corrupted record in {path}: data CRC")
        yield data


def summary_iterator(path: str | os.PathLike[str]) -> Iterator[Event]:
    """tf.compat.v1.train.summary_iterator: the Events of an event file, in order."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        for data in _read_records(f, path):
            yield Event.FromString(data)


class EventFileWriter:
    """Appends Events to one event file in `logdir` (a new file at each open)."""

    def __init__(
        self,
        logdir: str | os.PathLike[str],
        max_queue: int = 10,
        flush_secs: float = 120,
        filename_suffix: str | None = None,
    ) -> None:
        self._logdir = os.fspath(logdir)
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._suffix = filename_suffix or ""
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        self._pending = 0
        self._last_flush = time.monotonic()
        self._open()

    def get_logdir(self) -> str:
        return self._logdir

    @property
    def filename(self) -> str | None:
        """The file being written (None once closed)."""
        return None if self._file is None else self._file.name

    def _open(self) -> None:
        os.makedirs(self._logdir, exist_ok=True)
        seconds = int(time.time())
        name = f"events.out.tfevents.{seconds:010d}.{socket.gethostname()}{self._suffix}"
        self._file = open(os.path.join(self._logdir, name), "wb")  # noqa: SIM115 (kept open)
        first = Event(wall_time=float(seconds), file_version=_FILE_VERSION)
        first.source_metadata.writer = _WRITER_NAME
        self._file.write(_record(first.SerializeToString()))
        self._file.flush()
        self._last_flush = time.monotonic()

    def add_event(self, event: Event) -> None:
        """Buffer `event`; flush when max_queue wait or flush_secs passed (nothing when
        closed, as TensorFlow)."""
        data = _record(event.SerializeToString())
        with self._lock:
            if self._file is None:
                return
            self._file.write(data)
            self._pending += 1
            if (
                self._pending >= self._max_queue
                or time.monotonic() - self._last_flush >= self._flush_secs
            ):
                self._flush_locked()

    def _flush_locked(self) -> None:
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
        self._pending = 0
        self._last_flush = time.monotonic()

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._flush_locked()
                self._file.close()
                self._file = None

    def reopen(self) -> None:
        """After close(): a new event file in the same logdir."""
        with self._lock:
            if self._file is None:
                self._open()


class FileWriter:
    """tf.compat.v1.summary.FileWriter: summaries, graphs and session logs as Events."""

    def __init__(
        self,
        logdir: str | os.PathLike[str],
        graph: Any = None,
        max_queue: int = 10,
        flush_secs: float = 120,
        graph_def: Any = None,
        filename_suffix: str | None = None,
        session: Any = None,
    ) -> None:
        if session is not None:
            raise NotImplementedError(
                "FileWriter(session=...): writing through TF2 summary-writer ops in a session is "
                "not supported; without session= the FileWriter writes event files itself"
            )
        self.event_writer = EventFileWriter(logdir, max_queue, flush_secs, filename_suffix)
        self._closed = False
        self._seen_summary_tags: set[str] = set()
        self._session_run_tags: set[str] = set()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def __enter__(self) -> FileWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_summary(self, summary: Any, global_step: Any = None) -> None:
        """An Event holding `summary` (a Summary or its bytes, e.g. a summary op's
        output); a tag's plugin metadata is written with its first value only."""
        if not isinstance(summary, Summary):
            summary = Summary.FromString(_as_bytes(summary))
        for value in summary.value:
            if not value.HasField("metadata"):
                continue
            if value.tag in self._seen_summary_tags:
                value.ClearField("metadata")
                continue
            self._seen_summary_tags.add(value.tag)
        self._add_event(Event(summary=summary), global_step)

    def add_session_log(self, session_log: SessionLog, global_step: Any = None) -> None:
        self._add_event(Event(session_log=session_log), global_step)

    def add_graph(self, graph: Any, global_step: Any = None, graph_def: Any = None) -> None:
        """An Event holding the serialized GraphDef of `graph` (a Graph or a GraphDef)."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        source = graph if graph is not None else graph_def
        if isinstance(source, _ops.Graph):
            true_graph_def = source.as_graph_def(add_shapes=True)
        elif isinstance(source, GraphDef) or hasattr(source, "SerializeToString"):
            true_graph_def = source
        else:
            raise TypeError(
                "The passed graph must be an instance of `Graph` or the deprecated `GraphDef`"
            )
        self._add_event(Event(graph_def=true_graph_def.SerializeToString()), global_step)

    def add_run_metadata(self, run_metadata: Any, tag: str, global_step: Any = None) -> None:
        if tag in self._session_run_tags:
            raise ValueError("The provided tag was already used for this event type")
        self._session_run_tags.add(tag)
        tagged = TaggedRunMetadata(tag=tag, run_metadata=run_metadata.SerializeToString())
        self._add_event(Event(tagged_run_metadata=tagged), global_step)

    def _add_event(self, event: Event, step: Any) -> None:
        event.wall_time = time.time()
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_event(self, event: Event) -> None:
        self.event_writer.add_event(event)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()
        self._closed = True

    def reopen(self) -> None:
        self.event_writer.reopen()
        self._closed = False


def _as_bytes(value: Any) -> bytes:
    """A fetched summary (bytes, or a 0-d object array holding bytes) or another library's
    Summary message (serialized: the field numbers are the same)."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if hasattr(value, "SerializeToString"):
        return bytes(value.SerializeToString())
    item = value.item() if hasattr(value, "item") else value
    return bytes(item)
