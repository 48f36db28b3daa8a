"""Master, one session (TensorFlow's MasterSession): graph + versions, client graphs, steps.

Owns the session's GraphDef and graph version (Extend appends nodes), the devices seen at
creation (from every task's GetStatus) and a cache of client graphs, one per
(feeds, fetches, targets) signature. Building a client graph: rewrite for the feeds and
fetches (client-terminated _Recv/_Send), place over ALL cluster devices (unplaced nodes
prefer the default device), move each feed _Recv to where its consumers were placed and
each fetch _Send to its producer's device (both ends of their rendezvous keys then name
that device, so values enter and leave through RunGraphRequest.send and
RunGraphResponse.recv without a hop through the master), partition per TASK (workers split
further per local device), and RegisterGraph once per task. Steps reuse the registration
with a fresh random step_id. RunOptions.trace_level / output_partition_graphs become
ExecutorOpts on every RunGraph (`executor_opts`) and the workers' answers fill RunMetadata.

Partial runs (master.partial_run) run ONE step of the setup's client graph over several
RunStep calls, as TensorFlow's.

Thread-safe: one lock guards the graph, the cache and the handle tables; steps run
outside it and concurrently.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import common.ops  # noqa: F401  (the op registry validates graphs and placements)
from common import dtypes, metrics
from common.device_name import parse as parse_device
from common.errors import (
    AbortedError,
    CancelledError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
)
from common.function_library import FunctionLibrary
from common.graph.constructor import convert_graph_def_to_graph
from common.graph.graph import Graph, Node
from common.optimizer.graph_optimizer import optimize_graph, options_from_config
from common.partition import partition, unique_names
from common.placer import place
from common.rendezvous import create_key
from common.subgraph import (
    DeviceInfo,
    attr_i,
    attr_s,
    prune_after_lowering,
    rewrite_graph_for_execution,
    signed_incarnation,
)
from master.monitor import PlacedGraph, placed_graph
from master.partial_run import PartialRuns
from master.partition_runner import (
    PartitionPlan,
    PartitionRunner,
    RegisteredPartition,
    new_id,
)
from protos import config_pb2, graph_pb2, tensor_pb2, worker_pb2
from rpc import wire

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class DeviceEntry:
    """A device of the cluster as its task reported it (DeviceAttributes subset)."""

    name: str
    device_type: str
    incarnation: int
    task: str


@dataclasses.dataclass
class ClientGraph:
    """One registered (feeds, fetches, targets) signature."""

    parts: list[RegisteredPartition]
    feed_types: dict[str, dtypes.DataType]  # endpoint -> dtype (feeds that are used)
    # Steps run so far (TF's execution count: the cost graph's schedule counts them).
    executions: itertools.count = dataclasses.field(default_factory=itertools.count)

    @functools.cached_property
    def tasks(self) -> list[str]:
        """The tasks with a partition: the only ones a step touches (and cleans up)."""
        return sorted({p.plan.task for p in self.parts})


def task_of(device: str) -> str:
    d = parse_device(device)
    return f"/job:{d.job}/replica:{d.replica or 0}/task:{d.task}"


def step_timeout_s(options: Any, config: Any, default: float | None) -> float | None:
    """RunOptions.timeout_in_ms, else ConfigProto.operation_timeout_in_ms, else default."""
    if options is not None and options.timeout_in_ms > 0:
        return options.timeout_in_ms / 1000.0
    if config.operation_timeout_in_ms > 0:
        return config.operation_timeout_in_ms / 1000.0
    return default or None


def collect_costs(config: Any, count: int) -> bool:
    """Whether step `count` (0-based) of a client graph records its cost graph: TF's
    MasterSession builds it every `graph_options.build_cost_model` steps after skipping
    `build_cost_model_after`."""
    every = config.graph_options.build_cost_model
    after = config.graph_options.build_cost_model_after
    return every > 0 and (count + 1 - after) % every == 0


def executor_opts(options: Any, config: Any, costs: bool = False) -> worker_pb2.ExecutorOpts | None:
    """What every RunGraph of a step records (None: nothing). A trace_level above
    NO_TRACE records the timeline (TensorFlow's master asks for it at FULL_TRACE only,
    its DirectSession at any level); output_partition_graphs returns the partition graphs,
    refused as TensorFlow's DirectSession does when the session's config disables them."""
    if options is None:
        return worker_pb2.ExecutorOpts(record_costs=True) if costs else None
    timeline = options.trace_level > config_pb2.RunOptions.NO_TRACE
    graphs = options.output_partition_graphs
    if graphs and config.experimental.disable_output_partition_graphs:
        raise InvalidArgumentError(
            "RunOptions.output_partition_graphs() is not supported when "
            "disable_output_partition_graphs is true."
        )
    if not (timeline or graphs or costs):
        return None
    return worker_pb2.ExecutorOpts(
        record_timeline=timeline, record_partition_graphs=graphs, record_costs=costs
    )


class MasterSession:
    """A session's graph, its devices and its registered client graphs."""

    def __init__(
        self,
        handle: str,
        config: config_pb2.ConfigProto,
        devices: Sequence[DeviceEntry],
        client_device: DeviceInfo,
        runner: PartitionRunner,
        default_device: str,
        default_step_timeout: float | None,
        on_placed: Callable[[PlacedGraph], None] | None = None,
    ) -> None:
        self.handle = handle
        self.on_placed = on_placed  # the monitor's graph view of each new client graph
        self.config = config
        self.devices = list(devices)
        self.tasks = sorted({d.task for d in devices})
        self._incarnations = {d.name: d.incarnation for d in devices}
        self.client_device = client_device
        self.runner = runner
        self.default_device = default_device
        self.default_step_timeout = default_step_timeout
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()
        self._graph_def = graph_pb2.GraphDef()
        # (GraphDef, its Graph): built once per graph version for the partial runs'
        # dependency checks, which only read it.
        self._checked_graph: tuple[graph_pb2.GraphDef, Graph] | None = None
        # (GraphDef, {node: device}): the whole graph placed once per graph version.
        self._whole_placement: tuple[graph_pb2.GraphDef, dict[str, str]] | None = None
        # (GraphDef, its Graph): the Graph that Create/Extend built to validate the new
        # version, handed to the first plan of that version (planning rewrites the Graph
        # it gets, so each Graph serves one plan).
        self._unplanned_graph: tuple[graph_pb2.GraphDef, Graph] | None = None
        self._node_names: set[str] = set()
        self.graph_version = 0
        self._cache: dict[tuple, ClientGraph] = {}
        self._partial_runs = PartialRuns(runner, self.tasks)
        self._callables: dict[int, config_pb2.CallableOptions] = {}
        self._callable_ids = itertools.count()
        self.closed = False

    # -- graph -----------------------------------------------------------------------------
    def create(self, graph_def: graph_pb2.GraphDef) -> None:
        self._merge(graph_def)

    def extend(self, graph_def: graph_pb2.GraphDef, current_version: int) -> int:
        """Append nodes (and functions); returns the new graph version."""
        with self._lock:
            self._check_open()
            if current_version != self.graph_version:
                raise AbortedError(
                    f"Current version is {self.graph_version} but caller expected "
                    f"{current_version}."
                )
        self._merge(graph_def)
        with self._lock:
            self.graph_version += 1
            return self.graph_version

    def _merge(self, graph_def: graph_pb2.GraphDef) -> None:
        _refuse_optimizer_ops(graph_def)
        with self._lock:
            for node in graph_def.node:
                if node.name in self._node_names:
                    raise InvalidArgumentError(
                        f"GraphDef argument to Extend includes node '{node.name}', which was "
                        "created by a previous call to Create or Extend in this session."
                    )
            merged = graph_pb2.GraphDef()
            merged.CopyFrom(self._graph_def)
            merged.node.extend(graph_def.node)
            if graph_def.HasField("versions"):
                merged.versions.CopyFrom(graph_def.versions)
            if graph_def.library.function or graph_def.library.gradient:
                merged.library.CopyFrom(_merge_library(merged.library, graph_def.library))
            if merged.node:  # validates the whole graph
                self._unplanned_graph = (merged, convert_graph_def_to_graph(merged))
            self._graph_def = merged
            self._node_names.update(n.name for n in graph_def.node)

    def _check_open(self) -> None:
        if self.closed:
            raise FailedPreconditionError("Session is closed.")

    # -- client graphs ---------------------------------------------------------------------
    def client_graph(
        self, feeds: Sequence[str], fetches: Sequence[str], targets: Sequence[str]
    ) -> ClientGraph:
        key = (tuple(sorted(feeds)), tuple(sorted(fetches)), tuple(sorted(targets)))
        with self._build_lock:
            with self._lock:
                self._check_open()
                found = self._cache.get(key)
                graph_def = self._graph_def
            if found is not None:
                return found
            start = time.perf_counter()
            plans, feed_types = self._plan(graph_def, list(key[0]), list(key[1]), list(key[2]))
            metrics.MASTER_PLAN_SECONDS.observe(time.perf_counter() - start)
            built = ClientGraph(self.runner.register(plans, self.config), feed_types)
            metrics.MASTER_PARTITIONS_REGISTERED.inc(len(built.parts))
            with self._lock:
                self._cache[key] = built
            return built

    def _plan(
        self,
        graph_def: graph_pb2.GraphDef,
        feeds: list[str],
        fetches: list[str],
        targets: list[str],
    ) -> tuple[list[PartitionPlan], dict[str, dtypes.DataType]]:
        graph = self._graph_to_plan(graph_def)
        whole = self._placement_of_whole_graph(graph_def, graph)
        result = rewrite_graph_for_execution(
            graph, feeds, fetches, targets, device_info=self.client_device
        )
        # CSE, constant folding, Identity and dead-node removal, as the session's
        # ConfigProto.graph_options.optimizer_options asks (TensorFlow's default: on).
        stats = optimize_graph(
            graph,
            options=options_from_config(self.config),
            keep=targets,
            rewrite_options=self.config.graph_options.rewrite_options,
            intra_op_threads=self.config.intra_op_parallelism_threads,
        )
        if stats.functional_lowered:
            prune_after_lowering(graph, result, targets)
        endpoints = list(result.feed_nodes.values()) + list(result.fetch_nodes.values())
        for node in endpoints:
            node.assigned_device = ""  # placed with the graph, then pinned below
        for node in graph.op_nodes():
            if not node.assigned_device and node.name in whole:
                node.assigned_device = whole[node.name]
        explain: dict[str, tuple[str, str]] | None = {} if self.on_placed else None
        place(
            graph,
            [d.name for d in self.devices],
            default_device=self.default_device,
            allow_soft_placement=self.config.allow_soft_placement,
            log_device_placement=self.config.log_device_placement,
            explain=explain,
        )
        feed_keys = {ep: self._pin(n, _consumer_device(n)) for ep, n in result.feed_nodes.items()}
        fetch_keys = {ep: self._pin(n, _producer_device(n)) for ep, n in result.fetch_nodes.items()}
        parts = partition(
            graph,
            node_to_loc=lambda n: task_of(n.assigned_device),
            get_incarnation=lambda d: self._incarnations[d],
            new_name=unique_names(graph),
        )
        if self.on_placed is not None and explain is not None:
            key = f"{', '.join(feeds) or '-'} -> {', '.join(fetches + targets) or '-'}"
            self.on_placed(placed_graph(key, graph, explain, parts))
        plans = [
            PartitionPlan(
                task,
                gd,
                {ep: k for ep, k in feed_keys.items() if task_of(k.split(";")[2]) == task},
                {ep: k for ep, k in fetch_keys.items() if task_of(k.split(";")[0]) == task},
            )
            for task, gd in parts.items()
        ]
        feed_types = {ep: result.feed_types[feeds.index(ep)] for ep in result.feed_nodes}
        return plans, feed_types

    def _graph_to_plan(self, graph_def: graph_pb2.GraphDef) -> Graph:
        """A Graph of `graph_def` this plan may rewrite: the one Create/Extend built for
        it if no plan took it yet, else a new conversion."""
        with self._lock:
            unplanned = self._unplanned_graph
            if unplanned is not None and unplanned[0] is graph_def:
                self._unplanned_graph = None
                return unplanned[1]
        return convert_graph_def_to_graph(graph_def)

    def _placement_of_whole_graph(
        self, graph_def: graph_pb2.GraphDef, graph: Graph
    ) -> dict[str, str]:
        """{node name: device} of the session's whole graph, placed once per version.
        `graph` is `graph_def` converted and not yet rewritten: placed, its devices are
        copied and its nodes left unplaced again (no second conversion per version).

        TensorFlow places the whole graph and prunes it for each run, so a node goes to
        one device whatever a run needs: a variable with no device whose slots are
        colocated on a ps task stays there in a run that only reads it. Each run's graph
        starts from these devices (nodes a run adds, feeds, fetches and lowered function
        bodies are placed with it). A whole graph that cannot be placed (a node no run
        uses asks for a device that does not exist) leaves each run to place its own
        nodes, which then report the error only when a run needs them."""
        with self._lock:
            cached = self._whole_placement
        if cached is not None and cached[0] is graph_def:
            return cached[1]
        try:
            place(
                graph,
                [d.name for d in self.devices],
                default_device=self.default_device,
                allow_soft_placement=self.config.allow_soft_placement,
            )
            devices = {n.name: n.assigned_device for n in graph.op_nodes()}
        except InvalidArgumentError:
            devices = {}
        for node in graph.op_nodes():
            node.assigned_device = ""  # the run's own placement starts from `devices`
        with self._lock:
            self._whole_placement = (graph_def, devices)
        return devices

    def _pin(self, node: Node, device: str) -> str:
        """Put a client feed/fetch node on `device`, both key ends naming it; its key."""
        incarnation = self._incarnations[device]
        node.assigned_device = device
        node.attr_protos["send_device"] = attr_s(device)
        node.attr_protos["recv_device"] = attr_s(device)
        node.attr_protos["send_device_incarnation"] = attr_i(signed_incarnation(incarnation))
        tensor_name = node.attr_protos["tensor_name"].s.decode()
        return create_key(device, incarnation, device, tensor_name)

    # -- steps -----------------------------------------------------------------------------
    def run(
        self,
        feeds: dict[str, wire.Tensor],
        fetches: Sequence[str],
        targets: Sequence[str],
        options: Any = None,
        metadata: config_pb2.RunMetadata | None = None,
    ) -> dict[str, wire.Tensor]:
        """One step; {fetch endpoint: value}. When `options` ask for a trace or the
        partition graphs, they are added to `metadata`."""
        exec_opts = executor_opts(options, self.config)
        cg = self.client_graph(list(feeds), fetches, targets)
        if collect_costs(self.config, next(cg.executions)):
            exec_opts = executor_opts(options, self.config, costs=True)
        for endpoint, dtype in cg.feed_types.items():
            got = feeds[endpoint].dtype
            if got != dtype:
                raise InvalidArgumentError(
                    f"Cannot feed {endpoint}: the fed value has type "
                    f"{dtypes.tf_name(dtypes.DataType(got))} but the tensor has type "
                    f"{dtypes.tf_name(dtype)}",
                    endpoint.split(":")[0],
                )
        used = {ep: feeds[ep] for ep in cg.feed_types}
        step_id = new_id(57)
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "running step %d of session %s on %s", step_id, self.handle, ", ".join(cg.tasks)
            )
        return self.runner.run_step(
            cg.parts,
            step_id,
            used,
            step_timeout_s(options, self.config, self.default_step_timeout),
            cg.tasks,
            exec_opts,
            metadata,
        )

    # -- partial runs (master.partial_run) -------------------------------------------------
    def partial_run_setup(
        self, feeds: Sequence[str], fetches: Sequence[str], targets: Sequence[str]
    ) -> str:
        cg = self.client_graph(list(feeds), list(fetches), list(targets))
        graph = self._graph_for_checks()
        return self._partial_runs.setup(cg.parts, cg.feed_types, graph, feeds, fetches)

    def _graph_for_checks(self) -> Graph:
        """The session's graph as a Graph, shared by every partial run of this graph
        version (they only read it). Not one per setup: a partial run the client abandons
        stays in the table until the session closes, as TensorFlow's, and must not keep a
        copy of the whole graph alive."""
        with self._lock:
            graph_def, cached = self._graph_def, self._checked_graph
        if cached is not None and cached[0] is graph_def:
            return cached[1]
        graph = convert_graph_def_to_graph(graph_def)
        with self._lock:
            if self._graph_def is graph_def:
                self._checked_graph = (graph_def, graph)
        return graph

    def partial_run(
        self,
        handle: str,
        feeds: dict[str, tensor_pb2.TensorProto],
        fetches: Sequence[str],
        options: Any = None,
        metadata: config_pb2.RunMetadata | None = None,
    ) -> dict[str, tensor_pb2.TensorProto]:
        timeout = step_timeout_s(options, self.config, self.default_step_timeout)
        trace = options is not None and options.trace_level > config_pb2.RunOptions.NO_TRACE
        return self._partial_runs.run(handle, feeds, fetches, timeout, trace, metadata)

    # -- callables -------------------------------------------------------------------------
    def make_callable(self, options: config_pb2.CallableOptions) -> int:
        self.client_graph(list(options.feed), list(options.fetch), list(options.target))
        with self._lock:
            handle = next(self._callable_ids)
            self._callables[handle] = options
        return handle

    def run_callable(
        self,
        handle: int,
        feeds: Sequence[tensor_pb2.TensorProto],
        metadata: config_pb2.RunMetadata | None = None,
    ) -> list[tensor_pb2.TensorProto]:
        with self._lock:
            self._check_open()
            options = self._callables.get(handle)
        if options is None:
            raise InvalidArgumentError(f"No such callable handle: {handle}")
        if len(feeds) != len(options.feed):
            raise InvalidArgumentError(
                f"Invalid number of feed values: expected {len(options.feed)}, got {len(feeds)}"
            )
        run_options = options.run_options if options.HasField("run_options") else None
        out = self.run(
            dict(zip(options.feed, feeds)),
            list(options.fetch),
            list(options.target),
            run_options,
            metadata,
        )
        return [wire.whole(out[name]) for name in options.fetch]

    def release_callable(self, handle: int) -> None:
        with self._lock:
            if self._callables.pop(handle, None) is None:
                raise InvalidArgumentError(f"No such callable handle: {handle}")

    # -- closing ---------------------------------------------------------------------------
    def close(self) -> None:
        """Close the session; steps still running fail with CancelledError (TF's
        MasterSession::Close starts its cancellation manager)."""
        with self._lock:
            self.closed = True
            self._cache.clear()
            self._callables.clear()
        self.runner.cancel_all(
            CancelledError(f"Step was cancelled: session {self.handle} has been closed.")
        )
        self._partial_runs.close()


# Ops only our graph optimizer writes; TensorFlow has none of them. A client GraphDef that
# names one would run that kernel with attrs the client chose.
_OPTIMIZER_OPS = frozenset({"_FusedElementwise"})


def _refuse_optimizer_ops(graph_def: graph_pb2.GraphDef) -> None:
    """InvalidArgument naming the first node (of the graph or of a library function) whose
    op only the optimizer may add."""
    bodies = [("", graph_def.node)] + [
        (f" in function '{f.signature.name}'", f.node_def) for f in graph_def.library.function
    ]
    for where, nodes in bodies:
        for node in nodes:
            if node.op in _OPTIMIZER_OPS:
                raise InvalidArgumentError(
                    f"Node '{node.name}'{where}: op '{node.op}' is internal to the graph "
                    "optimizer and may not appear in a client's GraphDef",
                    node.name,
                )


def _consumer_device(node: Node) -> str:
    """Where a feed _Recv should live: its data consumers' device (the first, by name)."""
    devices = sorted(
        e.dst.assigned_device for e in node.out_edges if not e.is_control and e.dst.is_op
    )
    return devices[0] if devices else node.assigned_device


def _producer_device(node: Node) -> str:
    for e in node.in_edges:
        if not e.is_control and e.src.is_op:
            return e.src.assigned_device
    raise NotFoundError(f"Fetch node {node.name} has no producer")


def _merge_library(old: Any, new: Any) -> Any:
    """The union of two FunctionDefLibrary protos; identical duplicates are accepted, a
    different function under an existing name is InvalidArgument."""
    FunctionLibrary(old).add_library(new)
    merged = type(old)()
    merged.CopyFrom(old)
    have = {f.signature.name for f in old.function}
    for f in new.function:
        if f.signature.name not in have:
            merged.function.add().CopyFrom(f)
            have.add(f.signature.name)
    grads = {g.function_name for g in old.gradient}
    for g in new.gradient:
        if g.function_name not in grads:
            merged.gradient.add().CopyFrom(g)
    return merged
