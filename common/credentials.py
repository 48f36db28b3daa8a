"""Credentials of a process (no gRPC here): TLS certificate, key and CA, the cluster's
shared token, the client token and the admin token, read from files named by flags or
environment variables.

Every task of a closed cluster and every client loads the same kind of value: servers use
the certificate and key (and, with a CA, require clients to present a certificate it
signed: mutual TLS), channels trust the CA and present the certificate; every call carries
a token. The cluster token is what tasks present to each other (the master to workers,
workers to peers); the client token, given to users, opens MasterService only; Reset /
CleanupAll need the admin token. `python -m deploy certs` writes a CA, per-task
certificates and the three token files for a cluster file. The gRPC side of these values
(server ports, channels, the token check) is rpc.auth.

Environment (used when the flag is not given): FLOWRT_TLS_CERT, FLOWRT_TLS_KEY,
FLOWRT_TLS_CA (file paths), FLOWRT_AUTH_TOKEN / FLOWRT_AUTH_TOKEN_FILE,
FLOWRT_CLIENT_TOKEN / FLOWRT_CLIENT_TOKEN_FILE, FLOWRT_ADMIN_TOKEN /
FLOWRT_ADMIN_TOKEN_FILE. Values are frozen; safe from any thread.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path

from common.errors import InvalidArgumentError


@dataclasses.dataclass(frozen=True, repr=False)
class Credentials:
    """What a process presents and checks; all None is insecure mode."""

    cert: bytes | None = None  # PEM certificate chain of this process
    key: bytes | None = None  # PEM private key of `cert`
    ca: bytes | None = None  # PEM CA bundle: trusted servers; on a server, required clients
    token: str | None = None  # the cluster's shared token
    admin_token: str | None = None  # needed for Reset and CleanupAll when tokens are on
    # Opens MasterService (not WorkerService): what users get. A master accepts it; a
    # client presents it when it has no cluster token.
    client_token: str | None = None

    @property
    def tls(self) -> bool:
        return self.cert is not None or self.ca is not None

    @property
    def secure(self) -> bool:
        """TLS or a token: anything but TensorFlow's open insecure mode."""
        return self.tls or self.token is not None or self.client_token is not None

    @property
    def presented(self) -> str | None:
        """The token this process's calls carry (admin methods: `admin_token` first)."""
        return self.token or self.client_token or self.admin_token

    def __repr__(self) -> str:  # never print secrets
        parts = [
            f"tls={'mutual' if self.ca and self.cert else self.tls}",
            f"token={'set' if self.token else 'none'}",
            f"admin_token={'set' if self.admin_token else 'none'}",
            f"client_token={'set' if self.client_token else 'none'}",
        ]
        return f"Credentials({', '.join(parts)})"


INSECURE = Credentials()


def load(
    tls_cert: str | None = None,
    tls_key: str | None = None,
    tls_ca: str | None = None,
    token_file: str | None = None,
    admin_token_file: str | None = None,
    env: Mapping[str, str] | None = None,
    client_token_file: str | None = None,
) -> Credentials:
    """Credentials from files (flags first, then the environment); InvalidArgument with
    one line naming the file on a missing or unreadable one."""
    env = os.environ if env is None else env
    cert = _read(tls_cert or env.get("FLOWRT_TLS_CERT"), "TLS certificate")
    key = _read(tls_key or env.get("FLOWRT_TLS_KEY"), "TLS key")
    ca = _read(tls_ca or env.get("FLOWRT_TLS_CA"), "TLS CA")
    if (cert is None) != (key is None):
        raise InvalidArgumentError("--tls-cert and --tls-key go together")
    token = _token(token_file, env, "FLOWRT_AUTH_TOKEN", "auth token")
    admin = _token(admin_token_file, env, "FLOWRT_ADMIN_TOKEN", "admin token")
    client = _token(client_token_file, env, "FLOWRT_CLIENT_TOKEN", "client token")
    if client is not None and client in (token, admin):
        raise InvalidArgumentError("the client token must differ from the cluster and admin tokens")
    return Credentials(cert, key, ca, token, admin, client)


def _read(path: str | None, what: str) -> bytes | None:
    if not path:
        return None
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise InvalidArgumentError(f"cannot read the {what} file {path}: {e.strerror}") from None


def _token(path: str | None, env: Mapping[str, str], var: str, what: str) -> str | None:
    path = path or env.get(f"{var}_FILE")
    raw = _read(path, what).decode().strip() if path else env.get(var, "").strip()  # type: ignore[union-attr]
    if not raw:
        return None
    if len(raw) < 16:
        raise InvalidArgumentError(f"the {what} is too short ({len(raw)} characters; 16 or more)")
    return raw
