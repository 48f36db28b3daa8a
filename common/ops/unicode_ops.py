"""Ops (executor stage): UnicodeDecode, UnicodeDecodeWithOffsets and UnicodeEncode
(tf.strings.unicode_decode / unicode_split / unicode_encode), as TensorFlow's
unicode_ops.cc: strings to code points as a ragged pair (row_splits, char_values) and back.

An ill-formed sequence counts as TensorFlow's converter counts it, one maximal subpart per
error (Python's codecs follow the same Unicode practice): replaced by `replacement_char`,
skipped ("ignore"), or InvalidArgument ("strict"). replace_control_characters replaces the
C0 controls (below U+0020) as TensorFlow does. Stateless kernels, safe from any thread.
"""

from __future__ import annotations

import codecs
import threading
from collections.abc import Callable

import numpy as np

from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops.registry import KernelConstruction, register_kernel, register_op

_DECODE_ATTRS = [
    "input_encoding: string",
    "errors: {'strict', 'replace', 'ignore'} = 'replace'",
    "replacement_char: int = 65533",
    "replace_control_characters: bool = false",
    "Tsplits: {int32, int64} = DT_INT64",
]
register_op(
    "UnicodeDecode",
    inputs=["input: string"],
    outputs=["row_splits: Tsplits", "char_values: int32"],
    attrs=_DECODE_ATTRS,
)
register_op(
    "UnicodeDecodeWithOffsets",
    inputs=["input: string"],
    outputs=["row_splits: Tsplits", "char_values: int32", "char_to_byte_starts: int64"],
    attrs=_DECODE_ATTRS,
)
register_op(
    "UnicodeEncode",
    inputs=["input_values: int32", "input_splits: Tsplits"],
    outputs=["output: string"],
    attrs=[
        "errors: {'ignore', 'replace', 'strict'} = 'replace'",
        "output_encoding: {'UTF-8', 'UTF-16-BE', 'UTF-32-BE'}",
        "replacement_char: int = 65533",
        "Tsplits: {int32, int64} = DT_INT64",
    ],
)


def _codec(encoding: str) -> str:
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        raise InvalidArgumentError(
            f"Could not create converter for input encoding: {encoding}"
        ) from None


# One codecs error handler for every decode: it records each ill-formed span in the
# calling thread's list and skips it (decode_string then emits what `errors` asks for).
_RECORDED = threading.local()
_RECORD = "flowrt-unicode-record"


def _record(e: UnicodeError) -> tuple[str, int]:
    assert isinstance(e, UnicodeDecodeError)
    _RECORDED.bad.append((e.start, e.end))
    return "", e.end


codecs.register_error(_RECORD, _record)


def decode_string(
    data: bytes, codec: str, errors: str, replacement: int, replace_controls: bool
) -> tuple[list[int], list[int]]:
    """The code points of `data` and the byte offset where each starts."""
    bad: list[tuple[int, int]] = []
    _RECORDED.bad = bad
    text = codecs.decode(data, codec, errors=_RECORD)
    chars: list[int] = []
    starts: list[int] = []
    pos, k = 0, 0

    def flush_errors_at_pos() -> None:
        nonlocal pos, k
        while k < len(bad) and bad[k][0] == pos:
            if errors == "strict":
                raise InvalidArgumentError("Invalid formatting on input string")
            if errors == "replace":
                chars.append(replacement)
                starts.append(pos)
            pos, k = bad[k][1], k + 1

    for ch in text:
        flush_errors_at_pos()
        cp = ord(ch)
        if replace_controls and cp < 0x20:
            if errors != "ignore":
                chars.append(replacement)
                starts.append(pos)
        else:
            chars.append(cp)
            starts.append(pos)
        pos += len(ch.encode(codec, errors="surrogatepass"))
    flush_errors_at_pos()
    return chars, starts


def _decode_kernel(with_offsets: bool) -> Callable:
    def factory(k: KernelConstruction) -> Callable:
        codec = _codec(str(k.attr("input_encoding")))
        errors = str(k.attr("errors"))
        replacement = int(k.attr("replacement_char"))
        controls = bool(k.attr("replace_control_characters"))
        splits_dtype = np.int32 if k.attr("Tsplits") == DataType.DT_INT32 else np.int64

        def compute(ctx, inputs: list) -> list:
            splits, values, offsets = [0], [], []
            for s in np.asarray(inputs[0], dtype=object).reshape(-1):
                chars, starts = decode_string(s, codec, errors, replacement, controls)
                values += chars
                offsets += starts
                splits.append(len(values))
            out = [np.array(splits, splits_dtype), np.array(values, np.int32)]
            return out + [np.array(offsets, np.int64)] if with_offsets else out

        return compute

    return factory


register_kernel("UnicodeDecode")(_decode_kernel(False))
register_kernel("UnicodeDecodeWithOffsets")(_decode_kernel(True))


def encode_chars(chars: np.ndarray, codec: str, errors: str, replacement: int) -> bytes:
    out = []
    for cp in chars.tolist():
        if 0 <= cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF:
            out.append(chr(cp))
        elif errors == "strict":
            raise InvalidArgumentError(f"Invalid code point: {cp}")
        elif errors == "replace":
            out.append(chr(replacement))
    return "".join(out).encode(codec)


@register_kernel("UnicodeEncode")
def _unicode_encode(k: KernelConstruction) -> Callable:
    codec = _codec(str(k.attr("output_encoding")))
    errors = str(k.attr("errors"))
    replacement = int(k.attr("replacement_char"))

    def compute(ctx, inputs: list) -> list:
        values = np.asarray(inputs[0]).reshape(-1)
        splits = np.asarray(inputs[1]).reshape(-1)
        if (
            splits.size == 0
            or splits[0] != 0
            or splits[-1] != values.size
            or (np.any(np.diff(splits) < 0))
        ):
            raise InvalidArgumentError("Invalid splits")  # TF validates them as ragged splits
        out = np.empty(max(splits.size - 1, 0), dtype=object)
        for i in range(out.size):
            out[i] = encode_chars(values[splits[i] : splits[i + 1]], codec, errors, replacement)
        return [out]

    return compute
