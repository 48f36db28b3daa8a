"""Master, session leases: renews the leases of this master's worker sessions, so a
worker drops them (and their registered graphs) once this master is gone
(worker.session_leases has the worker's side, rpc.service_paths the wire format).

Every lease/3 seconds one /dataflow.WorkerService/KeepAliveSessions per task, listing the
open sessions that have a worker session there, sent to all tasks at once and not waited
for (a dead or unreachable task just misses its renewal). A TensorFlow worker answers
UNIMPLEMENTED: its sessions live until closed, as in TensorFlow. One daemon thread,
started with the master and stopped by `close`. Thread-safe.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import grpc

from rpc.service_paths import KEEPALIVE_PATH, encode_keepalive

log = logging.getLogger(__name__)

DEFAULT_LEASE_S = 60.0


class LeaseRenewer:
    """Renews, every lease/3 seconds, the sessions `sessions_by_task()` lists."""

    def __init__(
        self,
        lease_s: float,
        sessions_by_task: Callable[[], dict[str, list[str]]],
        channel_of: Callable[[str], grpc.Channel],
    ) -> None:
        self.lease_s = lease_s
        self._sessions_by_task = sessions_by_task
        self._channel_of = channel_of
        self._stop = threading.Event()
        self._inflight: list[grpc.Future] = []  # renewals not answered yet (renewer thread)
        self._thread = threading.Thread(target=self._run, name="flowrt-lease-renewer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            try:
                self.renew()
            except Exception:  # noqa: BLE001 - the next round tries again
                log.exception("renewing session leases")

    def renew(self) -> None:
        """One round: a renewal to every task, in parallel, not waited for (an unreachable
        task must not delay the others' renewals); the calls are kept until they end, as
        grpc cancels a call whose future is dropped."""
        self._inflight = [f for f in self._inflight if not f.done()]
        for task, handles in self._sessions_by_task().items():
            try:
                call: grpc.UnaryUnaryMultiCallable[bytes, bytes] = self._channel_of(
                    task
                ).unary_unary(KEEPALIVE_PATH)
                self._inflight.append(
                    call.future(encode_keepalive(self.lease_s, handles), timeout=self.lease_s)
                )
            except Exception as e:  # noqa: BLE001 - a task we cannot reach misses a renewal
                log.debug("lease renewal to %s: %s", task, e)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
