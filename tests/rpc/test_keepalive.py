"""Keepalives per peer (rpc.channels, rpc.peer_pings): 2 s pings to our tasks, which say on
their health service that they accept them; pings 5.5 minutes apart to any other peer,
within gRPC's default server policy, so calls longer than ~10 s to a TensorFlow server
(which answers frequent pings with GOAWAY "too_many_pings") succeed without
FLOWRT_KEEPALIVE_MS=0. That our tasks still get the 2 s pings (a cut link fails in
seconds) is tests/integration/test_netns_failures.py."""

from __future__ import annotations

import subprocess
import sys

import pytest

from protos.worker_pb2 import GetStatusRequest
from rpc.channels import (
    GENTLE_KEEPALIVE_TIME_MS,
    GRPC_OPTIONS,
    MAX_MESSAGE_LENGTH,
    for_peer,
    keepalive_options,
)


def test_default_pings_every_two_seconds_and_servers_accept_them():
    options = dict(keepalive_options({}))
    assert options["grpc.keepalive_time_ms"] == 2000
    assert options["grpc.keepalive_timeout_ms"] == options["grpc.http2.ping_timeout_ms"] == 4000
    assert options["grpc.http2.max_pings_without_data"] == 0
    assert options["grpc.http2.max_ping_strikes"] == 0
    assert options["grpc.max_reconnect_backoff_ms"] == 1000
    assert ("grpc.max_receive_message_length", MAX_MESSAGE_LENGTH) in GRPC_OPTIONS


def test_zero_turns_pings_off_but_keeps_accepting_them():
    options = dict(keepalive_options({"FLOWRT_KEEPALIVE_MS": "0"}))
    assert "grpc.keepalive_time_ms" not in options
    assert options["grpc.http2.max_ping_strikes"] == 0
    assert (
        dict(keepalive_options({"FLOWRT_KEEPALIVE_MS": "500"}))["grpc.keepalive_timeout_ms"] == 1000
    )
    assert "grpc.keepalive_time_ms" not in dict(
        for_peer(GRPC_OPTIONS, permissive=False, environ={"FLOWRT_KEEPALIVE_MS": "0"})
    )


def test_a_peer_that_does_not_accept_pings_gets_them_five_minutes_apart():
    gentle = for_peer(GRPC_OPTIONS, permissive=False, environ={})
    options = dict(gentle)
    assert len(options) == len(gentle)  # each option once
    # gRPC's default server allows a ping per 5 minutes on a call without data.
    assert options["grpc.keepalive_time_ms"] == GENTLE_KEEPALIVE_TIME_MS > 300_000
    assert options["grpc.http2.max_pings_without_data"] == 0
    assert options["grpc.keepalive_permit_without_calls"] == 0
    assert options["grpc.max_receive_message_length"] == MAX_MESSAGE_LENGTH  # the rest kept
    assert options["grpc.max_reconnect_backoff_ms"] == 1000
    again = dict(for_peer(gentle, permissive=True, environ={}))
    assert again == {**options, **dict(keepalive_options({}))}
    assert again["grpc.keepalive_time_ms"] == 2000


def test_our_tasks_say_they_accept_pings_and_get_them(local_cluster):
    from rpc.peer_pings import PEER_PINGS
    from rpc.worker_cache import WorkerCache

    spec, _ = local_cluster({"worker": 1})
    address = spec.task_address("worker", 0)
    cache = WorkerCache(spec)
    try:
        channel = cache.channel("/job:worker/task:0")
        # Verdicts are per address and process-wide: an earlier test's task on the same
        # port may have answered already, so compare with the gentle channel itself.
        gentle = channel._gentle
        assert wait_for_verdict(lambda: PEER_PINGS.check(address, gentle)) is True
        assert channel.current() is not gentle  # new calls: a channel with 2 s pings
        assert cache.channel("/job:worker/task:0") is channel  # stubs keyed by it stay
        status = cache.stub("/job:worker/task:0").GetStatus(GetStatusRequest(), timeout=30)
        assert status.device_attributes
    finally:
        cache.close()


def wait_for_verdict(check):
    import time

    deadline = time.monotonic() + 30
    while (verdict := check()) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return verdict


# A TensorFlow server in a subprocess; our transport drives calls to it that last ~16 s
# without data, with the default keepalives (no FLOWRT_KEEPALIVE_MS).
_TF_SERVER = r"""
import tensorflow as tf
c = tf.train.ClusterSpec({"worker": ["127.0.0.1:%d"]})
s = tf.distribute.Server(c, job_name="worker", task_index=0, start=True)
print("READY", flush=True); s.join()
"""

_LONG_CALLS = r"""
import subprocess, sys, threading, time
import numpy as np
import client as ours
from common.cluster import ClusterSpec
from deploy.launcher import free_port
from protos import worker_pb2
from rpc.peer_pings import PEER_PINGS
from rpc.worker_cache import WorkerCache
port = free_port()
srv = subprocess.Popen([sys.executable, "-c", sys.argv[1] % port], stdout=subprocess.PIPE,
    stderr=subprocess.DEVNULL, text=True)
try:
    srv.stdout.readline()
    address = f"127.0.0.1:{port}"
    # Our client, a TensorFlow master: a dequeue that is fed 16 s later.
    g = ours.Graph()
    with g.as_default(), ours.device("/job:worker/task:0"):
        q = ours.FIFOQueue(1, [ours.float32], shared_name="late")
        got, put = q.dequeue(), q.enqueue([np.float32(7.0)])
    with ours.Session(f"grpc://{address}", graph=g) as sess:
        def feed():
            time.sleep(16)
            sess.run(put)
        threading.Thread(target=feed, daemon=True).start()
        start = time.monotonic()
        print("dequeue", sess.run(got), round(time.monotonic() - start), flush=True)
    # Our master's and workers' channels to a TensorFlow worker: a RecvTensor nobody
    # sends waits without data until its deadline.
    cache = WorkerCache(ClusterSpec.from_dict({"worker": [address]}))
    stub = cache.stub("/job:worker/task:0")
    dev = "/job:worker/replica:0/task:0/device:CPU:0"
    inc = stub.GetStatus(worker_pb2.GetStatusRequest(), timeout=60).device_attributes[0]
    print("verdict", PEER_PINGS.check(address, cache.channel("/job:worker/task:0")), flush=True)
    key = f"{dev};{inc.incarnation:016x};{dev};never_sent;0:0"
    try:
        cache.stub("/job:worker/task:0").RecvTensor(
            worker_pb2.RecvTensorRequest(step_id=7, rendezvous_key=key), timeout=16)
    except Exception as e:
        print("recv", e.code().name, flush=True)
    cache.close()
finally:
    srv.kill()
"""


def test_long_calls_to_a_tensorflow_server_with_default_keepalives():
    pytest.importorskip("tensorflow")
    from deploy.launcher import REPO_ROOT, child_env

    env = child_env()
    env.pop("FLOWRT_KEEPALIVE_MS", None)
    out = subprocess.run(
        [sys.executable, "-c", _LONG_CALLS, _TF_SERVER],
        cwd=REPO_ROOT,
        text=True,
        capture_output=True,
        timeout=240,
        env=env,
    )
    lines = out.stdout.strip().splitlines()
    assert lines[:1] and lines[0].startswith("dequeue 7.0"), out.stderr[-3000:]
    assert int(lines[0].split()[-1]) >= 15  # the step lasted past the feed
    assert lines[1:] == ["verdict False", "recv DEADLINE_EXCEEDED"], out.stderr[-3000:]
    assert "too_many_pings" not in out.stderr
