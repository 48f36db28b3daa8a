"""Step deadlines (rpc.deadlines): the watcher calls what is due, in deadline order, and never
what was cancelled (pure logic plus its one thread; no sockets)."""

from __future__ import annotations

import threading
import time

from rpc.deadlines import DeadlineWatcher


def test_due_callbacks_run_in_deadline_order_and_cancelled_ones_never():
    watcher = DeadlineWatcher()
    fired: list[str] = []
    done = threading.Event()
    now = time.monotonic()
    watcher.watch(now + 0.10, lambda: (fired.append("late"), done.set()))
    watcher.watch(now + 0.02, lambda: fired.append("early"))
    cancelled = watcher.watch(now + 0.05, lambda: fired.append("cancelled"))
    watcher.cancel(cancelled)
    assert done.wait(5.0)
    assert fired == ["early", "late"]
    assert watcher.pending() == 0


def test_a_deadline_already_past_fires_at_once():
    watcher = DeadlineWatcher()
    fired = threading.Event()
    watcher.watch(time.monotonic() - 1.0, fired.set)
    assert fired.wait(5.0)


def test_an_earlier_deadline_wakes_the_watcher_and_cancelled_entries_do_not_pile_up():
    watcher = DeadlineWatcher()
    fired = threading.Event()
    far = time.monotonic() + 3600.0
    watcher.watch(far, lambda: None)  # the watcher now sleeps for an hour
    for k in range(1000):  # steps that ended before their (later) deadlines
        watcher.cancel(watcher.watch(far + k, lambda: None))
    assert watcher.pending() == 1
    assert watcher.heap_size() <= 2 * 1 + 64 + 1
    start = time.monotonic()
    watcher.watch(time.monotonic() + 0.05, fired.set)  # earlier than what it waits for
    assert fired.wait(5.0)
    assert time.monotonic() - start < 3.0
