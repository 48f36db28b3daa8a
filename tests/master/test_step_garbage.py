"""A finished step leaves no reference cycle behind, on the master (its RunGraph calls
and answers) or on the workers (the step's executors and rendezvous): everything a step
made is freed by reference counting when it ends, none of it waits for the cyclic
garbage collector, whose passes over a serving process cost every step CPU."""

from __future__ import annotations

import gc

from tests.master.test_master import add_graph, create, run, values, x2

# What each step makes on the master and on a worker.
STEP_OBJECTS = {
    "_RunningStep",
    "StepState",
    "ExecutorBarrier",
    "RemoteRendezvous",
    "LocalRendezvous",
    "DeferredCall",
    "LocalCall",
    "RunGraphResponse",
}


def test_finished_steps_leave_no_cyclic_garbage(cluster):
    handle = create(cluster, add_graph())
    values(run(cluster, handle, ["d:0"], x2()))  # registers the graphs
    cluster.live_steps()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection finds is kept in gc.garbage
    try:
        for _ in range(5):
            values(run(cluster, handle, ["d:0"], x2()))
        assert cluster.live_steps() == {w.task_name: [] for w in cluster.workers}
        gc.collect()
        found = sorted({type(o).__name__ for o in gc.garbage} & STEP_OBJECTS)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert found == []
