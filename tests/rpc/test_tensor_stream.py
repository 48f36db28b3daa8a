"""RecvTensorStream framing and the unary RecvTensorResponse (pure, no sockets)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from common.errors import DataLossError
from protos import worker_pb2
from rpc import tensor_stream as ts


@pytest.mark.parametrize(
    "value",
    [
        np.arange(1000, dtype=np.float64).reshape(10, 100),
        np.float32(2.5),
        np.zeros((0, 3), np.int32),
        np.array([True, False, True]),
        np.array([1.5, -2], dtype=ml_dtypes.bfloat16),
        np.array([1 + 2j], np.complex64),
        np.arange(12, dtype=np.int16).reshape(3, 4)[:, ::2],  # not contiguous
    ],
)
def test_round_trip_in_small_chunks(value):
    messages = list(ts.encode_chunks(value, False, chunk_bytes=7))
    head = worker_pb2.RecvTensorResponse.FromString(messages[0])
    assert not head.tensor.tensor_content  # the bytes follow in their own messages
    assert all(len(m) <= 7 for m in messages[1:])
    out, is_dead = ts.decode_chunks(messages)
    assert not is_dead
    assert out.dtype == np.asarray(value).dtype and out.shape == np.shape(value)
    assert out.tobytes() == np.ascontiguousarray(value).tobytes()


def test_strings_travel_in_the_first_message():
    value = np.array([b"a", b"", b"xyz"], dtype=object)
    messages = list(ts.encode_chunks(value, False, chunk_bytes=2))
    assert len(messages) == 1
    out, _ = ts.decode_chunks(messages)
    assert out.tolist() == [b"a", b"", b"xyz"]


def test_dead_value():
    messages = list(ts.encode_chunks(None, True))
    assert len(messages) == 1
    assert ts.decode_chunks(messages) == (None, True)


def test_missing_or_extra_bytes_are_data_loss():
    messages = list(ts.encode_chunks(np.arange(4, dtype=np.int32), False, chunk_bytes=8))
    with pytest.raises(DataLossError, match="got 8 of 16 bytes"):
        ts.decode_chunks(messages[:-1])
    with pytest.raises(DataLossError, match="more than the announced 16 bytes"):
        ts.decode_chunks(messages + [b"x"])
    with pytest.raises(DataLossError, match="empty stream"):
        ts.decode_chunks([])
    dead = list(ts.encode_chunks(None, True))
    with pytest.raises(DataLossError, match="unexpected data"):
        ts.decode_chunks(dead + [b"x"])


def test_unary_response_is_tensor_content_form():
    resp = ts.to_response(np.array([1, 2], np.int64), False)
    assert resp.tensor.tensor_content == np.array([1, 2], np.int64).tobytes()
    parsed = worker_pb2.RecvTensorResponse.FromString(resp.SerializeToString())
    value, is_dead = ts.from_response(parsed)
    assert (value.tolist(), is_dead) == ([1, 2], False)
    dead = ts.to_response(None, True)
    assert ts.from_response(dead) == (None, True)
