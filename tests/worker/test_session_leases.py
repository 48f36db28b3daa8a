"""Session ownership on a worker (worker.session_leases): a newer incarnation of a master
drops the older one's sessions; leased sessions expire when their master stops renewing
them; sessions never renewed (a TensorFlow master) do not expire."""

from __future__ import annotations

from rpc.service_paths import decode_keepalive, encode_keepalive
from worker.session_leases import SessionLeases

M = "/job:master/replica:0/task:0"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_restarted_master_drops_its_old_sessions():
    leases = SessionLeases(Clock())
    assert leases.created("a", M, 1) == []
    assert leases.created("b", M, 1) == []
    assert leases.created("x", "/job:worker/replica:0/task:0", 9) == []
    assert sorted(leases.created("c", M, 2)) == ["a", "b"]
    assert leases.created("d", M, 2) == []


def test_leases_expire_unless_renewed():
    clock = Clock()
    leases = SessionLeases(clock)
    for h in ("a", "b", "tf"):
        leases.created(h, M, 1)
    assert leases.renew(3.0, ["a", "b", "nosuch"]) == ["nosuch"]
    clock.now += 2.0
    leases.renew(3.0, ["a"])
    assert leases.expired() == []
    clock.now += 1.5
    assert leases.expired() == ["b"]
    clock.now += 10.0
    assert leases.expired() == ["a"]
    assert leases.expired() == []  # "tf" was never renewed: it lives until deleted


def test_deleted_sessions_are_forgotten():
    clock = Clock()
    leases = SessionLeases(clock)
    leases.created("a", M, 1)
    leases.renew(1.0, ["a"])
    leases.deleted("a")
    clock.now += 5
    assert leases.expired() == [] and not leases.leased()


def test_keepalive_wire_format():
    assert decode_keepalive(encode_keepalive(2.5, ["h1", "h2"])) == (2.5, ["h1", "h2"])
    assert decode_keepalive(encode_keepalive(60.0, [])) == (60.0, [])
