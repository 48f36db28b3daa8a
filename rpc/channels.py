"""Transport, channels: the options every gRPC channel and server of flowrt carries.

GRPC_OPTIONS lifts grpcio's message size limits to TensorFlow's and carries the keepalives
(keepalive_options: a silent link or a frozen peer fails calls in seconds); a worker's
channels to its peers add CHANNEL_OPTIONS (see rpc.recv_tensor). Every server gets
`server_options` and every channel `channel_options` (rpc.auth applies them):
transport-wide options go there. Our servers accept frequent pings; a peer that has not
said so (a TensorFlow task) gets `for_peer(options, permissive=False)`, pings gentle
enough for gRPC's default server policy (rpc.peer_pings chooses per peer). Constants and
pure functions; safe from any thread.
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
# timeout (15 min). Idle connections are not pinged. Our servers accept these pings
# (`accept` below) and say so (rpc.peer_pings).
KEEPALIVE_ENV = "FLOWRT_KEEPALIVE_MS"
KEEPALIVE_TIME_MS = 2000
# A peer with gRPC's default server policy (TensorFlow's servers) allows one ping per 5
# minutes while it sends nothing and answers the third early one with GOAWAY
# "too_many_pings", failing every call on the connection (after ~10 s at our 2 s pings; and
# after ~2 min with grpc's own client defaults). Pings 5.5 minutes apart never strike, so
# a silent link to such a peer fails calls within about 6 minutes, not 15.
GENTLE_KEEPALIVE_TIME_MS = 330_000
GENTLE_KEEPALIVE_TIMEOUT_MS = 20_000
# The options a peer's policy decides (for_peer replaces them).
_KEEPALIVE_KEYS = frozenset(
    {
        "grpc.keepalive_time_ms",
        "grpc.keepalive_timeout_ms",
        "grpc.http2.ping_timeout_ms",
        "grpc.keepalive_permit_without_calls",
        "grpc.http2.max_pings_without_data",
        "grpc.http2.min_time_between_pings_ms",
    }
)


def keepalive_options(
    environ: Mapping[str, str] | None = None, permissive: bool = True
) -> tuple[tuple[str, int], ...]:
    """The keepalive, ping-policy and reconnect options of every channel and server
    (FLOWRT_KEEPALIVE_MS in `environ`, default os.environ: the ping interval, 0 = none).
    `permissive`: the peer accepts a ping per second during a call (ours); else pings
    stay within gRPC's default server policy (GENTLE_KEEPALIVE_TIME_MS)."""
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
    timeout_ms = 2 * time_ms
    if not permissive:
        time_ms = max(time_ms, GENTLE_KEEPALIVE_TIME_MS)
        timeout_ms = GENTLE_KEEPALIVE_TIMEOUT_MS
    return (
        ("grpc.keepalive_time_ms", time_ms),
        ("grpc.keepalive_timeout_ms", timeout_ms),
        # The same bound on any unanswered ping (grpc's own default: one minute).
        ("grpc.http2.ping_timeout_ms", timeout_ms),
        ("grpc.keepalive_permit_without_calls", 0),
        # Keep pinging a call that sends no data (a RunGraph blocked in a step); grpc's
        # default stops after 2 pings.
        ("grpc.http2.max_pings_without_data", 0),
        # A ping every time_ms even without data (older grpc: at most one per 5 minutes).
        ("grpc.http2.min_time_between_pings_ms", time_ms),
        *accept,
    )


def for_peer(
    options: Sequence[tuple[str, Any]], permissive: bool, environ: Mapping[str, str] | None = None
) -> tuple[tuple[str, Any], ...]:
    """`options` with the keepalives for a peer that does (or does not) accept frequent
    pings; the other options as they are."""
    kept = tuple(o for o in options if o[0] not in _KEEPALIVE_KEYS)
    ours = {k for k, _ in kept}
    return (
        *kept,
        *(o for o in keepalive_options(environ, permissive) if o[0] not in ours),
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
