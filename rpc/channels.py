"""Transport, channels: the options every gRPC channel and server of flowrt carries.

GRPC_OPTIONS lifts grpcio's message size limits to TensorFlow's; a worker's channels to its
peers add CHANNEL_OPTIONS (see rpc.recv_tensor). Every server gets `server_options` and
every channel `channel_options` (rpc.auth applies them): transport-wide options go there.
Constants and pure functions; safe from any thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc
import grpc.experimental

# TensorFlow allows 2^31-1 byte messages on its channels and servers; grpcio's
# default 4 MiB receive limit breaks on large GraphDefs and tensors.
MAX_MESSAGE_LENGTH = 2**31 - 1
GRPC_OPTIONS = (
    ("grpc.max_send_message_length", MAX_MESSAGE_LENGTH),
    ("grpc.max_receive_message_length", MAX_MESSAGE_LENGTH),
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
