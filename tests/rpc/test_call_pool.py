"""Cached RPC call pool (rpc.call_pool): results, errors, reuse, no queueing."""

from __future__ import annotations

import threading

import pytest

from rpc.call_pool import CallPool


def test_result_and_exception_reach_the_future():
    pool = CallPool("test-pool")
    assert pool.submit(lambda a, b: a + b, 2, 3).result(timeout=10) == 5
    with pytest.raises(ZeroDivisionError):
        pool.submit(lambda: 1 / 0).result(timeout=10)


def test_idle_thread_is_reused():
    pool = CallPool("test-pool")
    first = pool.submit(threading.get_ident).result(timeout=10)
    gate = threading.Event()
    seen = []

    def record() -> None:
        seen.append(threading.get_ident())
        gate.set()

    # The first thread finishes its item before parking as idle; wait until it is idle.
    while pool._idle == 0:  # noqa: SLF001  (the pool's own bookkeeping)
        threading.Event().wait(0.001)
    pool.submit(record).result(timeout=10)
    assert seen == [first]
    assert pool.num_threads() == 1


def test_calls_that_wait_on_each_other_do_not_deadlock():
    pool = CallPool("test-pool")
    a, b = threading.Event(), threading.Event()

    def left() -> str:
        a.set()
        assert b.wait(10)
        return "left"

    def right() -> str:
        b.set()
        assert a.wait(10)
        return "right"

    futures = [pool.submit(left), pool.submit(right)]
    assert [f.result(timeout=10) for f in futures] == ["left", "right"]
    assert pool.num_threads() == 2


def test_idle_threads_exit_after_idle_seconds():
    pool = CallPool("test-expiring-pool", idle_seconds=0.01)
    pool.submit(lambda: None).result(timeout=10)
    threads = [t for t in threading.enumerate() if t.name == "test-expiring-pool-1"]
    assert len(threads) <= 1
    for t in threads:
        t.join(10)
    assert pool.num_threads() == 0


class _Payload:
    """Stands for a finished call's arguments (in the runtime: a step's callbacks)."""


def test_an_idle_thread_keeps_no_finished_call_alive():
    """Neither the thread's first call (Thread keeps its args) nor its last one (the loop
    variable while it waits) stays reachable once done: they can hold a whole step."""
    import weakref

    pool = CallPool("test-pool")
    first, second = _Payload(), _Payload()
    refs = [weakref.ref(first), weakref.ref(second)]
    pool.submit(lambda p: None, first).result(timeout=10)
    while pool._idle == 0:  # noqa: SLF001  (wait until the thread is parked)
        threading.Event().wait(0.001)
    pool.submit(lambda p: None, second).result(timeout=10)
    while pool._idle == 0:  # noqa: SLF001
        threading.Event().wait(0.001)
    assert pool.num_threads() == 1
    del first, second
    assert [r() for r in refs] == [None, None]
