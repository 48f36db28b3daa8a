"""rpc.wire: messages split into views of their bytes and written back as parts equal
what protobuf writes and reads (pure, no sockets)."""

from __future__ import annotations

import hypothesis
import hypothesis.strategies as st
import numpy as np
import pytest

from common import tensor as tensor_util
from common.errors import InvalidArgumentError
from protos import master_pb2, worker_pb2
from rpc import wire

FEED = master_pb2.RunStepRequest.FEED_FIELD_NUMBER


def _request() -> master_pb2.RunStepRequest:
    request = master_pb2.RunStepRequest(session_handle="s", fetch=["y:0"], request_id=-7)
    values = {
        "big:0": np.arange(1 << 19, dtype=np.float32),
        "small:0": np.ones(3, np.int64),
        "other:0": np.arange(1 << 18, dtype=np.float64),
    }
    for name, value in values.items():
        request.feed.add(name=name).tensor.CopyFrom(tensor_util.as_proto_tensor_content(value))
    request.options.timeout_in_ms = 5
    return request


def test_large_feeds_become_views_and_the_rest_parses() -> None:
    request = _request()
    data = request.SerializeToString()
    message, feeds = wire.split_named_tensors(master_pb2.RunStepRequest, data, FEED)
    assert [name for name, _ in feeds] == ["big:0", "small:0", "other:0"]
    assert [type(v).__name__ for _, v in feeds] == ["SplitTensor", "TensorProto", "SplitTensor"]
    assert message.session_handle == "s" and message.request_id == -7
    assert message.options.timeout_in_ms == 5 and list(message.fetch) == ["y:0"]
    for (name, value), named in zip(feeds, request.feed):
        assert wire.whole(value) == named.tensor, name
        assert value.ByteSize() == named.tensor.ByteSize()
        assert value.dtype == named.tensor.dtype


def test_split_content_is_a_view_not_a_copy() -> None:
    data = bytearray(_request().SerializeToString())
    _, feeds = wire.split_named_tensors(master_pb2.RunStepRequest, data, FEED)
    big = feeds[0][1]
    assert isinstance(big, wire.SplitTensor)
    marker = b"\xab\xcd\xef\x01"
    assert marker not in data
    big.content[0:4] = marker  # writes through to `data`
    assert data.count(marker) == 1


def test_parts_join_to_what_protobuf_reads() -> None:
    request = _request()
    message, feeds = wire.split_named_tensors(
        master_pb2.RunStepRequest, request.SerializeToString(), FEED
    )
    message.ClearField("feed")
    rebuilt = master_pb2.RunStepRequest.FromString(wire.PartsMessage(message, FEED, feeds).join())
    assert rebuilt == request


def test_a_run_graph_request_with_split_sends() -> None:
    _, feeds = wire.split_named_tensors(
        master_pb2.RunStepRequest, _request().SerializeToString(), FEED
    )
    base = worker_pb2.RunGraphRequest(graph_handle="g", step_id=3, recv_key=["k"])
    field = worker_pb2.RunGraphRequest.SEND_FIELD_NUMBER
    rebuilt = worker_pb2.RunGraphRequest.FromString(wire.PartsMessage(base, field, feeds).join())
    assert rebuilt.graph_handle == "g" and rebuilt.step_id == 3
    assert {s.name: s.tensor for s in rebuilt.send} == {n: wire.whole(v) for n, v in feeds}


def test_small_messages_parse_as_usual() -> None:
    request = master_pb2.RunStepRequest(session_handle="s")
    request.feed.add(name="x:0").tensor.CopyFrom(tensor_util.as_proto_tensor_content(np.ones(2)))
    _, feeds = wire.split_named_tensors(
        master_pb2.RunStepRequest, request.SerializeToString(), FEED
    )
    assert feeds == [("x:0", request.feed[0].tensor)]


@pytest.mark.parametrize("cut", [1, 7, 1000, 2 << 20])
def test_a_truncated_message_is_invalid_argument(cut: int) -> None:
    data = _request().SerializeToString()
    with pytest.raises(InvalidArgumentError, match="Malformed RunStepRequest"):
        wire.split_named_tensors(master_pb2.RunStepRequest, data[:-cut], FEED)


def test_a_group_wire_type_is_invalid_argument() -> None:
    data = _request().SerializeToString() + bytes([(9 << 3) | 3])
    with pytest.raises(InvalidArgumentError, match="Malformed RunStepRequest"):
        wire.split_named_tensors(master_pb2.RunStepRequest, data, FEED)


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(data=st.binary(max_size=512), cut=st.integers(0, 64))
def test_arbitrary_bytes_split_or_are_invalid_argument(data: bytes, cut: int) -> None:
    # min_bytes=0 sends every message through the splitting walk, not protobuf's parser.
    valid = _request().SerializeToString()
    for payload in (data, valid[: len(valid) - cut] + data[:cut]):
        try:
            wire.split_named_tensors(master_pb2.RunStepRequest, payload, FEED, min_bytes=0)
        except InvalidArgumentError:
            pass
