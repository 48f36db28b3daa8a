"""Master, step cleanup: CleanupGraph for finished steps, batched per task, in the background.

After every step the master frees the step's state on its tasks (the rendezvous table
entry). TensorFlow's master sends one CleanupGraph per task per step without waiting; here
each of those costs a gRPC call in Python on both ends (about a quarter of a trivial
step's CPU), so finished steps are collected and sent as ONE CleanupGraphBatch per task
(worker.service: the step ids as little-endian int64s; over the worker's Unix socket when
it is on this host, rpc.local_rpc) when MAX_BATCH steps are pending or the oldest has
waited MAX_DELAY_S. A task answering UNIMPLEMENTED (a TensorFlow worker)
gets one CleanupGraph per step instead, from then on. Errors are ignored: a dead task has
no step state left to free. Aborting a failed step does not come here (it must be
immediate: PartitionRunner sends CleanupGraph at once).

`add` waits only while MAX_PENDING steps are queued (backpressure); `flush` sends what is
pending now and waits until it has been sent; `close` (master shutdown) sends it and stops
the thread. One daemon thread sends; it exits after IDLE_EXIT_S without work and is
restarted on demand. Thread-safe.
"""

from __future__ import annotations

import struct
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from protos import worker_pb2
from rpc.local_rpc import CLEANUP_BATCH, LocalPeers
from rpc.service_paths import CLEANUP_BATCH_PATH

MAX_BATCH = 32
MAX_DELAY_S = 0.02
MAX_PENDING = 4096
IDLE_EXIT_S = 5.0


class StepCleaner:
    """Batches CleanupGraph per task (see the module docstring)."""

    def __init__(
        self,
        channel_of: Callable[[str], grpc.Channel],
        stub_of: Callable[[str], Any],
        rpc_timeout: float,
        local: LocalPeers | None = None,
    ) -> None:
        self._channel_of = channel_of
        self._local = local
        self._stub_of = stub_of
        self._rpc_timeout = rpc_timeout
        self._cv = threading.Condition()
        self._pending: dict[str, list[int]] = {}  # task -> step ids
        self._num_pending = 0  # steps added and not yet taken by the sender
        self._oldest = 0.0
        self._sending = False
        self._flushing = 0  # callers of flush() waiting
        self._thread: threading.Thread | None = None
        self._unbatched: set[str] = set()  # tasks without CleanupGraphBatch (TensorFlow)
        self._batch_calls: dict[str, tuple[grpc.Channel, Any]] = {}
        self._closing = False

    def add(self, step_id: int, tasks: Sequence[str]) -> None:
        """Clean up `step_id` on `tasks`, soon."""
        with self._cv:
            while self._num_pending >= MAX_PENDING:
                self._cv.wait()
            for task in tasks:
                self._pending.setdefault(task, []).append(step_id)
            if self._num_pending == 0:
                self._oldest = time.monotonic()
            self._num_pending += 1
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="flowrt-master-cleanup", daemon=True
                )
                self._thread.start()
            elif self._num_pending == 1 or self._num_pending >= MAX_BATCH:
                self._cv.notify_all()  # the sender waits for the first step or a full batch

    def flush(self, timeout: float | None = None) -> bool:
        """Send what is pending now; False if it was not all sent within `timeout`."""
        with self._cv:
            self._flushing += 1
            self._cv.notify_all()
            try:
                return self._cv.wait_for(
                    lambda: self._num_pending == 0 and not self._sending, timeout
                )
            finally:
                self._flushing -= 1

    def close(self, timeout: float | None = None) -> None:
        """Send what is pending and stop the sender thread (a later `add` restarts it)."""
        with self._cv:
            self._closing = True
            self._cv.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
        with self._cv:
            self._closing = False

    # -- the sender thread -----------------------------------------------------------------
    def _run(self) -> None:
        while True:
            batch = self._take()
            if batch is None:
                return
            try:
                self._send(batch)
            finally:
                with self._cv:
                    self._sending = False
                    self._cv.notify_all()

    def _take(self) -> dict[str, list[int]] | None:
        """The next batch, or None when idle long enough to exit (thread cleared)."""
        with self._cv:
            while True:
                if self._num_pending:
                    waited = time.monotonic() - self._oldest
                    due = self._num_pending >= MAX_BATCH or self._flushing or self._closing
                    if due or waited >= MAX_DELAY_S:
                        break
                    self._cv.wait(MAX_DELAY_S - waited)
                elif self._closing or (not self._cv.wait(IDLE_EXIT_S) and not self._num_pending):
                    self._thread = None
                    return None
            batch, self._pending = self._pending, {}
            self._num_pending = 0
            self._sending = True
            self._cv.notify_all()  # adders held back by MAX_PENDING
            return batch

    def _send(self, batch: dict[str, list[int]]) -> None:
        for task, step_ids in batch.items():
            try:
                if task not in self._unbatched:
                    payload = struct.pack(f"<{len(step_ids)}q", *step_ids)
                    local = self._local and self._local.start(
                        task, CLEANUP_BATCH, payload, self._rpc_timeout
                    )
                    if local:
                        local.finish()
                        continue
                    try:
                        self._batch_call(task)(payload, timeout=self._rpc_timeout)
                        continue
                    except grpc.RpcError as err:
                        if err.code() != grpc.StatusCode.UNIMPLEMENTED:
                            continue
                        self._unbatched.add(task)
                stub = self._stub_of(task)
                for step_id in step_ids:
                    stub.CleanupGraph(
                        worker_pb2.CleanupGraphRequest(step_id=step_id),
                        timeout=self._rpc_timeout,
                    )
            except Exception:  # noqa: BLE001  (best effort: see the module docstring)
                continue

    def _batch_call(self, task: str) -> Any:
        channel = self._channel_of(task)
        entry = self._batch_calls.get(task)
        if entry is None or entry[0] is not channel:
            entry = (channel, channel.unary_unary(CLEANUP_BATCH_PATH))
            self._batch_calls[task] = entry
        return entry[1]
