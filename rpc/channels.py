"""Transport, channels: the options every gRPC channel and server of flowrt carries.

GRPC_OPTIONS lifts grpcio's message size limits to TensorFlow's and carries the keepalives
(keepalive_options: a silent link or a frozen peer fails calls in seconds); a worker's
channels to its peers add CHANNEL_OPTIONS (see rpc.recv_tensor). Every server gets
`server_options` and every channel `channel_options` (rpc.auth applies them):
transport-wide options go there. Constants and pure functions; safe from any thread.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import grpc
import grpc.experimental

# TensorFlow allows 2^31-1 byte messages on its channels and servers; grpcio's
# default 4 MiB receive limit breaks on large GraphDefs and tensors.
MAX_MESSAGE_LENGTH = 2**31 - 1
# Keepalives (docs/DESIGN.md, "Failures across hosts"): while a call is in flight each end
# pings the other every KEEPALIVE_TIME_MS and gives up on the connection after twice that
# without an answer, so a peer whose link went silent (no reset) or whose process is frozen
# fails its calls with UNAVAILABLE within about 6 s instead of the TCP retransmission
# timeout (15 min). Idle connections are not pinged. TensorFlow's servers allow one ping
# per 5 minutes without data and answer more with GOAWAY "too_many_pings": in a cluster
# with TensorFlow workers, FLOWRT_KEEPALIVE_MS=0 turns our pings off (calls longer than
# ~10 s to a TensorFlow task fail otherwise), or set it to 300000.
KEEPALIVE_ENV = "FLOWRT_KEEPALIVE_MS"
KEEPALIVE_TIME_MS = 2000


def keepalive_options(
    environ: Mapping[str, str] | None = None,
) -> tuple[tuple[str, int], ...]:
    """The keepalive, ping-policy and reconnect options of every channel and server
    (FLOWRT_KEEPALIVE_MS in `environ`, default os.environ: the ping interval, 0 = none)."""
    env = os.environ if environ is None else environ
    time_ms = int(env.get(KEEPALIVE_ENV, KEEPALIVE_TIME_MS))
    accept = (  # servers accept our pings this often (else: GOAWAY "too_many_pings")
        ("grpc.http2.min_ping_interval_without_data_ms", KEEPALIVE_TIME_MS // 2),
        ("grpc.http2.max_ping_strikes", 0),
        # Reconnect within a second once a link or a task is back (grpc's backoff grows to
        # two minutes).
        ("grpc.initial_reconnect_backoff_ms", 200),
        ("grpc.min_reconnect_backoff_ms", 200),
        ("grpc.max_reconnect_backoff_ms", 1000),
    )
    if time_ms <= 0:
        return accept
    return (
        ("grpc.keepalive_time_ms", time_ms),
        ("grpc.keepalive_timeout_ms", 2 * time_ms),
        # The same bound on any unanswered ping (grpc's own default: one minute).
        ("grpc.http2.ping_timeout_ms", 2 * time_ms),
        ("grpc.keepalive_permit_without_calls", 0),
        # Keep pinging a call that sends no data (a RunGraph blocked in a step); grpc's
        # default stops after 2 pings.
        ("grpc.http2.max_pings_without_data", 0),
        # A ping every time_ms even without data (default: at most one per 5 minutes, so
        # a process frozen after one answered ping went unnoticed).
        ("grpc.http2.min_time_between_pings_ms", time_ms),
        *accept,
    )


GRPC_OPTIONS = (
    ("grpc.max_send_message_length", MAX_MESSAGE_LENGTH),
    ("grpc.max_receive_message_length", MAX_MESSAGE_LENGTH),
    *keepalive_options(),
)

# Options of a worker's channels to its peers (worker.remote_rendezvous: the stream call
# runs on the waiting thread alone, no grpcio channel spin thread per step).
CHANNEL_OPTIONS = (*GRPC_OPTIONS, (grpc.experimental.ChannelOptions.SingleThreadedUnaryStream, 1))


def server_options(base: Sequence[tuple[str, Any]]) -> tuple[tuple[str, Any], ...]:
    """A server's options: `base` and no SO_REUSEPORT (grpc turns it on by default, so a
    second server on a port another process holds bound silently and shared it)."""
    return (*base, ("grpc.so_reuseport", 0))


def channel_options(base: Sequence[tuple[str, Any]]) -> tuple[tuple[str, Any], ...]:
    """A channel's options (the one place transport-wide channel options go)."""
    return tuple(base)
