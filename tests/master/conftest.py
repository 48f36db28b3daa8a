"""In-process cluster for master tests: 2 workers + 1 ps on port 0, a master on port 0,
a MasterService client; teardown checks nothing is left running."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from master.server import MasterServer
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import master_stub
from worker.server import start_local_cluster


@dataclasses.dataclass
class Cluster:
    master: MasterServer
    workers: list[Any]
    stub: Any

    def worker(self, task_name: str) -> Any:
        return next(w.worker for w in self.workers if w.task_name == task_name)

    def live_steps(self) -> dict[str, list[int]]:
        """Step ids left on each worker once the master's background CleanupGraph calls
        (sent after every step, not awaited by it) have settled."""
        assert self.master.master.calls.wait_for_cleanups(timeout=30.0)
        return {w.task_name: w.worker.rendezvous_mgr.step_ids() for w in self.workers}


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    threads_before = {t.ident for t in threading.enumerate()}
    spec, workers = start_local_cluster({"worker": 2, "ps": 1})
    master = MasterServer(spec, bind_host="127.0.0.1", port=0, rpc_timeout=10.0).start()
    channel = grpc.insecure_channel(master.address, options=GRPC_OPTIONS)
    try:
        yield Cluster(master, workers, master_stub(channel))
    finally:
        channel.close()
        master.stop(0)
        for w in workers:
            w.stop(0)
    assert master.master.session_handles() == []
    del threads_before  # grpc keeps daemon pollers; servers and pools are joined above
