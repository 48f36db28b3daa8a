"""Command lines, shared pieces: the flags, logging set-up, metrics endpoint and
serve-until-signalled loop of `python -m master`, `python -m worker` and `python -m server`
(and the signal handling of `python -m deploy`).

Process entry points only: installs signal handlers, so call from the main thread.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any, Protocol
from wsgiref.simple_server import WSGIServer

from common import credentials, file_access, memory, metrics, op_policy
from common.errors import InvalidArgumentError, OpError

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
# SIGHUP too: a closed terminal (or a launcher passing it on) stops a task cleanly.
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Server(Protocol):
    """What `serve` runs: a MasterServer or a WorkerServer."""

    def start(self) -> Any: ...

    def stop(self, grace: float) -> None: ...


def add_cluster_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cluster", required=True, help="cluster YAML file (master: / jobs:)")


def add_shutdown_flags(p: argparse.ArgumentParser, grace_seconds: float) -> None:
    """--grace (seconds RPCs in flight get at shutdown) and --log-level."""
    p.add_argument(
        "--grace",
        type=float,
        default=grace_seconds,
        help=f"seconds RPCs in flight get at shutdown (default {grace_seconds:g})",
    )
    p.add_argument(
        "--log-level",
        default="INFO",
        choices=list(LOG_LEVELS),
        help="logging level (default INFO)",
    )
    p.add_argument(
        "--log-format",
        default="text",
        choices=["text", "json"],
        help="text: timestamped lines; json: one JSON object per line with ts, level, "
        "logger, msg and the record's event fields (session, step, code, node, task) "
        "(default text)",
    )


def add_session_lease_flag(p: argparse.ArgumentParser, default: float) -> None:
    p.add_argument(
        "--session-lease",
        type=float,
        default=default,
        help=f"seconds workers keep this master's sessions (and their graphs) without "
        f"hearing from it; renewed every third of it; 0 = forever (default {default:g})",
    )


def add_metrics_flags(p: argparse.ArgumentParser) -> None:
    """--metrics-port (Prometheus metrics over HTTP; off by default) and --metrics-host."""
    p.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        help="serve Prometheus metrics on http://HOST:PORT/metrics (0 picks a free port, "
        "logged at start-up; default: off)",
    )
    p.add_argument(
        "--metrics-host",
        default=None,
        help="address the metrics endpoint listens on (default: the server's bind host)",
    )


def add_limit_flags(p: argparse.ArgumentParser) -> None:
    """--memory-limit: this process's allocation budget (common.memory)."""
    default_mb = memory.default_limit() >> 20
    p.add_argument(
        "--memory-limit",
        type=_size,
        default=None,
        metavar="SIZE",
        help="memory this process may use for tensors, e.g. 4G or 512M; larger allocations "
        f"fail with ResourceExhausted naming the node (default {memory.DEFAULT_FRACTION:g} "
        f"of the machine's or cgroup's memory: {default_mb} MiB here)",
    )
    p.add_argument(
        "--file-root",
        default=None,
        metavar="DIR",
        help="confine every op that touches files (checkpoints, readers, writers, ReadFile, "
        "WriteFile, MatchingFiles, PrintV2 to a file) to DIR: relative paths are taken "
        "under it, others are PermissionDenied (default: no confinement)",
    )
    p.add_argument(
        "--deny-ops",
        type=_ops_spec,
        default=frozenset(),
        metavar="OPS",
        help="refuse graphs using these ops (comma-separated names; 'safe' = every op that "
        "touches files) with PermissionDenied at registration (default: none)",
    )
    p.add_argument(
        "--max-graph-nodes",
        type=int,
        default=op_policy.DEFAULT_MAX_GRAPH_NODES,
        metavar="N",
        help="refuse larger graphs (their functions' nodes counted) with ResourceExhausted "
        f"at registration (default {op_policy.DEFAULT_MAX_GRAPH_NODES})",
    )


def add_security_flags(p: argparse.ArgumentParser) -> None:
    """TLS and tokens (common.credentials; environment variables when a flag is absent)."""
    g = p.add_argument_group("security (see README, Security)")
    g.add_argument(
        "--tls-cert",
        default=None,
        help="PEM certificate this task presents (serves TLS; env FLOWRT_TLS_CERT)",
    )
    g.add_argument(
        "--tls-key", default=None, help="PEM private key of --tls-cert (env FLOWRT_TLS_KEY)"
    )
    g.add_argument(
        "--tls-ca",
        default=None,
        help="PEM CA: servers it signed are trusted, and "
        "clients must present a certificate it signed (mutual TLS; env FLOWRT_TLS_CA)",
    )
    g.add_argument(
        "--auth-token-file",
        default=None,
        help="file holding the cluster's shared "
        "token, required on every call (env FLOWRT_AUTH_TOKEN[_FILE])",
    )
    g.add_argument(
        "--client-token-file",
        default=None,
        help="file holding the client token: opens "
        "MasterService only, never a worker (env FLOWRT_CLIENT_TOKEN[_FILE])",
    )
    g.add_argument(
        "--admin-token-file",
        default=None,
        help="file holding the admin token "
        "Reset and CleanupAll need (env FLOWRT_ADMIN_TOKEN[_FILE])",
    )


def credentials_from(args: argparse.Namespace) -> credentials.Credentials:
    """A task's Credentials from the security flags (InvalidArgument if unreadable, or a
    client token without the cluster token the task's peers need)."""
    creds = credentials.load(
        args.tls_cert,
        args.tls_key,
        args.tls_ca,
        args.auth_token_file,
        args.admin_token_file,
        client_token_file=args.client_token_file,
    )
    if creds.client_token is not None and creds.token is None:
        raise InvalidArgumentError(
            "--client-token-file needs the cluster token (--auth-token-file)"
        )
    return creds


def apply_limit_flags(args: argparse.Namespace, log: logging.Logger) -> None:
    if args.memory_limit is not None:
        memory.set_limit(args.memory_limit)
    file_access.set_root(args.file_root)
    op_policy.set_denied(args.deny_ops)
    op_policy.set_max_graph_nodes(args.max_graph_nodes)
    log.info(
        "memory limit %d MiB; file root %s; %d ops denied",
        memory.limit() >> 20,
        file_access.root() or "none (any path)",
        len(op_policy.denied()),
    )


def _ops_spec(text: str) -> frozenset[str]:
    try:
        return op_policy.parse(text)
    except OpError as e:
        raise argparse.ArgumentTypeError(e.message) from None


def _size(text: str) -> int:
    try:
        value = memory.parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def check_metrics_flags(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.metrics_port is not None and not 0 <= args.metrics_port <= 65535:
        p.error("--metrics-port must be in 0..65535")


def start_metrics(port: int | None, host: str, log: logging.Logger) -> WSGIServer | None:
    """The metrics endpoint (common.metrics) on host:port, logged as "metrics on
    http://HOST:PORT/metrics"; None when `port` is None (off). UnavailableError if the
    address cannot be bound."""
    if port is None:
        return None
    server, bound = metrics.serve(port, host)
    shown = f"[{host}]" if ":" in host else host
    log.info("metrics on http://%s:%d/metrics", shown, bound)
    return server


def stop_metrics(server: WSGIServer | None) -> None:
    if server is not None:
        metrics.stop(server)


# Fields a record may carry in `extra=` (a failed step, a task lost or regained, a start).
EVENT_FIELDS = ("event", "session", "step", "code", "node", "task", "address")


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ts, level, logger, msg, the event fields present."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "ts": round(record.created, 6),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for field in EVENT_FIELDS:
            value = getattr(record, field, None)
            if value is not None:
                out[field] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


def configure_logging(level: str, fmt: str = "text") -> None:
    """Records on stderr (where the launcher reads them): timestamped text, or JSON lines."""
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])


def stop_on_signals() -> tuple[threading.Event, Callable[[], None]]:
    """An event SIGTERM, SIGINT or SIGHUP sets, and a function that puts the old handlers back."""
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda signum, frame: stop.set()) for sig in _STOP_SIGNALS}

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return stop, restore


class ServesTask(Server, Protocol):
    """A server of one cluster task (a WorkerServer, a master.task_server.TaskServer)."""

    @property
    def task_name(self) -> str: ...

    @property
    def bind_host(self) -> str: ...

    @property
    def address(self) -> str: ...


def run_task_server(
    kind: str, build: Callable[[], ServesTask], args: argparse.Namespace, log: logging.Logger
) -> int:
    """The body of a task's `main`: build the server and its metrics endpoint (an OpError
    is logged as "cannot start <kind>" and is exit code 2), then `serve` it as
    "<kind> <task name>" until signalled; the exit code."""
    try:
        server = build()
        metrics_server = start_metrics(
            args.metrics_port, args.metrics_host or server.bind_host, log
        )
    except OpError as e:
        log.error("cannot start %s: %s", kind, e.message)
        return 2
    name = f"{kind} {server.task_name}"
    try:
        return serve(server, name, lambda: server.address, args.grace, log)
    finally:
        stop_metrics(metrics_server)


def freeze_startup_objects() -> None:
    """Move what start-up built (modules, op and kernel registries, protobuf descriptors,
    the server: ~90,000 objects) out of the cyclic garbage collector's reach. They live as
    long as the process, yet every full collection walked them all: measured on a task
    serving a trivial step, ~0.1 s per full collection, about every 500 steps, some
    0.2 ms of CPU per step. Garbage made so far is collected first, so nothing that could
    be freed is kept (gc.freeze: it stays in a permanent generation)."""
    gc.collect()
    gc.freeze()


def serve(
    server: Server, name: str, address: Callable[[], str], grace: float, log: logging.Logger
) -> int:
    """Start `server`, print "<name> listening on <address()>" to stderr (the line the
    launcher waits for), serve until SIGTERM or SIGINT, then stop with `grace` seconds for
    the RPCs in flight; the exit code (0)."""
    stop, _ = stop_on_signals()
    server.start()
    freeze_startup_objects()
    print(f"{name} listening on {address()}", file=sys.stderr, flush=True)
    task = getattr(server, "task_name", name)
    log.info(
        "%s started on %s",
        task,
        address(),
        extra={"event": "task_start", "task": task, "address": address()},
    )
    while not stop.wait(1.0):
        pass
    log.info("%s shutting down", name)
    server.stop(grace)
    log.info("%s stopped", task, extra={"event": "task_stop", "task": task})
    return 0
