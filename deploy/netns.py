"""Deploy, a multi-host test bed on one machine: one Linux network namespace per "host".

`NetnsBed(n).start()` creates `n` namespaces, each with its own address on a private
bridge (10.213.X.0/24, X chosen per bed), and gives this (the root) namespace an address
on the bridge too (`client_address`), so a test process can dial the tasks. Every path
between two hosts is the real cross-host one: TCP through veth pairs and a bridge, no
loopback, and different network namespaces count as different hosts for the same-host fast
paths (rpc.shm.host_id). The bridge lives in a namespace of its own ("hub"), so the
root namespace's firewall never sees the bed's traffic.

`prefix(i)` is the argv prefix that runs a command on host i (`ip netns exec NS`).
Link failures: `cut(a, b)` drops every packet between hosts a and b silently (both ends' ARP
entry for the other points at a MAC address nobody has: no reset, no ICMP, the link just
goes quiet), `heal(a, b)` puts
the link back; `isolate(i)` / `reconnect(i)` take host i's cable out of the bridge.
`stop()` deletes everything it created. Needs root (CAP_NET_ADMIN) and iproute2;
`available()` says why not, for tests to skip with that reason. Not thread-safe.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from collections.abc import Sequence

_count = itertools.count()
_NOWHERE = "02:00:00:00:de:ad"  # locally administered, on no interface
PORT = 2222  # every host has its own address, so every task can use TensorFlow's port


def available() -> str | None:
    """None if namespaces can be made here, else the reason they cannot."""
    if shutil.which("ip") is None:
        return "iproute2 (ip) is not installed"
    if os.geteuid() != 0:
        return "network namespaces need root (CAP_NET_ADMIN)"
    name = f"frtprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return None


def _ip(*args: str) -> None:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {proc.stderr.strip()}")


def _run(argv: Sequence[str], check: bool = True) -> None:
    proc = subprocess.run(list(argv), capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {proc.stderr.strip()}")


class NetnsBed:
    """`hosts` namespaces on one bridge, plus this namespace as a client host."""

    def __init__(self, hosts: int) -> None:
        n = next(_count)
        self.tag = f"fr{os.getpid() % 10000:04d}{n % 10}"  # interface names: 15 chars max
        self.subnet = 10 + (os.getpid() * 7 + n) % 240  # 10.213.<subnet>.0/24
        self.hub = f"{self.tag}-hub"
        self.namespaces = [f"{self.tag}-h{i}" for i in range(hosts)]
        self.addresses = [f"10.213.{self.subnet}.{10 + i}" for i in range(hosts)]
        self.client_address = f"10.213.{self.subnet}.1"
        self._cuts: set[tuple[int, int]] = set()
        self._made: list[str] = []
        self.owner: object = None  # who deletes the bed (a LocalCluster of `python -m deploy`)

    @property
    def created(self) -> list[str]:
        """The namespaces made so far (for a watchdog to delete)."""
        return list(self._made)

    @property
    def links(self) -> list[str]:
        """Links of this namespace (its cable into the bridge)."""
        return [f"{self.tag}c"]

    def start(self) -> NetnsBed:
        try:
            _ip("netns", "add", self.hub)
            self._made.append(self.hub)
            _ip("-n", self.hub, "link", "set", "lo", "up")
            _ip("-n", self.hub, "link", "add", "br0", "type", "bridge")
            _ip("-n", self.hub, "link", "set", "br0", "up")
            for i, (ns, address) in enumerate(zip(self.namespaces, self.addresses)):
                _ip("netns", "add", ns)
                self._made.append(ns)
                _ip("-n", ns, "link", "set", "lo", "up")
                self._cable(f"{self.tag}h{i}", "eth0", ns)
                _ip("-n", ns, "addr", "add", f"{address}/24", "dev", "eth0")
                _ip("-n", ns, "link", "set", "eth0", "up")
            # This namespace's cable: a test process dials the tasks as a client host.
            _ip(
                "link",
                "add",
                f"{self.tag}c",
                "type",
                "veth",
                "peer",
                "name",
                f"{self.tag}cb",
                "netns",
                self.hub,
            )
            _ip("-n", self.hub, "link", "set", f"{self.tag}cb", "master", "br0", "up")
            _ip("addr", "add", f"{self.client_address}/24", "dev", f"{self.tag}c")
            _ip("link", "set", f"{self.tag}c", "up")
        except BaseException:
            self.stop()
            raise
        return self

    def _cable(self, hub_end: str, host_end: str, ns: str) -> None:
        _ip(
            "-n",
            self.hub,
            "link",
            "add",
            hub_end,
            "type",
            "veth",
            "peer",
            "name",
            host_end,
            "netns",
            ns,
        )
        _ip("-n", self.hub, "link", "set", hub_end, "master", "br0", "up")

    def prefix(self, host: int) -> list[str]:
        """argv prefix running a command on `host`."""
        return ["ip", "netns", "exec", self.namespaces[host]]

    # -- failures ---------------------------------------------------------------------------
    def cut(self, a: int, b: int) -> None:
        """Drop every packet between hosts a and b (both directions), silently."""
        self._cuts.add((min(a, b), max(a, b)))
        self._filters(a)
        self._filters(b)

    def heal(self, a: int, b: int) -> None:
        self._cuts.discard((min(a, b), max(a, b)))
        self._filters(a)
        self._filters(b)

    def _filters(self, host: int) -> None:
        """Host's neighbour entries: for each peer it is cut from, a permanent one with a
        MAC address nobody has, so its frames to that peer go nowhere (no error, no ICMP,
        no reset: the link is just quiet); the real entry is learnt again once healed."""
        ns = self.namespaces[host]
        peers = {b if a == host else a for a, b in self._cuts if host in (a, b)}
        for peer, address in enumerate(self.addresses):
            if peer == host:
                continue
            if peer in peers:
                _run(
                    [
                        "ip",
                        "-n",
                        ns,
                        "neigh",
                        "replace",
                        address,
                        "lladdr",
                        _NOWHERE,
                        "nud",
                        "permanent",
                        "dev",
                        "eth0",
                    ]
                )
            else:
                _run(["ip", "-n", ns, "neigh", "del", address, "dev", "eth0"], check=False)

    def isolate(self, host: int) -> None:
        """Take host's cable out (its interface stays up: no error, just silence)."""
        _ip("-n", self.hub, "link", "set", f"{self.tag}h{host}", "down")

    def reconnect(self, host: int) -> None:
        _ip("-n", self.hub, "link", "set", f"{self.tag}h{host}", "up")

    def stop(self) -> None:
        """Delete the namespaces (their interfaces go with them) and this namespace's
        cable. Idempotent."""
        subprocess.run(["ip", "link", "del", f"{self.tag}c"], capture_output=True)
        for ns in reversed(self._made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        self._made.clear()

    def __enter__(self) -> NetnsBed:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
