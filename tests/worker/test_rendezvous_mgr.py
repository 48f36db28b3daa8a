"""The per-step rendezvous table and the remote rendezvous' local routing (no sockets)."""

from __future__ import annotations

import pytest

from common.errors import AbortedError, DeadlineExceededError, InvalidArgumentError
from common.rendezvous import create_key
from worker.remote_rendezvous import RemoteRendezvous
from worker.rendezvous_mgr import RendezvousMgr

T0 = "/job:worker/replica:0/task:0"
T1 = "/job:worker/replica:0/task:1"


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _mgr(clock=None, expiry=10.0) -> RendezvousMgr:
    return RendezvousMgr(lambda sid: RemoteRendezvous(sid, T0, None), expiry, clock or _Clock())


def _recv_result(rendezvous, key):
    box = []
    rendezvous.recv_async(key, lambda v, d, e: box.append((v, d, e)))
    return box


def test_created_on_first_use_and_removed_by_cleanup():
    mgr = _mgr()
    r = mgr.find_or_create(5)
    assert mgr.find_or_create(5) is r
    assert mgr.step_ids() == [5]
    key = create_key(f"{T0}/device:CPU:0", 1, f"{T1}/device:CPU:0", "x")
    box = _recv_result(r, key)  # parked
    assert box == []
    mgr.cleanup(5)
    assert mgr.step_ids() == [] and mgr.find(5) is None
    assert isinstance(box[0][2], AbortedError) and box[0][2].message == "Cleanup 5"
    mgr.cleanup(5)  # no error for an unknown step


def test_idle_steps_expire_unless_held():
    clock = _Clock()
    mgr = _mgr(clock, expiry=10.0)
    idle = mgr.find_or_create(1)
    mgr.hold(2)
    clock.now = 11.0
    mgr.find_or_create(3)  # any table operation sweeps
    assert mgr.step_ids() == [2, 3]
    assert isinstance(idle.status, DeadlineExceededError)
    mgr.release(2)
    clock.now = 30.0
    mgr.cleanup(99)
    assert mgr.step_ids() == []


def test_the_table_is_scanned_for_idle_steps_at_most_every_sixteenth_of_the_expiry():
    """Lookups (every RunGraph and RecvTensor) do not each scan the table: an idle step
    goes at the first sweep after its expiry, sweeps 10/16 s apart here."""
    clock = _Clock()
    mgr = _mgr(clock, expiry=10.0)
    idle = mgr.find_or_create(1)  # swept at 0.0
    clock.now = 9.9
    mgr.find_or_create(2)  # swept: 1 is not idle long enough yet
    clock.now = 10.2
    mgr.find_or_create(3)  # within 10/16 s of the last sweep: no scan
    assert mgr.step_ids() == [1, 2, 3] and idle.status is None
    clock.now = 10.6
    mgr.find_or_create(3)
    assert mgr.step_ids() == [2, 3]
    assert isinstance(idle.status, DeadlineExceededError)


def test_abort_all():
    mgr = _mgr()
    rs = [mgr.find_or_create(i) for i in range(3)]
    mgr.abort_all(AbortedError("bye"))
    assert len(mgr) == 0
    assert [r.status.message for r in rs] == ["bye"] * 3


def test_holders_on_abort_hooks_run_after_the_rendezvous_aborted():
    mgr = _mgr()
    seen: list = []

    def hook(error):
        seen.append((error.message, [mgr_r.is_aborted() for mgr_r in rs]))

    rs = [mgr.hold(3, hook)]
    rs.append(mgr.hold(4, hook))
    mgr.release(4, hook)  # released: no longer told
    mgr.cleanup(3)
    mgr.cleanup(4)
    assert seen == [("Cleanup 3", [True, False])]
    rs = [mgr.hold(5, hook)]
    mgr.abort_all(AbortedError("shutting down"))
    assert seen[1:] == [("shutting down", [True])]


def test_local_and_fed_keys_stay_local():
    r = RemoteRendezvous(1, T0, None)
    local = create_key(f"{T0}/device:CPU:0", 7, f"{T0}/device:CPU:1", "a")
    fed = create_key("/job:client/replica:0/task:0/device:CPU:0", 3, f"{T0}/device:CPU:0", "b")
    r.send(local, 1.0)
    r.send(fed, 2.0)
    assert _recv_result(r, local) == [(1.0, False, None)]
    assert _recv_result(r, fed) == [(2.0, False, None)]
    bad = _recv_result(r, "garbage")
    assert isinstance(bad[0][2], InvalidArgumentError)


def test_remote_recv_after_abort_fails_with_the_abort_error():
    class _NeverCalled:
        def fetch(self, *args):
            raise AssertionError("no RPC after abort")

    r = RemoteRendezvous(1, T0, _NeverCalled())  # type: ignore[arg-type]
    r.start_abort(AbortedError("step failed"))
    import threading

    done = threading.Event()
    box = []

    def cb(v, d, e):
        box.append(e)
        done.set()

    r.recv_async(create_key(f"{T1}/device:CPU:0", 1, f"{T0}/device:CPU:0", "x"), cb)
    assert done.wait(10)
    assert box[0].message == "step failed"


@pytest.mark.parametrize("name", [T1, f"{T1}/device:CPU:3"])
def test_worker_cache_task_names(name):
    from rpc.worker_cache import canonical_task

    assert canonical_task(name) == T1
