"""Worker-to-worker tensors over RecvTensorOne: a value whose RecvTensorStream answer is one
message (inline, shared memory) comes back in the unary RecvTensorOne answer; one that
needs several messages (no shared memory, above the inline size) is put back into the
producer's rendezvous and streamed by a second call, arriving exactly. Two in-process
workers on port 0, the same-host socket (rpc.local_rpc) off as between hosts."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from common.dtypes import DataType
from rpc import tensor_stream
from tests.worker.test_recv_tensor import _no_unary, _transfer
from worker.service import WorkerServicer


@pytest.fixture(autouse=True)
def _grpc_only(monkeypatch):
    monkeypatch.setenv("FLOWRT_LOCAL_RPC", "0")


def _count_calls(monkeypatch) -> Counter:
    calls: Counter = Counter()
    for name in ("RecvTensorOne", "RecvTensorStream"):
        original = getattr(WorkerServicer, name)

        def counted(self, request, context, original=original, name=name):
            calls[name] += 1
            return original(self, request, context)

        monkeypatch.setattr(WorkerServicer, name, counted)
    return calls


def test_small_value_needs_only_recv_tensor_one(local_cluster, monkeypatch):
    _no_unary(monkeypatch)
    calls = _count_calls(monkeypatch)
    value = np.arange(12, dtype=np.float32).reshape(3, 4)

    out, _ = _transfer(local_cluster, value, DataType.DT_FLOAT)

    np.testing.assert_array_equal(out, value)
    assert calls == {"RecvTensorOne": 1}


def test_value_of_several_messages_is_streamed_after_recv_tensor_one(local_cluster, monkeypatch):
    monkeypatch.setenv("FLOWRT_SHM", "0")  # no shared memory: the value must be chunked
    _no_unary(monkeypatch)
    calls = _count_calls(monkeypatch)
    value = np.arange(300_000, dtype=np.float32)  # 1.2 MB: a header and a chunk
    assert value.nbytes > tensor_stream.INLINE_BYTES

    out, _ = _transfer(local_cluster, value, DataType.DT_FLOAT)

    np.testing.assert_array_equal(out, value)
    assert calls == {"RecvTensorOne": 1, "RecvTensorStream": 1}
