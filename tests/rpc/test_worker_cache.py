"""WorkerCache: one channel per task, address changes, unknown tasks, close."""

from __future__ import annotations

import pytest

from common.cluster import ClusterSpec
from common.errors import FailedPreconditionError, InvalidArgumentError
from rpc import worker_cache
from rpc.worker_cache import WorkerCache, parse_task

SPEC = ClusterSpec.from_dict({"jobs": {"worker": ["127.0.0.1:1", "127.0.0.1:2"]}})


def test_one_channel_per_task_reused_and_closed():
    cache = WorkerCache(SPEC)
    a = cache.channel("/job:worker/replica:0/task:0")
    assert cache.channel("/job:worker/replica:0/task:0/device:CPU:0") is a
    b = cache.channel("/job:worker/task:1")
    assert b is not a and cache.num_channels() == 2
    assert cache.stub("/job:worker/replica:0/task:1").service_name == "tensorflow.WorkerService"
    cache.set_cluster(SPEC.with_address("worker", 1, "127.0.0.1:3"))
    assert cache.channel("/job:worker/replica:0/task:1") is not b  # reopened: new address
    cache.close()
    assert cache.num_channels() == 0
    with pytest.raises(FailedPreconditionError):
        cache.channel("/job:worker/replica:0/task:0")


def test_unknown_task_is_invalid_argument_naming_it():
    cache = WorkerCache(SPEC)
    with pytest.raises(InvalidArgumentError, match="Unknown remote task /job:ps/replica:0/task:0"):
        cache.channel("/job:ps/replica:0/task:0")
    with pytest.raises(InvalidArgumentError, match="Not a task or device name: /device:CPU:0"):
        parse_task("/device:CPU:0")
    cache.close()


def test_a_task_name_is_looked_up_once_per_cluster(monkeypatch):
    """A channel is asked for several times a step: the name is parsed and looked up in
    the cluster once, again only after set_cluster."""
    parsed: list[str] = []
    original = worker_cache.parse_task

    def counted(name: str) -> tuple[str, int]:
        parsed.append(name)
        return original(name)

    monkeypatch.setattr(worker_cache, "parse_task", counted)
    cache = WorkerCache(SPEC)
    name = "/job:worker/replica:0/task:1"
    first = cache.channel(name)
    assert all(cache.channel(name) is first for _ in range(3))
    assert parsed == [name]
    cache.set_cluster(SPEC.with_address("worker", 1, "127.0.0.1:3"))
    assert cache.channel(name) is not first and cache.channel(name) is cache.channel(name)
    assert parsed == [name, name]
    cache.close()
