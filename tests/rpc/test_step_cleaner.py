"""Master step cleanup (rpc.step_cleaner): batches per task, flush, TF-worker fallback."""

from __future__ import annotations

import struct
import threading

import grpc
import pytest

from rpc import step_cleaner
from rpc.step_cleaner import StepCleaner


class _Unimplemented(grpc.RpcError):
    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNIMPLEMENTED


class _FakeTask:
    """A channel (the batch call) and a stub (CleanupGraph) recording what they got."""

    def __init__(self, batched: bool) -> None:
        self.batched = batched
        self.batches: list[list[int]] = []
        self.singles: list[int] = []
        self.lock = threading.Lock()

    # channel side
    def unary_unary(self, path: str):
        assert path == step_cleaner.CLEANUP_BATCH_PATH
        return self._batch

    def _batch(self, request: bytes, timeout: float) -> bytes:
        if not self.batched:
            raise _Unimplemented()
        with self.lock:
            self.batches.append([s for (s,) in struct.iter_unpack("<q", request)])
        return b""

    # stub side
    def CleanupGraph(self, request, timeout: float) -> None:  # noqa: N802 (gRPC name)
        with self.lock:
            self.singles.append(request.step_id)


@pytest.fixture
def tasks():
    return {"/job:w/replica:0/task:0": _FakeTask(True), "/job:w/replica:0/task:1": _FakeTask(False)}


@pytest.fixture
def cleaner(tasks):
    c = StepCleaner(lambda t: tasks[t], lambda t: tasks[t], rpc_timeout=5.0)
    yield c
    c.close(timeout=10)


def test_flush_sends_pending_steps_batched_or_one_by_one(cleaner, tasks):
    ours, tf = tasks.values()
    for step_id in (1, 2, 3):
        cleaner.add(step_id, list(tasks))
    assert cleaner.flush(timeout=10)
    assert sorted(s for b in ours.batches for s in b) == [1, 2, 3]
    assert sorted(tf.singles) == [1, 2, 3]
    assert tf.batches == []


def test_unimplemented_task_is_remembered(cleaner, tasks):
    tf = tasks["/job:w/replica:0/task:1"]
    cleaner.add(7, [next(iter(tasks))])
    cleaner.add(8, ["/job:w/replica:0/task:1"])
    assert cleaner.flush(timeout=10)
    tf.batched = True  # would now accept a batch, but the cleaner no longer tries
    cleaner.add(9, ["/job:w/replica:0/task:1"])
    assert cleaner.flush(timeout=10)
    assert tf.singles == [8, 9]
    assert tf.batches == []


def test_a_full_batch_goes_out_in_one_call(cleaner, tasks, monkeypatch):
    monkeypatch.setattr(step_cleaner, "MAX_DELAY_S", 3600.0)  # only the size triggers
    ours = tasks["/job:w/replica:0/task:0"]
    for step_id in range(step_cleaner.MAX_BATCH):
        cleaner.add(step_id, ["/job:w/replica:0/task:0"])
    assert cleaner.flush(timeout=10)
    assert [len(b) for b in ours.batches] == [step_cleaner.MAX_BATCH]


def test_close_sends_what_is_pending_and_stops_the_thread(tasks):
    c = StepCleaner(lambda t: tasks[t], lambda t: tasks[t], rpc_timeout=5.0)
    c.add(11, ["/job:w/replica:0/task:0"])
    c.close(timeout=10)
    assert tasks["/job:w/replica:0/task:0"].batches == [[11]]
    assert not [t for t in threading.enumerate() if t.name == "flowrt-master-cleanup"]
