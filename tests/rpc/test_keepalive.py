"""Keepalive options (rpc.channels.keepalive_options): 2 s pings by default, none with
FLOWRT_KEEPALIVE_MS=0, which is what a cluster with TensorFlow servers needs: they answer
frequent pings on a call without data with GOAWAY "too_many_pings" after ~10 s."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rpc.channels import GRPC_OPTIONS, MAX_MESSAGE_LENGTH, keepalive_options


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


_LONG_CALL = r"""
import subprocess, sys, time
import grpc
from deploy.launcher import free_port
from protos import worker_pb2
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import worker_stub
port = free_port()
srv = subprocess.Popen([sys.executable, "-c", f'''
import tensorflow as tf
c = tf.train.ClusterSpec({{"worker": ["127.0.0.1:{port}"]}})
s = tf.distribute.Server(c, job_name="worker", task_index=0, start=True)
print("READY", flush=True); s.join()'''], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    text=True)
try:
    srv.stdout.readline()
    stub = worker_stub(grpc.insecure_channel(f"127.0.0.1:{port}", options=GRPC_OPTIONS))
    dev = "/job:worker/replica:0/task:0/device:CPU:0"
    inc = stub.GetStatus(worker_pb2.GetStatusRequest(), timeout=60).device_attributes[0]
    key = f"{dev};{inc.incarnation:016x};{dev};never_sent;0:0"
    try:  # nobody sends this tensor: the call waits without data until its deadline
        stub.RecvTensor(worker_pb2.RecvTensorRequest(step_id=7, rendezvous_key=key), timeout=14)
    except grpc.RpcError as e:
        print(e.code().name)
finally:
    srv.kill()
"""


def test_long_call_to_a_tensorflow_server_without_our_pings():
    pytest.importorskip("tensorflow")
    from deploy.launcher import REPO_ROOT, child_env

    out = subprocess.run(
        [sys.executable, "-c", _LONG_CALL],
        cwd=REPO_ROOT,
        text=True,
        capture_output=True,
        timeout=180,
        env={**child_env(), "FLOWRT_KEEPALIVE_MS": "0"},
    )
    assert out.stdout.strip().splitlines()[-1] == "DEADLINE_EXCEEDED", out.stderr[-2000:]
