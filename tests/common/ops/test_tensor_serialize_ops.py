"""Tests (ops stage): SerializeTensor and ParseTensor against TensorFlow (the oracle): the
serialized bytes equal TensorFlow's for every kind of dtype and shape, values come back
unchanged, and a bad string or dtype fails as TensorFlow's kernel does."""

from __future__ import annotations

import os

import numpy as np
import pytest

from common.errors import InvalidArgumentError
from tests.common.ops import run1
from tests.common.ops.kernel_harness import assert_same_as_tf
from tests.common.ops.signatures import assert_signature_matches_tensorflow

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

VALUES = [
    np.float32(3.0),
    np.arange(6, dtype=np.float64).reshape(2, 3),
    np.array([[1, -2]], np.int32),
    np.array([7], np.int64),
    np.array([1, 255], np.uint8),
    np.array([True, False]),
    np.array([1 + 2j], np.complex64),
    np.array([0.5, -1.5], np.float16),
    np.zeros((0, 2), np.int32),
    np.array([b"a", b"", b"\xff\x00bc"], dtype=object),
    np.array(b"x", dtype=object),
]


@pytest.mark.parametrize("name", ["SerializeTensor", "ParseTensor"])
def test_signature_matches_tensorflow(name: str) -> None:
    assert_signature_matches_tensorflow(name)


@pytest.mark.parametrize("value", VALUES, ids=lambda v: f"{v.dtype}{list(v.shape)}")
def test_bytes_equal_tensorflows_and_parse_back(value: np.ndarray) -> None:
    pytest.importorskip("tensorflow")
    assert_same_as_tf("SerializeTensor", {"tensor": value})
    serialized = run1("SerializeTensor", value)
    parsed = run1("ParseTensor", serialized, out_type=_dtype(value))
    assert parsed.shape == value.shape
    np.testing.assert_array_equal(parsed, value)
    assert_same_as_tf("ParseTensor", {"serialized": serialized}, {"out_type": _dtype(value)})


def _dtype(value: np.ndarray):
    from common import dtypes

    if value.dtype == object:
        return dtypes.DataType.DT_STRING
    return dtypes.from_numpy(value.dtype)


def test_errors_match_tensorflow() -> None:
    pytest.importorskip("tensorflow")
    from common.dtypes import DataType

    one = run1("SerializeTensor", np.float32(1.0))
    for serialized, out_type in [
        (one, DataType.DT_DOUBLE),  # Type mismatch between parsed tensor (float) and ...
        (np.array(b"junk\xff", dtype=object), DataType.DT_FLOAT),  # not a TensorProto
        (np.array([one.item()], dtype=object), DataType.DT_FLOAT),  # not a scalar
    ]:
        assert_same_as_tf("ParseTensor", {"serialized": serialized}, {"out_type": out_type})
    with pytest.raises(InvalidArgumentError, match="Type mismatch"):
        run1("ParseTensor", one, out_type=DataType.DT_DOUBLE)
