"""Deploy, certificates: `python -m deploy certs --cluster FILE --out DIR` makes what a
closed cluster needs: a self-signed CA, a certificate and key per task of the cluster file
(the master, each job's tasks) and one for clients, each valid for its host name or IP,
localhost and 127.0.0.1, for both server and client authentication (mutual TLS), plus the
shared (cluster) token, the client token and the admin token files. Keys and tokens are
written mode 0600.

Files in DIR: ca.pem, ca.key, master.pem/.key, <job><index>.pem/.key, client.pem/.key,
token, client_token, admin_token. Then start every task with --tls-cert DIR/<task>.pem
--tls-key DIR/<task>.key --tls-ca DIR/ca.pem --auth-token-file DIR/token, the master also
with --client-token-file DIR/client_token, and give users client.pem/.key, ca.pem and
client_token, which open the master but no worker (see README, Security).
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import os
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from common.cluster import ClusterSpec, split_address
from common.errors import OpError

VALID_DAYS = 825  # the longest validity TLS clients commonly accept for a leaf


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _alt_names(host: str) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = [
        x509.DNSName("localhost"),
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
    ]
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        if host != "localhost":
            names.append(x509.DNSName(host))
    else:
        if str(ip) != "127.0.0.1":
            names.append(x509.IPAddress(ip))
    return names


def make_ca() -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _key()
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("flowrt cluster CA"))
        .issuer_name(_name("flowrt cluster CA"))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    return cert, key


def make_leaf(
    name: str, host: str, ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A certificate for `name` at `host`, signed by the CA, for server and client use."""
    key = _key()
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(_alt_names(host)), critical=False)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    return cert, key


def _write(path: Path, data: bytes, private: bool = False) -> None:
    path.write_bytes(data)
    if private:
        os.chmod(path, 0o600)


def _write_pair(
    out: Path, stem: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey
) -> None:
    _write(out / f"{stem}.pem", cert.public_bytes(serialization.Encoding.PEM))
    _write(
        out / f"{stem}.key",
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
        private=True,
    )


def make_cluster_certs(cluster: ClusterSpec, out: Path) -> list[str]:
    """Write the CA, per-task and client certificates and the tokens; the stems written."""
    out.mkdir(parents=True, exist_ok=True)
    ca, ca_key = make_ca()
    _write_pair(out, "ca", ca, ca_key)
    tasks: list[tuple[str, str]] = []
    if cluster.master is not None:
        tasks.append(("master", split_address(cluster.master)[0]))
    for job, indexed in cluster.job_tasks:
        tasks += [(f"{job}{i}", split_address(a)[0]) for i, a in indexed]
    tasks.append(("client", "localhost"))
    for stem, host in tasks:
        _write_pair(out, stem, *make_leaf(stem, host, ca, ca_key))
    _write(out / "token", secrets.token_urlsafe(32).encode() + b"\n", private=True)
    _write(out / "client_token", secrets.token_urlsafe(32).encode() + b"\n", private=True)
    _write(out / "admin_token", secrets.token_urlsafe(32).encode() + b"\n", private=True)
    return [stem for stem, _ in tasks]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m deploy certs",
        description="Make a CA, per-task TLS certificates and auth tokens for a cluster file.",
    )
    p.add_argument("--cluster", required=True, help="cluster YAML file")
    p.add_argument("--out", required=True, help="directory to write into (created)")
    args = p.parse_args(argv)
    try:
        stems = make_cluster_certs(ClusterSpec.load(args.cluster), Path(args.out))
    except OpError as e:
        print(f"error: {e.message}", file=sys.stderr)
        return 2
    print(
        f"wrote ca.pem, {', '.join(s + '.pem' for s in stems)}, their keys, token, "
        f"client_token and admin_token to {args.out}"
    )
    return 0
