"""Client, transport: MasterService calls to one master, over gRPC or a same-host socket.

`MasterConnection("host:port").call("RunStep", request, timeout_s)` returns the response
message or raises the OpError with TensorFlow's code, naming the master. The first call
goes over gRPC and waits for the master to come up, as TensorFlow's client does, but for
at most `connect_timeout_s` (default CONNECT_TIMEOUT_S): a wrong host or port is an
UnavailableError naming the target, never an endless wait. Later calls fail at once
with UnavailableError naming the master if it has gone away. After
the first call the connection asks the master for its local endpoint (rpc.local_rpc) and, when
the master runs on this host, sends every later call over the master's Unix socket:
the same messages, without grpcio's thread hand-offs (about 0.4 ms of a ~1 ms step
here). A master on another host, a TensorFlow master, `local=False` or
FLOWRT_LOCAL_RPC=0 mean gRPC throughout; a socket that stops connecting (the master
restarted) means gRPC from then on. The gRPC channel's keepalives suit the master
(rpc.peer_pings: 2 s pings to ours, gentle ones to a TensorFlow master). Safe from any
thread.
"""

from __future__ import annotations

import threading
from typing import Any

import grpc

from common import credentials
from common.credentials import Credentials
from common.errors import UnavailableError
from rpc import auth, local_rpc
from rpc.channels import GRPC_OPTIONS, for_peer
from rpc.peer_pings import PeerChannel
from rpc.service_paths import MASTER_METHODS, master_stub
from rpc.status import from_rpc_error

# Admin calls go over gRPC, where the admin token is checked (the socket has no tokens).
_GRPC_ONLY = frozenset({"Reset"})
# How long the first call waits for the master to accept a connection.
CONNECT_TIMEOUT_S = 30.0


class MasterConnection:
    """MasterService calls to the master at `address` (host:port)."""

    def __init__(
        self,
        address: str,
        local: bool = True,
        connect_timeout_s: float | None = None,
        creds: Credentials | None = None,
    ) -> None:
        self.address = address
        self.connect_timeout_s = connect_timeout_s or CONNECT_TIMEOUT_S
        self.peer = f"grpc://{address}"
        self.credentials = credentials.load() if creds is None else creds
        self.channel = PeerChannel(
            address,
            lambda permissive: auth.channel(
                address, for_peer(GRPC_OPTIONS, permissive), self.credentials
            ),
        )
        self.stub = master_stub(self.channel)
        self._lock = threading.Lock()
        self._want_local = local
        self._local: local_rpc.UnaryStub | None = None
        self._reached = False  # a call has succeeded: later calls do not wait for the master

    @property
    def is_local(self) -> bool:
        """Whether calls now go over the master's socket."""
        return self._local is not None

    def call(self, method: str, request: Any, timeout_s: float | None = None) -> Any:
        """The response of `method`; raises its OpError."""
        local = self._local if method not in _GRPC_ONLY else None
        if local is not None:
            try:
                return local.call(method, request, timeout_s)
            except ConnectionError:
                self._drop_local(local)
        if not self._reached:
            self._wait_connected(method, timeout_s)
        try:
            response = getattr(self.stub, method)(
                request, timeout=timeout_s, wait_for_ready=not self._reached
            )
        except grpc.RpcError as e:
            raise from_rpc_error(e, self.peer, method) from None
        self._reached = True
        if self._want_local:
            self._find_local()
        return response

    def _wait_connected(self, method: str, timeout_s: float | None) -> None:
        """Wait (bounded) until the channel connects; UnavailableError naming the target."""
        wait = self.connect_timeout_s
        if timeout_s is not None:
            wait = min(wait, timeout_s)
        try:
            grpc.channel_ready_future(self.channel).result(timeout=wait)
        except grpc.FutureTimeoutError:
            raise UnavailableError(
                f"{self.peer} is unavailable ({method}): no master answered within {wait:g} s"
            ) from None

    def close(self) -> None:
        with self._lock:
            self._want_local = False
            local, self._local = self._local, None
        if local is not None:
            local.close()
        self.channel.close()

    def _find_local(self) -> None:
        """Ask the master once for its socket (after a call over gRPC succeeded)."""
        with self._lock:
            if not self._want_local:
                return
            self._want_local = False  # one question per connection
        if not local_rpc.enabled():
            return
        client = local_rpc.discover(self.channel, local_rpc.MASTER_ENDPOINT_PATH, self.peer)
        if client is not None:
            with self._lock:
                self._local = local_rpc.UnaryStub(client, MASTER_METHODS, local_rpc.MASTER_BASE)

    def _drop_local(self, local: local_rpc.UnaryStub) -> None:
        with self._lock:
            if self._local is local:
                self._local = None
        local.close()
