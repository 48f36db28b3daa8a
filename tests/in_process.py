"""A cluster in the test's own process: worker tasks and a master on free loopback ports,
stopped afterwards, with no session left open (what several test modules need)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from master.server import MasterServer
from worker.server import start_local_cluster


@contextlib.contextmanager
def in_process_cluster(jobs: dict[str, int], **worker_args: Any) -> Iterator[MasterServer]:
    """`jobs[job]` worker tasks per job (WorkerServer keyword arguments `worker_args`) and a
    started master; yields the master."""
    spec, workers = start_local_cluster(jobs, **worker_args)
    master = MasterServer(spec, bind_host="127.0.0.1", port=0, rpc_timeout=10.0).start()
    try:
        yield master
    finally:
        master.stop(0)
        for w in workers:
            w.stop(0)
    assert master.master.session_handles() == []
