"""Deploy, health probe: `python -m deploy health HOST:PORT` asks a task's standard gRPC
health service (grpc.health.v1, served by every master and worker) and exits 0 when it
answers SERVING, 1 otherwise: docker-compose's healthcheck. TLS when FLOWRT_TLS_CA is set
(the health service itself needs no token)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from common import credentials
from common.errors import OpError


def check(address: str, timeout: float = 5.0) -> bool:
    from rpc import auth

    creds = credentials.load()
    with auth.channel(address, (), creds) as channel:
        try:
            answer = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=timeout
            )
        except grpc.RpcError as e:
            print(f"{address}: {e.code().name}: {e.details()}", file=sys.stderr)
            return False
    return bool(answer.status == health_pb2.HealthCheckResponse.SERVING)


def main(argv: Sequence[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m deploy health HOST:PORT", file=sys.stderr)
        return 2
    try:
        return 0 if check(argv[0]) else 1
    except OpError as e:
        print(f"error: {e.message}", file=sys.stderr)
        return 2
