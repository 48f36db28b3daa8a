"""Transport security: the one place gRPC servers get their port and channels are made, with
the process's Credentials (common.credentials): TLS (mutual with a CA), the shared token
on every call, the admin token for Reset and CleanupAll, and no SO_REUSEPORT.

A process sets its credentials once at start-up (`configure`, from the CLI flags); servers
(`new_server`, `add_port`) and channels (`channel`) read them. Tokens travel as
"authorization: Bearer TOKEN" metadata; `TokenCheck` (a server interceptor) refuses calls
without a token it knows with UNAUTHENTICATED; MasterService takes the cluster or the client
token, every other service (WorkerService, our extensions) the cluster token only: a
client token there is PERMISSION_DENIED, as is Reset / CleanupAll without the admin token
(which opens everything). The standard health service (grpc.health.v1) answers without a
token, so orchestrators can probe it; it tells nothing but "serving".

Options come from rpc.channels (`server_options`, `channel_options`: the one place
transport-wide options such as keepalives go). Safe from any thread.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
from collections.abc import Callable, Sequence
from concurrent import futures
from typing import Any

import grpc

from common.credentials import INSECURE, Credentials
from common.errors import UnavailableError
from rpc.channels import channel_options, server_options

log = logging.getLogger(__name__)

_HEALTH_PREFIX = "/grpc.health.v1.Health/"
ADMIN_METHODS = ("/Reset", "/CleanupAll")
# What the client token opens: MasterService under both its names.
MASTER_PREFIXES = ("/tensorflow.MasterService/", "/dataflow.MasterService/")
_METADATA_KEY = "authorization"

_credentials: Credentials = INSECURE


def configure(credentials: Credentials) -> None:
    """This process's credentials (call once at start-up, before servers and channels)."""
    global _credentials
    _credentials = credentials


def current() -> Credentials:
    return _credentials


# -- servers ----------------------------------------------------------------------------------
def new_server(pool: futures.ThreadPoolExecutor, options: Sequence[tuple[str, Any]]) -> grpc.Server:
    """A gRPC server with our options and, when tokens are on, the token check."""
    creds = _credentials
    interceptors: list[grpc.ServerInterceptor] = [TokenCheck(creds)] if creds.presented else []
    return grpc.server(pool, options=server_options(options), interceptors=interceptors)


def add_port(server: grpc.Server, target: str, what: str) -> int:
    """Bind `target` (host:port) with TLS when configured; the bound port. UnavailableError
    (one line naming `what` and the address) when it cannot be bound, e.g. another process
    holds it. Warns loudly when a non-loopback address is served without TLS or token."""
    creds = _credentials
    try:
        if creds.cert is not None:
            port = server.add_secure_port(target, server_credentials(creds))
        else:
            port = server.add_insecure_port(target)
    except RuntimeError:
        port = 0
    if port == 0:
        raise UnavailableError(f"{what}: cannot listen on {target} (is another process using it?)")
    if not creds.secure and not _loopback(target):
        log.warning(
            "INSECURE: %s listens on %s with neither TLS nor an auth token: anyone who can "
            "reach this port can run any graph, read and write any file this process can, "
            "and reset the cluster (see README, Security)",
            what,
            target,
        )
    return port


def server_credentials(creds: Credentials) -> grpc.ServerCredentials:
    assert creds.cert is not None and creds.key is not None
    return grpc.ssl_server_credentials(
        [(creds.key, creds.cert)], root_certificates=creds.ca, require_client_auth=bool(creds.ca)
    )


def _loopback(target: str) -> bool:
    host = target.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# -- the token check --------------------------------------------------------------------------
def _token_of(metadata: Any) -> str:
    for key, value in metadata or ():
        if key == _METADATA_KEY and isinstance(value, str) and value.startswith("Bearer "):
            return value[len("Bearer ") :]
    return ""


def _equal(a: str, b: str | None) -> bool:
    return b is not None and hmac.compare_digest(a.encode(), b.encode())


class TokenCheck(grpc.ServerInterceptor):
    """Refuses a call without a token it knows; MasterService takes the cluster or client
    token, other services the cluster token; admin methods need the admin token (without
    one configured, nobody may call them while tokens are on)."""

    def __init__(self, creds: Credentials) -> None:
        self._creds = creds

    def intercept_service(
        self, continuation: Callable[[Any], Any], details: grpc.HandlerCallDetails
    ) -> Any:
        method = details.method
        if method.startswith(_HEALTH_PREFIX):
            return continuation(details)
        token = _token_of(details.invocation_metadata)
        admin = _equal(token, self._creds.admin_token)
        if method.endswith(ADMIN_METHODS):
            if not admin:
                return _refuse(grpc.StatusCode.PERMISSION_DENIED, f"{method} needs the admin token")
        elif admin or _equal(token, self._creds.token):
            pass
        elif _equal(token, self._creds.client_token):
            if not method.startswith(MASTER_PREFIXES):
                return _refuse(
                    grpc.StatusCode.PERMISSION_DENIED,
                    f"{method} needs the cluster token: the client token opens MasterService only",
                )
        else:
            return _refuse(
                grpc.StatusCode.UNAUTHENTICATED, f"{method}: missing or wrong auth token"
            )
        return continuation(details)


def _refuse(code: grpc.StatusCode, message: str) -> grpc.RpcMethodHandler:
    def abort(request: Any, context: grpc.ServicerContext) -> Any:
        context.abort(code, message)

    # Raw bytes in: whatever was sent, it is not parsed.
    return grpc.unary_unary_rpc_method_handler(abort)


# -- channels ---------------------------------------------------------------------------------
def channel(
    address: str, options: Sequence[tuple[str, Any]], creds: Credentials | None = None
) -> grpc.Channel:
    """A channel to `address` with TLS and the token when configured (`creds`, else the
    process's). Calls to admin methods carry the admin token when there is one."""
    creds = _credentials if creds is None else creds
    opts = channel_options(options)
    if creds.tls:
        tls = grpc.ssl_channel_credentials(
            root_certificates=creds.ca, private_key=creds.key, certificate_chain=creds.cert
        )
        ch = grpc.secure_channel(address, tls, options=opts)
    else:
        ch = grpc.insecure_channel(address, options=opts)
    if creds.presented:
        ch = grpc.intercept_channel(ch, _AddToken(creds))
    return ch


class _AddToken(
    grpc.UnaryUnaryClientInterceptor,
    grpc.UnaryStreamClientInterceptor,
    grpc.StreamUnaryClientInterceptor,
    grpc.StreamStreamClientInterceptor,
):
    def __init__(self, creds: Credentials) -> None:
        self._user = (_METADATA_KEY, f"Bearer {creds.presented}")
        self._admin = (_METADATA_KEY, f"Bearer {creds.admin_token or creds.presented}")

    def _details(self, details: Any) -> Any:
        entry = self._admin if details.method.endswith(ADMIN_METHODS) else self._user
        metadata = [m for m in (details.metadata or ()) if m[0] != _METADATA_KEY]
        return _CallDetails(
            details.method,
            details.timeout,
            [*metadata, entry],
            details.credentials,
            getattr(details, "wait_for_ready", None),
            getattr(details, "compression", None),
        )

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(self._details(details), request)

    def intercept_unary_stream(self, continuation, details, request):
        return continuation(self._details(details), request)

    def intercept_stream_unary(self, continuation, details, requests):
        return continuation(self._details(details), requests)

    def intercept_stream_stream(self, continuation, details, requests):
        return continuation(self._details(details), requests)


class _CallDetails(grpc.ClientCallDetails):
    def __init__(
        self,
        method: str,
        timeout: Any,
        metadata: Any,
        credentials: Any,
        wait_for_ready: Any,
        compression: Any,
    ) -> None:
        self.method = method
        self.timeout = timeout
        self.metadata = metadata
        self.credentials = credentials
        self.wait_for_ready = wait_for_ready
        self.compression = compression


# -- health -----------------------------------------------------------------------------------
def add_health(server: grpc.Server) -> Any:
    """The standard grpc.health.v1 service, SERVING for the whole server."""
    from grpc_health.v1 import health, health_pb2, health_pb2_grpc

    servicer = health.HealthServicer()
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    return servicer
