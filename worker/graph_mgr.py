"""Worker, registered graphs: RegisterGraph / RunGraph / DeregisterGraph (TF's GraphMgr).

`register` turns the partition the master shipped (a GraphDef whose nodes carry full
device names of this task; `_`-prefixed internal ops such as _Send/_Recv allowed) into a
Graph, splits it further per local device (common.partition: more _Send/_Recv pairs, local
to the step's rendezvous), builds one Executor per device and returns a graph_handle.
`run` executes every executor of a graph for one step_id: it injects the request's sends
into the step's rendezvous, runs the executors concurrently, and then reads the recv keys.
A partial run keeps its executors running across several `run` calls for one step_id
(worker.partial_run: started by the first, finished by the one marked last, expired
after `partial_idle_timeout` idle seconds). Each registered graph has a
FunctionRuntime over this worker's devices, so function bodies may use any of them.
The first failure aborts the step everywhere (its rendezvous, so local and remote waiters
fail fast, and the other executors' steps) and is what `run` raises.
A traced step (a StepStatsCollector passed to `run`) records NodeExecStats per local
device; `partition_graphs` gives the per-device GraphDefs the executors run.
Variables live in the devices' ResourceMgrs, so they survive across steps.
Thread-safe: one lock guards the handle table; registered executors are immutable and
run many steps concurrently.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import common.ops  # noqa: F401  (registers every op and kernel)
from common import device_name, metrics
from common.device import Device
from common.errors import (
    AbortedError,
    DeadlineExceededError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
    root_error,
)
from common.executor import Executor, StepState, StepStatsCollector
from common.executor.barrier import ExecutorBarrier
from common.executor.cost_graph import add_to_cost_graph
from common.function_runtime import FunctionRuntime
from common.graph.constructor import convert_graph_def_to_graph
from common.graph.graph import Graph
from common.partition import partition, unique_names
from common.rendezvous import create_key, parse_key
from common.resource_mgr import Scope
from protos import cost_graph_pb2
from rpc.deadlines import DEADLINES
from worker.partial_run import PartialRuns, recv_output, send_inputs
from worker.rendezvous_mgr import RendezvousMgr

DEFAULT_STEP_TIMEOUT = 600.0
# After a step's deadline aborted it, how long to wait for kernels already running.
_ABORT_GRACE_SECONDS = 10.0


@dataclasses.dataclass(frozen=True)
class _Unit:
    """The part of a registered graph that runs on one local device."""

    device: Device
    executor: Executor


@dataclasses.dataclass(frozen=True)
class _Item:
    handle: str
    units: tuple[_Unit, ...]
    # Runs function bodies (functional While/If, PartitionedCall) over this worker's
    # devices; one per registered graph, as its function library.
    function_runtime: FunctionRuntime
    # Rendezvous keys of the _Recvs every step runs first thing (no inputs at all, so in
    # the root frame and never dead): asked of their peers as the step starts.
    prefetch: tuple[str, ...] = ()


_RECV_OPS = ("_Recv", "_HostRecv")


def _prefetch_keys(graphs: Iterable[Graph]) -> tuple[str, ...]:
    keys = []
    for g in graphs:
        for node in g.op_nodes():
            if (
                node.op in _RECV_OPS
                and not node.attr("client_terminated", False)
                and all(e.src.is_source for e in node.in_edges)
            ):
                keys.append(
                    create_key(
                        node.attr("send_device"),
                        node.attr("send_device_incarnation"),
                        node.attr("recv_device"),
                        node.attr("tensor_name"),
                    )
                )
    return tuple(keys)


class GraphMgr:
    """The graphs registered in one worker session."""

    def __init__(
        self,
        devices: Sequence[Device],
        rendezvous_mgr: RendezvousMgr,
        step_timeout: float = DEFAULT_STEP_TIMEOUT,
        partial_idle_timeout: float | None = None,
        intra_op_threads: int = 0,
    ) -> None:
        self.devices = {d.name: d for d in devices}
        self.rendezvous_mgr = rendezvous_mgr
        self.step_timeout = step_timeout
        # As long as a step may take, by default: a slow but live master is not cut off.
        self.partial_idle_timeout = (
            step_timeout if partial_idle_timeout is None else partial_idle_timeout
        )
        self._lock = threading.Lock()
        self._items: dict[str, _Item] = {}
        self._partial_runs = PartialRuns(self.partial_idle_timeout, rendezvous_mgr.cleanup)
        self._next_handle = itertools.count(1)
        # This session's kernels hang their private resources on it; dropped with the session.
        self.scope = Scope(intra_op_threads)

    # -- registration ----------------------------------------------------------------------
    def register(self, graph_def: Any) -> str:
        """Build the executors for a partition; returns its graph_handle."""
        graph = convert_graph_def_to_graph(
            graph_def, allow_internal_ops=True, expect_device_spec=True
        )
        by_device = self._split_by_device(graph, graph_def)
        units = tuple(
            _Unit(
                self.devices[name], Executor(g, self.devices[name], flib=g.flib, scope=self.scope)
            )
            for name, g in by_device.items()
        )
        runtime = FunctionRuntime(graph.flib, list(self.devices.values()))
        prefetch = _prefetch_keys(by_device.values())
        with self._lock:
            handle = f"{next(self._next_handle):016x}"
            self._items[handle] = _Item(handle, units, runtime, prefetch)
        metrics.WORKER_REGISTERED_GRAPHS.inc()
        return handle

    def deregister(self, handle: str) -> None:
        with self._lock:
            if self._items.pop(handle, None) is None:
                raise NotFoundError(f"Graph handle is not found: {handle}")
        metrics.WORKER_REGISTERED_GRAPHS.dec()

    def drop_graphs(self) -> None:
        """Deregister every graph (the worker session is deleted; steps already running
        keep theirs)."""
        with self._lock:
            dropped = len(self._items)
            self._items.clear()
        metrics.WORKER_REGISTERED_GRAPHS.dec(dropped)
        self.scope.close()  # resources private to this session's kernels

    def handles(self) -> list[str]:
        with self._lock:
            return sorted(self._items)

    def _device_of(self, node: Any) -> str:
        spec = node.assigned_device or node.requested_device
        name = device_name.canonical(spec)
        if name not in self.devices:
            raise InvalidArgumentError(
                f"Node {node.name} is placed on {spec}, which is not a device of this "
                f"worker ({', '.join(sorted(self.devices))})",
                node.name,
            )
        return name

    def _split_by_device(self, graph: Graph, graph_def: Any) -> dict[str, Graph]:
        locs = {self._device_of(n) for n in graph.op_nodes()}
        if len(locs) <= 1:
            return {(locs.pop() if locs else next(iter(self.devices))): graph}
        parts = partition(
            graph,
            node_to_loc=self._device_of,
            get_incarnation=lambda d: self.devices[device_name.canonical(d)].incarnation,
            new_name=unique_names(graph),
        )
        out = {}
        for loc, part in parts.items():
            if graph_def.HasField("library") and not part.HasField("library"):
                part.library.CopyFrom(graph_def.library)
            out[loc] = convert_graph_def_to_graph(
                part, allow_internal_ops=True, expect_device_spec=True
            )
        return out

    # -- execution -------------------------------------------------------------------------
    def run(
        self,
        handle: str,
        step_id: int,
        sends: Iterable[tuple[str, Any]] = (),
        recv_keys: Sequence[str] = (),
        timeout: float | None = None,
        *,
        is_partial: bool = False,
        is_last_partial_run: bool = False,
        collector: StepStatsCollector | None = None,
    ) -> dict[str, tuple[Any, bool]]:
        """Run one step of a registered graph; {recv key: (value, is_dead)}.

        With a `collector` the step is traced: every executor records its nodes into the
        collector's entry for its device (ExecutorOpts.record_timeline). A partial run is
        traced when its first call has a collector; the call that ends it gets the whole
        run's records.

        A partial run (TF's DoPartialRunGraph) is one step spread over several calls:
        the first call for a step_id starts the executors, every call delivers its sends
        and waits for its recv keys, and the call with `is_last_partial_run` waits for the
        executors to finish and frees the step."""
        for key in recv_keys:
            parse_key(key)
        # --step-timeout bounds every step: a caller's longer deadline (the master's for a
        # step its client gave none) does not lift it.
        budget = self.step_timeout if timeout is None else min(timeout, self.step_timeout)
        deadline = time.monotonic() + budget
        if is_partial:

            def on_last(step: Any) -> None:  # the whole partial run's trace, at its end
                if collector is not None and step.collector is not None:
                    collector.absorb(step.collector)

            return self._partial_runs.run(
                lambda: _RunningStep(self._item(handle), step_id, self.rendezvous_mgr, collector),
                step_id,
                sends,
                recv_keys,
                deadline,
                is_last_partial_run,
                on_last,
            )
        item = self._item(handle)
        step = _RunningStep(item, step_id, self.rendezvous_mgr, collector)
        if item.prefetch:
            step.rendezvous.prefetch(item.prefetch)
        # The executors may run on this thread; the watcher ends the step at its deadline
        # even if it never comes back to wait() (a loop of local kernels).
        watch = DEADLINES.watch(
            deadline,
            lambda: step.abort(DeadlineExceededError(f"Step {step_id} timed out on RunGraph")),
        )
        try:
            send_inputs(step.rendezvous, sends)
            step.rendezvous.start_here(step.start, deadline)
            step.wait(deadline)
            return {key: recv_output(step.rendezvous, key, deadline) for key in recv_keys}
        except OpError as e:
            step.rendezvous.start_abort(e)
            raise step.rendezvous.status or e from None
        finally:
            DEADLINES.cancel(watch)
            step.rendezvous.drop_prefetched()
            step.release()

    def abort_partial(self, step_id: int) -> None:
        """CleanupGraph of a partial run the master abandoned: stop and free it."""
        self._partial_runs.abort(step_id)

    def partial_step_ids(self) -> list[int]:
        return self._partial_runs.step_ids()

    def partition_graphs(self, handle: str) -> list[Any]:
        """The GraphDefs the graph's executors run, one per local device (as this worker
        split the registered partition): RunGraphResponse.partition_graph."""
        return [u.executor.graph.to_graph_def() for u in self._item(handle).units]

    def cost_graph(self, handle: str, collector: StepStatsCollector) -> Any:
        """The step's CostGraphDef over the graph's executors (RunGraphResponse.cost_graph,
        ExecutorOpts.record_costs), one device after the other."""
        out = cost_graph_pb2.CostGraphDef()
        for unit in self._item(handle).units:
            add_to_cost_graph(unit.executor.graph, collector.records(unit.device.name), out)
        return out

    def _item(self, handle: str) -> _Item:
        with self._lock:
            item = self._items.get(handle)
        if item is None:
            raise NotFoundError(f"Graph handle is not found: {handle}")
        return item


class _RunningStep:
    """The executors of one registered graph running one step_id.

    Holds the step's rendezvous from construction to `release` (so it cannot expire
    while the step runs), and until then is aborted with it: CleanupGraph or worker
    shutdown stops even executors that never wait on the rendezvous (a loop of local
    kernels). The per-step resource containers are dropped once every executor has
    finished. Thread-safe."""

    def __init__(
        self,
        item: _Item,
        step_id: int,
        rendezvous_mgr: RendezvousMgr,
        collector: StepStatsCollector | None = None,
    ) -> None:
        self.step_id = step_id
        self.collector = collector  # a traced step's (a partial run's: its first call's)
        self._item = item
        self._rendezvous_mgr = rendezvous_mgr
        self.steps: list[StepState] = []
        self.finished = threading.Event()
        self._lock = threading.Lock()  # before `hold`: the table may call abort at once
        self._aborted = False
        # Aborted if already cleaned up.
        self.rendezvous = rendezvous_mgr.hold(step_id, self.abort)
        self.steps = [
            StepState(
                step_id=step_id,
                device=u.device.name,
                incarnation=u.device.incarnation,
                rendezvous=self.rendezvous,
                resource_mgr=u.device.resource_mgr,
                function_runtime=item.function_runtime,
                stats=None if collector is None else collector.for_device(u.device.name),
            )
            for u in item.units
        ]
        # The barrier calls back into this step, so the step keeps only its `when_done`,
        # and only until `start` hands it to the executors: a finished step is then no
        # reference cycle, freed at once rather than by the garbage collector.
        self._errors: list[OpError] = []  # the executors' errors, once finished
        barrier = ExecutorBarrier(len(self.steps), on_error=self.abort, on_done=self._ended)
        self._when_done: Callable[[OpError | None], None] | None = barrier.when_done
        self._released = False
        if self.rendezvous.status is not None:  # aborted before the steps existed
            self.abort(self.rendezvous.status)

    def start(self) -> None:
        """Start the executors (once). The first error aborts the step (the other
        executors, the rendezvous): the barrier's on_error."""
        when_done, self._when_done = self._when_done, None
        assert when_done is not None, "a step starts once"
        for unit, step in zip(self._item.units, self.steps):
            unit.executor.run_async(step, when_done)

    def _ended(self, errors: list[OpError]) -> None:
        self._errors = errors
        for s in self.steps:
            s.cleanup()
        self.finished.set()

    def abort(self, error: OpError) -> None:
        with self._lock:
            first = not self._aborted and not self.finished.is_set()
            self._aborted = True
        if first:
            metrics.WORKER_ABORTED_STEPS.inc()
        for s in self.steps:
            s.abort(error)

    def wait(self, deadline: float) -> None:
        """Until every executor finished; raises the step's error or DeadlineExceeded."""
        if not self.finished.wait(max(0.0, deadline - time.monotonic())):
            error = DeadlineExceededError(f"Step {self.step_id} timed out on RunGraph")
            self.abort(error)
            if not self.finished.wait(_ABORT_GRACE_SECONDS):
                raise error
        # The step's rendezvous status is the first failure, which may have come from outside
        # the step's executors (CleanupGraph, a peer's RecvTensor): it is what the step
        # reports; the executors' errors are echoes of it or came after it.
        errors = self._errors
        if errors:
            raise self.rendezvous.status or root_error(errors)
        if self.rendezvous.is_aborted():  # e.g. CleanupGraph arrived while the step ran
            raise self.rendezvous.status or AbortedError(f"Step {self.step_id} aborted")

    def release(self) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
        self._rendezvous_mgr.release(self.step_id, self.abort)
