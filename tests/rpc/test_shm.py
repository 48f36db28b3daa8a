"""Same-host shared-memory transport: segments, cleanup, the receiver pool, negotiation."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from common.errors import DataLossError
from protos import worker_pb2
from rpc import shm
from rpc import tensor_stream as ts

pytestmark = pytest.mark.skipif(not shm.enabled(), reason="no /dev/shm")

KEY = (
    "/job:worker/replica:0/task:1/device:CPU:0;0000000000000001;"
    "/job:worker/replica:0/task:0/device:CPU:0;edge_1_x;0:0"
)


def _exists(name: str) -> bool:
    return os.path.exists(os.path.join(shm.SHM_DIR, name))


def _request(lent=None) -> worker_pb2.RecvTensorRequest:
    request = worker_pb2.RecvTensorRequest(step_id=1, rendezvous_key=KEY)
    ts.shm_offer(request, lent)
    return request


def test_segment_round_trip_unlinks_on_map():
    value = np.arange(1 << 16, dtype=np.float32)
    name = shm.write_segment(memoryview(value).cast("B"))
    assert _exists(name)
    mapping = shm.map_segment(name, value.nbytes)
    assert not _exists(name)
    out = np.frombuffer(mapping, np.float32)
    assert out.tobytes() == value.tobytes()
    assert not out.flags.writeable
    assert shm.reap(0.0) == 0 and name not in shm._pending


def test_wrong_size_or_missing_segment_is_data_loss():
    name = shm.write_segment(memoryview(b"abcd"))
    with pytest.raises(DataLossError, match="4 bytes, expected 8"):
        shm.map_segment(name, 8)
    assert not _exists(name)  # unlinked even on failure
    with pytest.raises(DataLossError, match="is gone"):
        shm.map_segment(name, 4)
    with pytest.raises(DataLossError, match="Invalid shared-memory segment name"):
        shm.map_segment("../etc/passwd", 4)


def test_reaper_unlinks_segments_nobody_mapped():
    name = shm.write_segment(memoryview(b"x" * 100))
    assert shm.reap(0.0, ttl=1e9) == 0 and _exists(name)
    assert shm.reap(1e12) == 1
    assert not _exists(name) and name not in shm._pending


def test_segments_of_dead_producers_are_swept(monkeypatch):
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = f"{shm.PREFIX}{int(proc.stdout)}-{'0' * 32}"
    with open(os.path.join(shm.SHM_DIR, dead), "wb") as f:
        f.write(b"left over")
    monkeypatch.setattr(shm, "_swept", False)
    name = shm.write_segment(memoryview(b"y"))
    assert not _exists(dead)
    shm.map_segment(name, 1)


def test_stream_uses_shared_memory_only_for_a_matching_host():
    value = np.arange(shm.MIN_BYTES // 2, dtype=np.int32).reshape(-1, 4)
    messages = list(ts.encode_stream(_request(), value, False))
    assert len(messages) == 1
    head = worker_pb2.RecvTensorResponse.FromString(messages[0])
    assert head.transport_options.type_url == shm.TENSOR_TYPE
    out, dead = ts.decode_chunks(messages)
    assert not dead and out.shape == value.shape and (out == value).all()

    other = worker_pb2.RecvTensorRequest(step_id=1, rendezvous_key=KEY)
    other.transport_options.type_url = shm.OFFER_TYPE
    other.transport_options.value = b"another host"
    messages = list(ts.encode_stream(other, value, False))
    assert len(messages) == 1 + -(-value.nbytes // ts.CHUNK_BYTES)
    assert (ts.decode_chunks(messages)[0] == value).all()


def test_small_values_travel_inline_in_one_message():
    messages = list(ts.encode_stream(_request(), np.float32(2.5), False))
    assert len(messages) == 1
    assert ts.decode_chunks(messages)[0] == np.float32(2.5)


def test_pool_reuses_a_segment_once_its_array_is_gone():
    pool = shm.ReceiverPool()
    try:
        first = np.full(shm.MIN_BYTES // 4, 1.0, np.float32)
        name = shm.write_segment(memoryview(first).cast("B"))
        out = np.frombuffer(pool.receive(KEY, name, first.nbytes, None), np.float32)
        assert len(pool) == 1 and (out == 1.0).all()
        assert pool.lend(KEY) is None  # `out` still aliases the segment
        del out
        lent = pool.lend(KEY)
        assert lent is not None and lent[1] == first.nbytes
        assert pool.lend(KEY) is None  # lent once
        second = np.full_like(first, 2.0)
        assert shm.write_into(lent[0], memoryview(second).cast("B"))
        out = np.frombuffer(pool.receive(KEY, lent[0], second.nbytes, lent[0]), np.float32)
        assert (out == 2.0).all() and len(pool) == 1
        assert not shm.write_into(lent[0], memoryview(b"short"))
    finally:
        del out
        names = [s for s in pool._segments]
        pool.close()
    assert not any(_exists(n) for n in names)


def test_full_pool_maps_and_unlinks():
    pool = shm.ReceiverPool(max_bytes=0)
    name = shm.write_segment(memoryview(b"z" * 64))
    mapping = pool.receive(KEY, name, 64, None)
    assert bytes(mapping) == b"z" * 64 and len(pool) == 0 and not _exists(name)


def _counting_opens(monkeypatch) -> list:
    opened: list = []
    real_open = os.open

    def counted(path, *args, **kwargs):
        opened.append(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counted)
    return opened


def test_noted_key_gets_one_segment_written_in_place(monkeypatch):
    """A value that came over the socket: the pool makes one segment for its key, the
    producer maps it once, and every later hand-off is a copy into that mapping."""
    pool = shm.ReceiverPool()
    n = shm.MIN_BYTES
    out = None
    try:
        assert pool.lend(KEY) is None  # nothing known of the key yet
        pool.note(KEY, n)
        lent = pool.lend(KEY)
        assert lent is not None and lent[1] == n and len(pool) == 1
        assert lent[0].startswith(f"{shm.PREFIX}{os.getpid()}-") and _exists(lent[0])
        for k in range(3):
            opened = _counting_opens(monkeypatch)
            value = np.full(n // 4, float(k), np.float32)
            assert shm.write_into(lent[0], memoryview(value).cast("B"))
            assert len(opened) == (1 if k == 0 else 0)  # mapped by the producer once
            monkeypatch.undo()
            out = np.frombuffer(pool.receive(KEY, lent[0], n, lent[0]), np.float32)
            assert (out == float(k)).all()
            pool.note(KEY, n)  # arriving over the socket again makes no second segment
            assert pool.lend(KEY) is None and len(pool) == 1  # `out` still holds it
            del out
            out = None
            again = pool.lend(KEY)
            assert again == lent
    finally:
        del out
        names = list(pool._segments)
        pool.close()
    assert not any(_exists(n) for n in names)


def test_made_segment_sweeps_segments_of_dead_processes(monkeypatch):
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = f"{shm.PREFIX}{int(proc.stdout)}-{'1' * 32}"
    with open(os.path.join(shm.SHM_DIR, dead), "wb") as f:
        f.write(b"a dead receiver's pooled segment")
    monkeypatch.setattr(shm, "_swept", False)
    pool = shm.ReceiverPool()
    pool.note(KEY, shm.MIN_BYTES)
    assert pool.lend(KEY) is not None
    assert not _exists(dead)
    pool.close()


def test_full_shared_memory_makes_no_segment(monkeypatch):
    """No room in /dev/shm: the value keeps coming over the socket (a segment whose pages
    were not there would kill the producer with SIGBUS when it wrote through its map)."""

    def full(fd, offset, length):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    mine = f"{shm.PREFIX}{os.getpid()}-"
    before = {n for n in os.listdir(shm.SHM_DIR) if n.startswith(mine)}
    pool = shm.ReceiverPool()
    pool.note(KEY, shm.MIN_BYTES)
    assert pool.lend(KEY) is None and len(pool) == 0
    assert {n for n in os.listdir(shm.SHM_DIR) if n.startswith(mine)} <= before


def test_small_values_are_not_noted():
    pool = shm.ReceiverPool()
    pool.note(KEY, shm.MIN_BYTES - 1)
    assert pool.lend(KEY) is None and len(pool) == 0


def test_producer_mappings_are_bounded():
    n = shm.MIN_BYTES
    mappings = shm._WritableMappings(max_bytes=n)
    names = [shm.write_segment(memoryview(bytes(n))) for _ in range(2)]
    try:
        for name in names:
            assert mappings.get(name, n) is not None
        assert len(mappings) == 1  # the older one dropped
        assert mappings.get(names[1], n + 1) is None  # wrong size: not written
        assert mappings.get(f"{shm.PREFIX}{os.getpid()}-{'0' * 32}", n) is None  # gone
    finally:
        for name in names:
            shm.map_segment(name, n)  # unlinks


def test_lent_segment_short_path_and_what_falls_back(monkeypatch):
    """The sender looks the lent segment up when the request arrives (lent_segment) and
    writes a fitting value into it (write_lent); the receiver views it in place. A value
    that does not fit (size, layout, byte order, dtype) gets None: encode_stream answers
    it, and decode_chunks reads an answer naming another segment the general way."""
    pool = shm.ReceiverPool()
    monkeypatch.setattr(shm, "POOL", pool)  # the pool decode_chunks receives into
    n = 64 << 12  # 256 KB: above the inline size
    out = None
    try:
        pool.note(KEY, n)
        lent = pool.lend(KEY)
        assert lent is not None
        request = worker_pb2.RecvTensorRequest.FromString(_request(lent).SerializeToString())
        name, mapping = ts.lent_segment(request)
        assert name == lent[0] and len(mapping) == n
        assert ts.lent_segment(_request()) is None  # offers shared memory, lends nothing
        value = np.arange(n // 4, dtype=np.int32).reshape(64, -1)
        for misfit in (
            value[:, :-1],  # size
            np.asfortranarray(value),  # layout
            value.astype(">i4"),  # byte order
            np.zeros(n // 8, dtype=object),  # not memcpy-able
        ):
            assert ts.write_lent(misfit, name, mapping) is None
        head = ts.write_lent(value, name, mapping)
        assert head is not None
        parsed = worker_pb2.RecvTensorResponse.FromString(head)
        assert (parsed.transport_options.type_url, parsed.transport_options.value) == (
            shm.TENSOR_TYPE,
            name.encode(),
        )
        out, is_dead = ts.decode_chunks([head], key=KEY, lent=name)
        assert not is_dead and out.dtype == np.int32 and out.shape == (64, n // 256)
        assert out.tobytes() == value.tobytes()
        assert np.shares_memory(out, np.frombuffer(pool._segments[name].mapping, np.uint8))
        del out
        out = None
        # An answer in a segment of its own (not the lent one): mapped the general way.
        other = ts.encode_stream(_request(), value * 2, False)
        out, _ = ts.decode_chunks(list(other), key=KEY, lent=pool.lend(KEY)[0])
        assert out.tobytes() == (value * 2).tobytes()
    finally:
        del out
        pool.close()
