"""Transport, keepalives per peer: which peers accept our frequent keepalive pings.

Our servers accept a ping per second during a call and say so: their standard health
service (grpc.health.v1) reports SERVING for the service name PERMISSIVE_PINGS
(`advertise`). A TensorFlow server has no health service, and gRPC's default policy answers
frequent pings with GOAWAY "too_many_pings", failing the calls on the connection.

`PeerChannel(address, open_channel)` is a grpc.Channel to one peer whose keepalives suit
it: its calls start on a channel with gentle keepalives (rpc.channels.for_peer,
permissive=False) and `PEER_PINGS.check` asks the peer once, in the background, over that
channel; once the peer has answered SERVING, new calls go on a second channel with our 2 s
keepalives (rpc.worker_cache and client.master_connection make their channels so). Any
other answer (UNIMPLEMENTED, NOT_FOUND) keeps the gentle one; a peer not reached yet is
asked again on a later call. The PeerChannel keeps its identity throughout, so stubs and
caches keyed by it stay valid.

Verdicts are per address and process-wide. Thread-safe: locks guard the tables; probe
answers arrive on grpcio's callback threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

# The health-service name our servers report SERVING: "this server accepts a keepalive
# ping per second on a call without data" (rpc.channels.keepalive_options' `accept`).
PERMISSIVE_PINGS = "flowrt.PermissivePings"
# How long a probe waits for a peer that is not up yet.
PROBE_TIMEOUT_S = 30.0
# Answers meaning "a server that does not accept frequent pings": no health service
# (TensorFlow) or no such service name (another gRPC server).
_NOT_PERMISSIVE = (grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.NOT_FOUND)


def advertise(health_servicer: Any) -> None:
    """Say on a server's health service that it accepts frequent pings."""
    health_servicer.set(PERMISSIVE_PINGS, health_pb2.HealthCheckResponse.SERVING)


class PeerPings:
    """Per address: does the peer accept frequent pings (True / False), or not known."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[str, bool] = {}
        self._asking: set[str] = set()

    def check(self, address: str, channel: grpc.Channel) -> bool | None:
        """The verdict for `address`; None while not known, after starting a probe over
        `channel` if none is under way."""
        known = self._known.get(address)
        if known is not None:
            return known
        with self._lock:
            if address in self._known:
                return self._known[address]
            if address in self._asking:
                return None
            self._asking.add(address)
        try:
            future = health_pb2_grpc.HealthStub(channel).Check.future(
                health_pb2.HealthCheckRequest(service=PERMISSIVE_PINGS),
                timeout=PROBE_TIMEOUT_S,
                wait_for_ready=True,
            )
        except ValueError:  # the channel was closed meanwhile
            with self._lock:
                self._asking.discard(address)
            return None
        future.add_done_callback(lambda f: self._answered(address, f))
        return None

    def _answered(self, address: str, future: Any) -> None:
        verdict: bool | None
        try:
            answer = future.result()
        except grpc.RpcError as e:
            verdict = False if e.code() in _NOT_PERMISSIVE else None
        except grpc.FutureCancelledError:  # the channel closed: ask again another time
            verdict = None
        else:
            verdict = answer.status == health_pb2.HealthCheckResponse.SERVING
        with self._lock:
            self._asking.discard(address)
            if verdict is not None:
                self._known[address] = verdict


PEER_PINGS = PeerPings()


class PeerChannel(grpc.Channel):
    """A channel to `address`; `open_channel(permissive)` opens the real channels."""

    def __init__(self, address: str, open_channel: Callable[[bool], grpc.Channel]) -> None:
        self._address = address
        self._open = open_channel
        self._lock = threading.Lock()
        self._gentle = open_channel(False)
        self._permissive: grpc.Channel | None = None
        self._settled = False
        self._subscribed: dict[Any, grpc.Channel] = {}  # callback -> the channel it is on
        self.current()  # takes a known verdict, or starts the probe

    def current(self) -> grpc.Channel:
        """The channel new calls go on."""
        if not self._settled:
            verdict = PEER_PINGS.check(self._address, self._gentle)
            if verdict is not None:
                with self._lock:
                    if not self._settled:
                        self._permissive = self._open(True) if verdict else None
                        self._settled = True
        return self._permissive or self._gentle

    def unary_unary(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _Dispatch(self, "unary_unary", method, args, kwargs)

    def unary_stream(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _Dispatch(self, "unary_stream", method, args, kwargs)

    def stream_unary(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _Dispatch(self, "stream_unary", method, args, kwargs)

    def stream_stream(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return _Dispatch(self, "stream_stream", method, args, kwargs)

    def subscribe(self, callback: Any, try_to_connect: bool = False) -> None:
        channel = self.current()
        with self._lock:
            self._subscribed[callback] = channel
        channel.subscribe(callback, try_to_connect=try_to_connect)

    def unsubscribe(self, callback: Any) -> None:
        with self._lock:
            channel = self._subscribed.pop(callback, None)
        if channel is not None:
            channel.unsubscribe(callback)

    def close(self) -> None:
        with self._lock:
            self._settled = True  # no channel opens after this
            channels = [c for c in (self._gentle, self._permissive) if c is not None]
        for channel in channels:
            channel.close()

    def __enter__(self) -> PeerChannel:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _Dispatch:
    """A multicallable of a PeerChannel: each call goes on the channel current then."""

    def __init__(
        self, channel: PeerChannel, kind: str, method: str, args: Any, kwargs: Any
    ) -> None:
        self._channel = channel
        self._make = (kind, method, args, kwargs)
        self._made: tuple[grpc.Channel, Any] | None = None

    def _target(self) -> Any:
        inner = self._channel.current()
        made = self._made
        if made is None or made[0] is not inner:
            kind, method, args, kwargs = self._make
            made = (inner, getattr(inner, kind)(method, *args, **kwargs))
            self._made = made
        return made[1]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target()(*args, **kwargs)

    def future(self, *args: Any, **kwargs: Any) -> Any:
        return self._target().future(*args, **kwargs)

    def with_call(self, *args: Any, **kwargs: Any) -> Any:
        return self._target().with_call(*args, **kwargs)
