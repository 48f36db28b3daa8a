"""Tests (ops stage): EncodeBase64 and DecodeBase64 against TensorFlow (the oracle):
web-safe alphabet, optional padding, and which fault a malformed string reports."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from common.errors import InvalidArgumentError
from tests.common.ops import run1
from tests.common.ops.kernel_harness import assert_same_as_tf
from tests.common.ops.signatures import assert_signature_matches_tensorflow

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _strings(values: list[bytes], shape: tuple = (-1,)) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out.reshape(shape)


def _random_bytes() -> list[bytes]:
    rng = random.Random(11)
    return [b"", b"a", b"ab", b"abc", b"\xff\xfe?", *(rng.randbytes(n) for n in range(1, 70, 3))]


@pytest.mark.parametrize("name", ["EncodeBase64", "DecodeBase64"])
def test_signature_matches_tensorflow(name: str) -> None:
    assert_signature_matches_tensorflow(name)


def test_encode_is_web_safe_and_unpadded_by_default() -> None:
    out = run1("EncodeBase64", _strings([b"a", b"\xff\xfe?"]))
    assert out.tolist() == [b"YQ", b"__4_"]


def test_decode_accepts_missing_padding_and_ignores_trailing_bits() -> None:
    out = run1("DecodeBase64", _strings([b"YQ==", b"YQ", b"YR", b"YWI=", b""]))
    assert out.tolist() == [b"a", b"a", b"a", b"ab", b""]


@pytest.mark.parametrize("pad", [False, True])
def test_round_trip_matches_tensorflow(pad: bool) -> None:
    pytest.importorskip("tensorflow")
    data = _strings(_random_bytes()[:24], (4, 6))
    assert_same_as_tf("EncodeBase64", {"input": data}, {"pad": pad})
    encoded = run1("EncodeBase64", data, pad=pad)
    assert_same_as_tf("DecodeBase64", {"input": encoded})
    np.testing.assert_array_equal(run1("DecodeBase64", encoded), data)


@pytest.mark.parametrize(
    "text",
    [
        b"Y",
        b"YW=j",
        b"a+b/",
        b"YWI==",
        b"YQ=",
        b"YWJj\n",
        b"YW I",
        b"Y=AAA",
        b"YQ=A",
        b"=AAA",
        b"AAAAA",
    ],
)
def test_malformed_input_fails_as_tensorflow(text: bytes) -> None:
    pytest.importorskip("tensorflow")
    assert_same_as_tf("DecodeBase64", {"input": _strings([b"YWJj", text])})


def test_decode_error_is_invalid_argument() -> None:
    with pytest.raises(InvalidArgumentError, match="cannot be 1 modulo 4"):
        run1("DecodeBase64", _strings([b"YWJjZ"]))
