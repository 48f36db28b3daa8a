"""Ops: printing and summaries (TensorFlow's logging_ops.cc, string_format_op.cc and
summary_op.cc, summary_audio_op.cc): StringFormat, PrintV2, Print, ScalarSummary,
HistogramSummary, MergeSummary, TensorSummaryV2, TensorSummary, AudioSummaryV2. (Not
ImageSummary, nor AudioSummary, removed at GraphDef version 15; the TF2 summary-writer
ops are common.ops.summary_writer_ops.)

Summary kernels return a serialized `Summary` proto (protos/summary.proto, TensorFlow's
field numbers) byte for byte as TensorFlow's kernels do, so a TensorFlow client or
TensorBoard reads them unchanged. The print kernels write on the process that runs them
(the worker task, as TensorFlow prints on its task). Kernels are safe from any thread;
Print's first_n counter is per kernel instance, under a lock.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError

from common import file_access
from common import tensor as tensor_util
from common.attr_value import utf8_safe_c_escape
from common.errors import InvalidArgumentError
from common.ops import math_util as mu
from common.ops.misc_ops import summarize_value
from common.ops.registry import KernelConstruction, register_kernel, register_op
from protos import summary_pb2

_LOG = logging.getLogger(__name__)
_REAL = "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64"

# ---------------------------------------------------------------------------------------
# Tensor::SummarizeValue(max_entries, print_v2=true): numpy-like nested brackets with the
# first and last `max_entries` entries of every dimension and "..." between them.
# ---------------------------------------------------------------------------------------


def _shortest(x: float, digits: tuple[int, int], kind: type) -> str:
    """FloatToBuffer/DoubleToBuffer: %g with the fewest digits that read back exactly."""
    s = ""
    for p in digits:
        s = f"{x:.{p}g}"
        if x != x or kind(float(s)) == kind(x):
            break
    return s


def _element_formatter(dt: np.dtype) -> Callable[[Any], bytes] | None:
    """PrintOneElement(value, print_v2=true) for `dt`, or None where TensorFlow prints '?'."""
    if dt == np.float64:
        return lambda v: _shortest(float(v), (15, 17), np.float64).encode()
    if mu.is_float(dt):  # half and bfloat16 print as float
        return lambda v: _shortest(float(np.float32(v)), (6, 9), np.float32).encode()
    if dt.kind in "iu":
        return lambda v: str(int(v)).encode()
    if dt.kind == "b":
        return lambda v: b"1" if v else b"0"
    if dt.kind == "O":
        return lambda v: b'"' + utf8_safe_c_escape(v) + b'"'
    return None


def summarize_value_v2(t: np.ndarray, max_entries: int) -> bytes:
    """Tensor::SummarizeValue(max_entries, true), as tf.strings.format and tf.print show a
    tensor: "[1 2 3]", "[[1 2]\\n [3 4]]", "[0 1 2 ... 7 8 9]"."""
    num = t.size
    if max_entries < 0:
        max_entries = num
    limit = min(max_entries, num)
    if t.dtype.kind == "b" and limit == 0:
        return b""  # TensorFlow's bool case prints nothing at all then, brackets included
    fmt = _element_formatter(t.dtype)
    flat = t.reshape(-1)
    if fmt is not None and t.dtype.kind == "O" and limit and not isinstance(flat[0], bytes):
        fmt = None
    if fmt is None:  # complex, resource, variant: TensorFlow's "irregular" types
        body = b" ".join(b"?" for _ in range(limit)) + (b"..." if max_entries < num else b"")
        return b"[" + body + b"]" if t.ndim else body
    if t.ndim == 0:
        return b" ".join(fmt(flat[i]) for i in range(limit)) + (b"..." if num > limit else b"")
    out: list[bytes] = []
    _print_dim_v2(out, flat, t.shape, limit, 0, 0, fmt)
    return b"".join(out)


def _dim_spacing(dim: int, ndim: int) -> bytes:
    if dim == ndim - 1:
        return b" "
    return b"\n" * (ndim - dim - 1) + b" " * (dim + 1)


def _print_dim_v2(
    out: list[bytes],
    flat: np.ndarray,
    shape: Sequence[int],
    edge: int,
    dim: int,
    index: int,
    fmt: Callable[[Any], bytes],
) -> None:
    """PrintOneDimV2: dimension `dim` of the element block starting at `index`."""
    if dim == len(shape):
        out.append(fmt(flat[index]))
        return
    out.append(b"[")
    count = shape[dim]
    per = int(np.prod(shape[dim + 1 :], dtype=np.int64))
    spacing = _dim_spacing(dim, len(shape))
    for i in range(min(edge, count)):
        if i > 0:
            out.append(spacing)
        _print_dim_v2(out, flat, shape, edge, dim + 1, index + per * i, fmt)
    if count > 2 * edge:
        out.append(spacing + b"...")
    for i in range(max(edge, count - edge), count):
        out.append(spacing)
        _print_dim_v2(out, flat, shape, edge, dim + 1, index + per * i, fmt)
    out.append(b"]")


# ---------------------------------------------------------------------------------------
# StringFormat, PrintV2, Print
# ---------------------------------------------------------------------------------------


def _string_format(kc: KernelConstruction) -> Callable:
    template = str(kc.attrs.get("template", "%s"))
    placeholder = str(kc.attrs.get("placeholder", "%s"))
    summarize = int(kc.attrs.get("summarize", 3))
    pieces = [p.encode() for p in template.split(placeholder)]
    n = len(kc.attrs.get("T", []))
    if len(pieces) - 1 != n:
        raise InvalidArgumentError(
            f"num placeholders in template and num inputs must match: {len(pieces) - 1} vs. {n}"
        )

    def compute(ctx, inputs: list) -> list:
        out = [pieces[0]]
        for value, piece in zip(inputs, pieces[1:]):
            out += [summarize_value_v2(np.asarray(value), summarize), piece]
        return [np.array(b"".join(out), dtype=object)]

    return compute


_STREAMS = ("stdout", "stderr", "log(info)", "log(warning)", "log(error)")
_LOG_LEVELS = {"log(info)": logging.INFO, "log(warning)": logging.WARNING}


def _write(stream, data: bytes) -> None:
    """Bytes to a text stream (through its binary buffer when it has one)."""
    buffer = getattr(stream, "buffer", None)
    stream.flush()
    if buffer is not None:
        buffer.write(data)
        buffer.flush()
    else:
        stream.write(data.decode("utf-8", "replace"))
        stream.flush()


def _print_v2(kc: KernelConstruction) -> Callable:
    stream = str(kc.attrs.get("output_stream", "stderr"))
    end = str(kc.attrs.get("end", "\n")).encode()
    path = stream[len("file://") :] if stream.startswith("file://") else ""
    if not path and stream not in _STREAMS:
        raise InvalidArgumentError(
            f"Unknown output stream: {stream}, Valid streams are: " + " ".join(_STREAMS)
        )

    def compute(ctx, inputs: list) -> list:
        msg = np.asarray(inputs[0])
        if msg.ndim != 0:
            raise InvalidArgumentError(
                f"Input is expected to be scalar, but got {mu.shape_str(msg.shape)}"
            )
        text = bytes(msg.item()) + end
        if path:
            with open(file_access.resolve(path, "output_stream file"), "ab") as f:
                f.write(text)
        elif stream in ("stdout", "stderr"):
            _write(sys.stdout if stream == "stdout" else sys.stderr, text)
        else:
            level = _LOG_LEVELS.get(stream, logging.ERROR)
            _LOG.log(level, "%s", text.decode("utf-8", "replace"))
        return []

    return compute


def _print(kc: KernelConstruction) -> Callable:
    message = str(kc.attrs.get("message", ""))
    first_n = int(kc.attrs.get("first_n", -1))
    summarize = int(kc.attrs.get("summarize", 3))
    lock = threading.Lock()
    calls = [0]

    def compute(ctx, inputs: list) -> list:
        if first_n >= 0:
            with lock:
                if calls[0] >= first_n:
                    return [inputs[0]]
                calls[0] += 1
        parts = "".join(f"[{summarize_value(np.asarray(d), summarize)}]" for d in inputs[1:])
        _write(sys.stderr, (message + parts + "\n").encode())
        return [inputs[0]]

    return compute


# ---------------------------------------------------------------------------------------
# Summaries
# ---------------------------------------------------------------------------------------


def _serialized(summary: summary_pb2.Summary) -> list:
    return [np.array(summary.SerializeToString(), dtype=object)]


def _scalar_summary(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        tags, values = np.asarray(inputs[0]), np.asarray(inputs[1])
        if tags.shape != values.shape:
            single = f" (tag '{tags.reshape(-1)[0].decode()}')" if tags.size == 1 else ""
            raise InvalidArgumentError(
                f"tags and values are not the same shape: {mu.shape_str(tags.shape)} != "
                f"{mu.shape_str(values.shape)}{single}"
            )
        s = summary_pb2.Summary()
        for tag, value in zip(tags.reshape(-1), values.reshape(-1)):
            s.value.add(tag=tag.decode("utf-8", "surrogateescape"), simple_value=float(value))
        return _serialized(s)

    return compute


def _default_bucket_limits() -> np.ndarray:
    """histogram.cc's default buckets: +-1e-12 growing by 10% up to 1e20, +-DBL_MAX, 0."""
    positive: list[float] = []
    v = 1.0e-12
    while v < 1.0e20:
        positive.append(v)
        v *= 1.1
    positive.append(sys.float_info.max)
    return np.array([-x for x in reversed(positive)] + [0.0] + positive, dtype=np.float64)


_BUCKET_LIMITS = _default_bucket_limits()


def histogram_proto(values: np.ndarray) -> summary_pb2.HistogramProto:
    """histogram::Histogram over `values` (finite doubles), EncodeToProto dropping runs of
    empty buckets. Sums accumulate in order, as the C++ loop does (cumsum, not pairwise)."""
    counts = np.bincount(
        np.searchsorted(_BUCKET_LIMITS, values, side="right"), minlength=_BUCKET_LIMITS.size
    ).astype(np.float64)
    h = summary_pb2.HistogramProto(
        min=float(values.min()) if values.size else sys.float_info.max,
        max=float(values.max()) if values.size else -sys.float_info.max,
        num=float(values.size),
        sum=float(np.cumsum(values)[-1]) if values.size else 0.0,
        sum_squares=float(np.cumsum(values * values)[-1]) if values.size else 0.0,
    )
    limits: list[float] = []
    buckets: list[float] = []
    nonzero = counts > 0
    i = 0
    while i < counts.size:
        end, count = _BUCKET_LIMITS[i], counts[i]
        i += 1
        if not nonzero[i - 1]:  # a run of empty buckets collapses into its last one
            while i < counts.size and not nonzero[i]:
                end, count = _BUCKET_LIMITS[i], counts[i]
                i += 1
        limits.append(float(end))
        buckets.append(float(count))
    h.bucket_limit.extend(limits)
    h.bucket.extend(buckets)
    return h


def _histogram_summary(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        tag, values = np.asarray(inputs[0]), np.asarray(inputs[1])
        if tag.ndim != 0:
            raise InvalidArgumentError("tags must be scalar")
        flat = values.reshape(-1).astype(np.float64)
        bad = ~np.isfinite(flat)
        if bad.any():
            first = flat[int(np.argmax(bad))]
            what = "Nan in summary histogram" if np.isnan(first) else "Infinity in Histogram"
            raise InvalidArgumentError(f"{what} for: {kc.node_name}")
        s = summary_pb2.Summary()
        v = s.value.add(tag=tag.item().decode("utf-8", "surrogateescape"))
        v.histo.CopyFrom(histogram_proto(flat))
        return _serialized(s)

    return compute


def _merge_summary(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        merged = summary_pb2.Summary()
        seen: set[str] = set()
        for value in inputs:
            for serialized in np.asarray(value).reshape(-1):
                one = summary_pb2.Summary()
                try:
                    one.ParseFromString(serialized)
                except DecodeError:
                    raise InvalidArgumentError(
                        "Could not parse one of the summary inputs"
                    ) from None
                for v in one.value:
                    if v.tag and v.tag in seen:  # TensorSummary values have no tag
                        raise InvalidArgumentError(
                            f"Duplicate tag {v.tag} found in summary inputs "
                        )
                    seen.add(v.tag)
                    merged.value.append(v)
        return _serialized(merged)

    return compute


def _tensor_value(v: summary_pb2.Summary.Value, value: np.ndarray, kc: KernelConstruction):
    """TensorFlow keeps strings in string_val (AsProtoField), the rest in tensor_content;
    both write the shape, even a scalar's empty one."""
    dtype = kc.attrs.get("T")
    if value.dtype.kind == "O":
        v.tensor.CopyFrom(tensor_util.as_proto_field(value, dtype))
    else:
        v.tensor.CopyFrom(tensor_util.as_proto_tensor_content(value, dtype))
    v.tensor.tensor_shape.SetInParent()


def _tensor_summary_v2(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        tag, value, metadata = (np.asarray(x) for x in inputs)
        if tag.ndim != 0:
            raise InvalidArgumentError("tag must be scalar")
        s = summary_pb2.Summary()
        v = s.value.add(tag=tag.item().decode("utf-8", "surrogateescape"))
        _tensor_value(v, value, kc)
        v.metadata.SetInParent()
        try:
            v.metadata.MergeFromString(metadata.reshape(-1)[0])
        except DecodeError:  # TensorFlow ignores the parse failure
            v.metadata.Clear()
        return _serialized(s)

    return compute


def encode_wav_s16le(samples: np.ndarray, sample_rate: int) -> bytes:
    """wav_io::EncodeAudioAsS16LEWav: a 44-byte RIFF header, then [frames, channels] float
    samples as 16-bit PCM (roundf(x * 32768), clamped)."""
    frames, channels = samples.shape
    v = samples.astype(np.float32).astype(np.float64) * 32768.0
    pcm = np.clip(np.sign(v) * np.floor(np.abs(v) + 0.5), -32768, 32767).astype("<i2")
    data = pcm.tobytes()
    header = b"".join(
        [
            b"RIFF",
            (36 + len(data)).to_bytes(4, "little"),
            b"WAVEfmt ",
            (16).to_bytes(4, "little"),
            (1).to_bytes(2, "little"),
            channels.to_bytes(2, "little"),
            sample_rate.to_bytes(4, "little"),
            (sample_rate * 2 * channels).to_bytes(4, "little"),
            (2 * channels).to_bytes(2, "little"),
            (16).to_bytes(2, "little"),
            b"data",
            len(data).to_bytes(4, "little"),
        ]
    )
    return header + data


def _audio_summary(kc: KernelConstruction) -> Callable:
    max_outputs = int(kc.attrs.get("max_outputs", 3))

    def compute(ctx, inputs: list) -> list:
        tag, audio = np.asarray(inputs[0]), np.asarray(inputs[1])
        if tag.ndim != 0:
            raise InvalidArgumentError("Tag must be a scalar")
        if audio.ndim not in (2, 3):
            raise InvalidArgumentError(
                f"Tensor must be 3-D or 2-D, got: {mu.shape_str(audio.shape)}"
            )
        rate_t = np.asarray(inputs[2])
        if rate_t.size != 1:
            raise InvalidArgumentError("sample_rate must be rank-0 or contain a single value")
        rate = float(np.float32(rate_t.reshape(-1)[0]))
        if not rate > 0.0:
            raise InvalidArgumentError("sample_rate must be > 0")
        batch, frames = audio.shape[:2]
        channels = 1 if audio.ndim == 2 else audio.shape[2]
        clips = audio.reshape(batch, frames, channels)
        base = tag.item().decode("utf-8", "surrogateescape")
        s = summary_pb2.Summary()
        for i in range(min(max_outputs, batch)):
            v = s.value.add(tag=f"{base}/audio/{i}" if max_outputs > 1 else f"{base}/audio")
            a = v.audio
            a.sample_rate, a.num_channels, a.length_frames = rate, channels, frames
            a.content_type = "audio/wav"
            a.encoded_audio_string = encode_wav_s16le(clips[i], max(1, round(rate)))
        return _serialized(s)

    return compute


def _tensor_summary(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        s = summary_pb2.Summary()
        v = s.value.add(node_name=kc.node_name)
        _tensor_value(v, np.asarray(inputs[0]), kc)
        return _serialized(s)

    return compute


def _register() -> None:
    register_op(
        "StringFormat",
        ["inputs: T"],
        ["output: string"],
        [
            "T: list(type) >= 0",
            "template: string = '%s'",
            "placeholder: string = '%s'",
            "summarize: int = 3",
        ],
    )
    register_kernel("StringFormat")(_string_format)
    register_op(
        "PrintV2",
        ["input: string"],
        [],
        ["output_stream: string = 'stderr'", "end: string = '\n'"],
        stateful=True,
    )
    register_kernel("PrintV2")(_print_v2)
    register_op(
        "Print",
        ["input: T", "data: U"],
        ["output: T"],
        [
            "T: type",
            "U: list(type) >= 0",
            "message: string = ''",
            "first_n: int = -1",
            "summarize: int = 3",
        ],
        stateful=True,
    )
    register_kernel("Print")(_print)
    register_op(
        "ScalarSummary", ["tags: string", "values: T"], ["summary: string"], [f"T: {{{_REAL}}}"]
    )
    register_kernel("ScalarSummary")(_scalar_summary)
    register_op(
        "HistogramSummary",
        ["tag: string", "values: T"],
        ["summary: string"],
        [f"T: {{{_REAL}}} = DT_FLOAT"],
    )
    register_kernel("HistogramSummary")(_histogram_summary)
    register_op("MergeSummary", ["inputs: N * string"], ["summary: string"], ["N: int >= 1"])
    register_kernel("MergeSummary")(_merge_summary)
    register_op(
        "TensorSummaryV2",
        ["tag: string", "tensor: T", "serialized_summary_metadata: string"],
        ["summary: string"],
        ["T: type"],
    )
    register_kernel("TensorSummaryV2")(_tensor_summary_v2)
    register_op(
        "TensorSummary",
        ["tensor: T"],
        ["summary: string"],
        [
            "T: type",
            "description: string = ''",
            "labels: list(string) = []",
            "display_name: string = ''",
        ],
    )
    register_kernel("TensorSummary")(_tensor_summary)
    register_op(
        "AudioSummaryV2",
        ["tag: string", "tensor: float", "sample_rate: float"],
        ["summary: string"],
        ["max_outputs: int >= 1 = 3"],
    )
    register_kernel("AudioSummaryV2")(_audio_summary)


_register()
