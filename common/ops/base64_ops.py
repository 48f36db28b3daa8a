"""Ops (executor stage): EncodeBase64 and DecodeBase64 (tf.io.encode_base64 /
decode_base64), TensorFlow's web-safe base64 ('-' and '_'). Decoding follows TF's
lib/strings/base64.cc step by step: padding is optional, only a final group of four may
carry it, trailing bits are ignored, and the first fault met (an invalid character in a
leading group, a tail of one character, an invalid character in the tail) is the error.
Stateless kernels, safe from any thread; values equal TensorFlow's bit for bit.
"""

from __future__ import annotations

import base64
from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops.registry import KernelConstruction, register_kernel, register_op

register_op(
    "EncodeBase64",
    inputs=["input: string"],
    outputs=["output: string"],
    attrs=["pad: bool = false"],
)
register_op("DecodeBase64", inputs=["input: string"], outputs=["output: string"])

_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _check_chars(chunk: bytes) -> None:
    if chunk.translate(None, _ALPHABET):
        raise InvalidArgumentError("Invalid character found in base64.")


def encode(data: bytes, pad: bool) -> bytes:
    out = base64.urlsafe_b64encode(data)
    return out if pad else out.rstrip(b"=")


def decode(data: bytes) -> bytes:
    if not data:
        return b""
    groups = (len(data) - 1) // 4  # TF decodes groups while more than four chars remain
    head, tail = data[: 4 * groups], data[4 * groups :]
    _check_chars(head)
    if len(tail) == 4 and tail[2:] == b"==":
        tail = tail[:2]
    elif len(tail) == 4 and tail[3:] == b"=":
        tail = tail[:3]
    if len(tail) == 1:
        raise InvalidArgumentError("Base64 string length cannot be 1 modulo 4.")
    _check_chars(tail)
    full = base64.urlsafe_b64decode(head + tail.ljust(4, b"A"))
    return full[: 3 * groups + len(tail) - 1]


def _map(fn: Callable[[bytes], bytes], values: np.ndarray) -> np.ndarray:
    out = np.empty(values.shape, dtype=object)
    for i, v in np.ndenumerate(values):
        out[i] = fn(v)
    return out


@register_kernel("EncodeBase64")
def _encode_base64(k: KernelConstruction) -> Callable:
    pad = bool(k.attr("pad"))

    def compute(ctx, inputs: list) -> list:
        return [_map(lambda v: encode(v, pad), np.asarray(inputs[0], dtype=object))]

    return compute


@register_kernel("DecodeBase64")
def _decode_base64(k: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        return [_map(decode, np.asarray(inputs[0], dtype=object))]

    return compute
