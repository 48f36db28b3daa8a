"""Ops (executor stage), summary writers: SummaryWriter, CreateSummaryFileWriter, the
Write*Summary ops, ImportEvent, FlushSummaryWriter, CloseSummaryWriter (TensorFlow's
core/kernels/summary_kernels.cc; what `tf.summary.create_file_writer` builds in a graph).

SummaryWriter only makes a DT_RESOURCE handle; the first CreateSummaryFileWriter on it
opens an event file in `logdir` (resolved under the task's `--file-root`: elsewhere is
PermissionDenied naming the node, and nothing is created) named as TensorFlow names it,
events.out.tfevents.<seconds>.<host>.<pid>.<n><suffix>, and writes the file_version
Event. Each write op appends one Event record (TFRecord framing, common.record_io) and
flushes it (max_queue and flush_millis are taken but events are never held back).
CloseSummaryWriter closes the file and deletes the resource. ImageSummary- and
AudioSummary-writing ops and the database writer are not provided (unregistered ops).
The writer's lock orders writes; safe from any thread.
"""

from __future__ import annotations

import itertools
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from common import file_access, record_io
from common import tensor as tensor_util
from common.errors import InvalidArgumentError, NotFoundError, PermissionDeniedError
from common.ops.logging_ops import _REAL, histogram_proto
from common.ops.registry import KernelConstruction, register_kernel, register_op
from common.resource_mgr import DEFAULT_CONTAINER, ResourceHandle, handle_of
from protos import event_pb2, summary_pb2

WRITER_TYPE_NAME = "N10tensorflow22SummaryWriterInterfaceE"
_FILE_VERSION = "brain.Event:2"
_SOURCE = "tensorflow.core.util.events_writer"
_counter = itertools.count()

_W = "writer: resource"
register_op(
    "SummaryWriter",
    outputs=["writer: resource"],
    attrs=["shared_name: string = ''", "container: string = ''"],
    stateful=True,
)
register_op(
    "CreateSummaryFileWriter",
    [_W, "logdir: string", "max_queue: int32", "flush_millis: int32", "filename_suffix: string"],
    stateful=True,
)
register_op(
    "WriteSummary",
    [_W, "step: int64", "tensor: T", "tag: string", "summary_metadata: string"],
    attrs=["T: type"],
    stateful=True,
)
register_op(
    "WriteScalarSummary",
    [_W, "step: int64", "tag: string", "value: T"],
    attrs=[f"T: {{{_REAL}}}"],
    stateful=True,
)
register_op(
    "WriteHistogramSummary",
    [_W, "step: int64", "tag: string", "values: T"],
    attrs=[f"T: {{{_REAL}, bool}} = DT_FLOAT"],
    stateful=True,
)
register_op("WriteRawProtoSummary", [_W, "step: int64", "tensor: string"], stateful=True)
register_op("WriteGraphSummary", [_W, "step: int64", "tensor: string"], stateful=True)
register_op("ImportEvent", [_W, "event: string"], stateful=True)
register_op("FlushSummaryWriter", [_W], stateful=True)
register_op("CloseSummaryWriter", [_W], stateful=True)

Compute = Callable[..., list]


class SummaryFileWriter:
    """One open event file."""

    def __init__(self, logdir: str, suffix: str) -> None:
        os.makedirs(logdir, exist_ok=True)
        name = (
            f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
            f"{os.getpid()}.{next(_counter)}{suffix}"
        )
        self.path = os.path.join(logdir, name)
        self._lock = threading.Lock()
        self._records = record_io.RecordWriter(self.path)
        first = event_pb2.Event(wall_time=time.time(), file_version=_FILE_VERSION)
        first.source_metadata.writer = _SOURCE
        self.write(first)

    def write(self, event: event_pb2.Event) -> None:
        with self._lock:
            self._records.write(event.SerializeToString())
            self._records.flush()

    def flush(self) -> None:
        with self._lock:
            self._records.flush()

    def close(self) -> None:
        with self._lock:
            self._records.close()


def _scalar(value: Any, what: str, node: str) -> Any:
    arr = np.asarray(value)
    if arr.ndim != 0:
        raise InvalidArgumentError(f"{what} must be a scalar, got shape {list(arr.shape)}", node)
    return arr.item()


def _text(value: Any, what: str, node: str) -> str:
    item = _scalar(value, what, node)
    return item.decode("utf-8", "surrogateescape") if isinstance(item, bytes) else str(item)


def _raw(value: Any, what: str, node: str) -> bytes:
    item = _scalar(value, what, node)
    return item if isinstance(item, bytes) else str(item).encode()


def _handle(ctx: Any, value: Any) -> ResourceHandle:
    return handle_of(value, ctx.node_name)


def _writer(ctx: Any, value: Any) -> SummaryFileWriter:
    h = _handle(ctx, value)
    writer = ctx.step.resource_mgr.find(h.container, h.name)
    if not isinstance(writer, SummaryFileWriter):
        raise NotFoundError(
            f"Resource {h.container}/{h.name}/{WRITER_TYPE_NAME} does not exist.", ctx.node_name
        )
    return writer


def _event(step: Any, node: str) -> event_pb2.Event:
    return event_pb2.Event(wall_time=time.time(), step=int(_scalar(step, "step", node)))


@register_kernel("SummaryWriter")
def _summary_writer(k: KernelConstruction) -> Compute:
    # As a ResourceHandleOp: shared_name as given, the container defaulting to the device's.
    handle = ResourceHandle(
        device=k.device,
        container=k.attrs.get("container") or DEFAULT_CONTAINER,
        name=k.attrs.get("shared_name", ""),
        maybe_type_name=WRITER_TYPE_NAME,
    )
    tensor = handle.as_tensor()
    return lambda ctx, inputs: [tensor]


@register_kernel("CreateSummaryFileWriter")
def _create_file_writer(k: KernelConstruction) -> Compute:
    def compute(ctx: Any, inputs: list) -> list:
        h = _handle(ctx, inputs[0])
        logdir = _text(inputs[1], "logdir", k.node_name)
        for value, what in ((inputs[2], "max_queue"), (inputs[3], "flush_millis")):
            _scalar(value, what, k.node_name)
        suffix = _text(inputs[4], "filename_suffix", k.node_name)
        try:
            resolved = file_access.resolve(logdir, "summary logdir")
        except PermissionDeniedError as e:
            raise PermissionDeniedError(e.message, k.node_name) from None
        ctx.step.resource_mgr.lookup_or_create(
            h.container, h.name, lambda: SummaryFileWriter(resolved, suffix)
        )
        return []

    return compute


@register_kernel("WriteSummary")
def _write_summary(k: KernelConstruction) -> Compute:
    def compute(ctx: Any, inputs: list) -> list:
        writer = _writer(ctx, inputs[0])
        event = _event(inputs[1], k.node_name)
        value = event.summary.value.add(tag=_text(inputs[3], "tag", k.node_name))
        metadata = _raw(inputs[4], "summary_metadata", k.node_name)
        if metadata:  # TensorFlow leaves an empty one out
            value.metadata.ParseFromString(metadata)
        value.tensor.CopyFrom(tensor_util.as_proto_tensor_content(inputs[2], k.attr("T")))
        writer.write(event)
        return []

    return compute


@register_kernel("WriteScalarSummary")
def _write_scalar(k: KernelConstruction) -> Compute:
    def compute(ctx: Any, inputs: list) -> list:
        writer = _writer(ctx, inputs[0])
        event = _event(inputs[1], k.node_name)
        tag = _text(inputs[2], "tag", k.node_name)
        event.summary.value.add(
            tag=tag, simple_value=float(_scalar(inputs[3], "value", k.node_name))
        )
        writer.write(event)
        return []

    return compute


@register_kernel("WriteHistogramSummary")
def _write_histogram(k: KernelConstruction) -> Compute:
    def compute(ctx: Any, inputs: list) -> list:
        writer = _writer(ctx, inputs[0])
        event = _event(inputs[1], k.node_name)
        tag = _text(inputs[2], "tag", k.node_name)
        flat = np.asarray(inputs[3]).reshape(-1).astype(np.float64)
        if not np.isfinite(flat).all():
            raise InvalidArgumentError(f"Nan in summary histogram for: {k.node_name}", k.node_name)
        event.summary.value.add(tag=tag).histo.CopyFrom(histogram_proto(flat))
        writer.write(event)
        return []

    return compute


@register_kernel("WriteRawProtoSummary")
def _write_raw_proto(k: KernelConstruction) -> Compute:
    def compute(ctx: Any, inputs: list) -> list:
        writer = _writer(ctx, inputs[0])
        for item in np.asarray(inputs[2], dtype=object).reshape(-1):
            event = _event(inputs[1], k.node_name)
            summary = summary_pb2.Summary()
            try:
                summary.ParseFromString(bytes(item))
            except Exception:  # noqa: BLE001  (any parse failure is the caller's)
                raise InvalidArgumentError("failed to parse Summary proto", k.node_name) from None
            event.summary.CopyFrom(summary)
            writer.write(event)
        return []

    return compute


@register_kernel("WriteGraphSummary")
def _write_graph(k: KernelConstruction) -> Compute:
    def compute(ctx: Any, inputs: list) -> list:
        writer = _writer(ctx, inputs[0])
        event = _event(inputs[1], k.node_name)
        event.graph_def = _raw(inputs[2], "graph", k.node_name)
        writer.write(event)
        return []

    return compute


@register_kernel("ImportEvent")
def _import_event(k: KernelConstruction) -> Compute:
    def compute(ctx: Any, inputs: list) -> list:
        writer = _writer(ctx, inputs[0])
        event = event_pb2.Event()
        try:
            event.ParseFromString(_raw(inputs[1], "event", k.node_name))
        except Exception:  # noqa: BLE001
            raise InvalidArgumentError("failed to parse Event proto", k.node_name) from None
        writer.write(event)
        return []

    return compute


@register_kernel("FlushSummaryWriter")
def _flush(k: KernelConstruction) -> Compute:
    def compute(ctx: Any, inputs: list) -> list:
        _writer(ctx, inputs[0]).flush()
        return []

    return compute


@register_kernel("CloseSummaryWriter")
def _close(k: KernelConstruction) -> Compute:
    def compute(ctx: Any, inputs: list) -> list:
        h = _handle(ctx, inputs[0])
        writer = ctx.step.resource_mgr.find(h.container, h.name)
        if isinstance(writer, SummaryFileWriter):
            writer.close()
            ctx.step.resource_mgr.delete(h.container, h.name)
        return []

    return compute
