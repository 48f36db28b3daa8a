"""In-process session (TensorFlow's DirectSession): a whole graph on this process's devices.

Owns the session's GraphDef (grown by `extend`), its local CPU devices (whose resource
managers keep variables between runs) and one cached `ExecutorGroup` per
(feeds, fetches, targets) signature: the graph rewritten with the call-frame convention
(_Arg / _Retval), placed over the devices, partitioned per device, one Executor per
partition. A step runs every partition concurrently over one local rendezvous. A run
whose RunOptions ask for a trace or the partition graphs fills its RunMetadata.

Thread-safe: concurrent `run` calls share the cache (built under a lock) and run
independent steps.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

import common.ops  # noqa: F401  (registers every op and kernel)
from common import dtypes
from common.device import Device, make_local_devices
from common.errors import (
    DeadlineExceededError,
    InvalidArgumentError,
    OpError,
)
from common.executor import CallFrame, Executor, StepState, StepStatsCollector
from common.executor.barrier import ExecutorBarrier
from common.function_library import FunctionLibrary
from common.function_runtime import FunctionRuntime
from common.graph.constructor import convert_graph_def_to_graph
from common.optimizer.graph_optimizer import disabled_options, optimize_graph, options_from_config
from common.partition import partition
from common.placer import place
from common.rendezvous import LocalRendezvous, Rendezvous
from common.resource_mgr import Scope
from common.subgraph import DeviceInfo, prune_after_lowering, rewrite_graph_for_execution
from protos import graph_pb2
from protos.config_pb2 import OptimizerOptions

# How long a failed or timed-out step waits for its executors to wind down.
_ABORT_GRACE_S = 5.0


class ExecutorGroup:
    """The executors of one graph on several devices, run together as one step (through
    common.executor.barrier, as the worker's GraphMgr runs its own executors)."""

    def __init__(self, items: list[tuple[Device, Executor]]) -> None:
        self.items = items

    @classmethod
    def from_partitions(
        cls, partitions: dict[str, Any], devices: dict[str, Device], scope: Any = None
    ) -> ExecutorGroup:
        """One executor per {device name: partition GraphDef}; `scope`: who registers them
        (KernelConstruction.scope)."""
        items = []
        for device_name in sorted(partitions):
            graph = convert_graph_def_to_graph(partitions[device_name], allow_internal_ops=True)
            device = devices[device_name]
            items.append((device, Executor(graph, device, scope=scope)))
        return cls(items)

    def run(
        self,
        step_id: int,
        rendezvous: Rendezvous,
        *,
        call_frame: CallFrame | None = None,
        timeout_s: float | None = None,
        function_runtime: Any = None,
        collector: StepStatsCollector | None = None,
    ) -> None:
        """Run one step on every executor; raise the step's first (root) error. With a
        `collector` the step is traced (NodeExecStats per device)."""
        steps = [
            StepState(
                step_id=step_id,
                device=device.name,
                incarnation=device.incarnation,
                rendezvous=rendezvous,
                resource_mgr=device.resource_mgr,
                call_frame=call_frame,
                function_runtime=function_runtime,
                stats=None if collector is None else collector.for_device(device.name),
            )
            for device, _ in self.items
        ]

        def abort_all(error: OpError) -> None:
            for s in steps:
                s.abort(error)

        barrier = ExecutorBarrier(len(self.items), on_error=abort_all)
        finished = barrier.done

        try:
            for (_, executor), step in zip(self.items, steps):
                executor.run_async(step, barrier.when_done)
            if not finished.wait(timeout_s):
                error = DeadlineExceededError(
                    f"Step {step_id} did not finish within {timeout_s:g}s (timeout)"
                )
                for s in steps:
                    s.abort(error)
                finished.wait(_ABORT_GRACE_S)
                raise error
        finally:
            for s in steps:
                s.cleanup()
        root = barrier.root_error()
        if root is not None:
            raise root

    def partition_graphs(self) -> list[graph_pb2.GraphDef]:
        """The GraphDef each executor runs, in device order."""
        return [executor.graph.to_graph_def() for _, executor in self.items]


class _Signature:
    """One cached (feeds, fetches, targets) plan: its executors and feed dtypes."""

    def __init__(
        self, group: ExecutorGroup, feed_types: list[dtypes.DataType], function_runtime: Any
    ) -> None:
        self.group = group
        self.feed_types = feed_types
        self.function_runtime = function_runtime


class Session:
    """Runs a GraphDef in this process over `num_devices` local CPU devices."""

    def __init__(
        self,
        graph_def: graph_pb2.GraphDef | bytes | None = None,
        *,
        num_devices: int = 1,
        allow_soft_placement: bool = True,
        optimize: bool | None = None,
        config: Any = None,
    ) -> None:
        # Graph optimization (common.optimizer.graph_optimizer) before placement: as `config` (a
        # ConfigProto) says, else on (L1: CSE + constant folding), TensorFlow's default;
        # `optimize=False` turns it off.
        self._optimizer_options = _optimizer_options(optimize, config)
        self._rewrite_options = (
            config.graph_options.rewrite_options
            if config is not None and optimize is not False
            else None
        )
        self._disable_partition_graphs = bool(
            config is not None and config.experimental.disable_output_partition_graphs
        )
        if num_devices < 1:
            raise InvalidArgumentError(f"num_devices must be at least 1, got {num_devices}")
        self.devices = make_local_devices("localhost", 0, 0, num_devices)
        self._devices_by_name = {d.name: d for d in self.devices}
        self._allow_soft_placement = allow_soft_placement
        self._graph_def = graph_pb2.GraphDef()
        self._lock = threading.Lock()
        self._cache: dict[tuple, _Signature] = {}
        self._step_ids = itertools.count(1)
        self._closed = False
        # Resources private to this session's kernels, and the pool size they shard for.
        self._scope = Scope(config.intra_op_parallelism_threads if config is not None else 0)
        if graph_def is not None:
            self.extend(graph_def)

    # -- graph ---------------------------------------------------------------------------
    def extend(self, graph_def: graph_pb2.GraphDef | bytes) -> None:
        """Add nodes (and functions) to the session's graph; checked as a whole."""
        if isinstance(graph_def, (bytes, bytearray, memoryview)):
            graph_def = parse_graph_def(bytes(graph_def))
        merged = graph_pb2.GraphDef()
        merged.CopyFrom(self._graph_def)
        merged.node.extend(graph_def.node)
        if graph_def.HasField("versions"):
            merged.versions.CopyFrom(graph_def.versions)
        if graph_def.library.function or graph_def.library.gradient:
            FunctionLibrary(merged.library).add_library(graph_def.library)  # conflicts raise
            merged.library.MergeFrom(graph_def.library)
            merged.library.CopyFrom(_dedup_library(merged.library))
        convert_graph_def_to_graph(merged)  # validates the whole graph
        with self._lock:
            self._graph_def = merged
            self._cache.clear()

    @property
    def graph_def(self) -> graph_pb2.GraphDef:
        return self._graph_def

    # -- running -------------------------------------------------------------------------
    def run(
        self,
        fetches: Sequence[str],
        feeds: dict[str, Any] | None = None,
        targets: Iterable[str] = (),
        *,
        timeout_s: float | None = None,
        run_options: Any = None,
        run_metadata: Any = None,
    ) -> list[np.ndarray]:
        """Run one step; returns the fetched values in the order of `fetches`. With
        `run_options` (a RunOptions) asking for a trace or the partition graphs, they are
        written to `run_metadata` (a RunMetadata), as TensorFlow's DirectSession does."""
        if self._closed:
            raise InvalidArgumentError("Attempted to use a closed Session.")
        trace, graphs = self._tracing(run_options, run_metadata)
        feeds = dict(feeds or {})
        feed_names = list(feeds)
        fetches = list(fetches)
        targets = list(targets)
        signature = self._signature(feed_names, fetches, targets)
        args = [
            _convert_feed(name, feeds[name], dt)
            for name, dt in zip(feed_names, signature.feed_types)
        ]
        frame = CallFrame(args, len(fetches))
        collector = StepStatsCollector() if trace else None
        signature.group.run(
            next(self._step_ids),
            LocalRendezvous(),
            call_frame=frame,
            timeout_s=timeout_s,
            function_runtime=signature.function_runtime,
            collector=collector,
        )
        if collector is not None:
            collector.fill(run_metadata.step_stats)
        if graphs:
            run_metadata.partition_graphs.extend(signature.group.partition_graphs())
        return [np.asarray(v) for v in frame.retvals]

    def _tracing(self, run_options: Any, run_metadata: Any) -> tuple[bool, bool]:
        """(record step stats, return partition graphs) for one run."""
        if run_options is None or run_metadata is None:
            return False, False
        graphs = bool(run_options.output_partition_graphs)
        if graphs and self._disable_partition_graphs:
            raise InvalidArgumentError(
                "RunOptions.output_partition_graphs() is not supported when "
                "disable_output_partition_graphs is true."
            )
        return run_options.trace_level > 0, graphs

    def _signature(self, feeds: list[str], fetches: list[str], targets: list[str]) -> _Signature:
        key = (tuple(feeds), tuple(fetches), tuple(sorted(targets)))
        with self._lock:
            sig = self._cache.get(key)
            if sig is None:
                sig = self._build(feeds, fetches, targets)
                self._cache[key] = sig
            return sig

    def _build(self, feeds: list[str], fetches: list[str], targets: list[str]) -> _Signature:
        graph = convert_graph_def_to_graph(self._graph_def)
        client = self.devices[0]
        result = rewrite_graph_for_execution(
            graph,
            feeds,
            fetches,
            targets,
            device_info=DeviceInfo(client.name, client.incarnation),
            use_function_convention=True,
        )
        # Always: with optimization off, only the functional-op lowering runs.
        options = self._optimizer_options
        stats = optimize_graph(
            graph,
            options=options if options is not None else disabled_options(),
            keep=targets,
            rewrite_options=self._rewrite_options,
            intra_op_threads=self._scope.intra_op_threads,
        )
        if stats.functional_lowered:
            prune_after_lowering(graph, result, targets)
        place(
            graph,
            [d.name for d in self.devices],
            default_device=client.name,
            allow_soft_placement=self._allow_soft_placement,
        )
        names = itertools.count()
        partitions = partition(
            graph,
            get_incarnation=lambda name: self._devices_by_name[name].incarnation,
            new_name=lambda prefix: f"{prefix}/_{next(names)}",
        )
        group = ExecutorGroup.from_partitions(partitions, self._devices_by_name, self._scope)
        runtime = FunctionRuntime(
            graph.flib, self.devices, allow_soft_placement=self._allow_soft_placement
        )
        return _Signature(group, list(result.feed_types), runtime)

    def close(self) -> None:
        self._closed = True
        with self._lock:
            self._cache.clear()
        self._scope.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _optimizer_options(optimize: bool | None, config: Any) -> Any:
    """The OptimizerOptions a Session runs with, or None for no optimization."""
    if optimize is False:
        return None
    if config is not None and not optimize:
        return options_from_config(config)
    return OptimizerOptions()


def _dedup_library(lib: Any) -> Any:
    out = type(lib)()
    seen: set[str] = set()
    for f in lib.function:
        if f.signature.name not in seen:
            seen.add(f.signature.name)
            out.function.add().CopyFrom(f)
    seen_g: set[str] = set()
    for g in lib.gradient:
        if g.function_name not in seen_g:
            seen_g.add(g.function_name)
            out.gradient.add().CopyFrom(g)
    out.registered_gradients.extend(lib.registered_gradients)
    return out


def _convert_feed(name: str, value: Any, dt: dtypes.DataType) -> np.ndarray:
    """A feed as the fed tensor's dtype, converting as TensorFlow's Python client does."""
    want = dtypes.as_numpy(dt)
    try:
        if dtypes.base(dt) == dtypes.DataType.DT_STRING:
            arr = np.asarray(value, dtype=object)
            return np.vectorize(_as_bytes, otypes=[object])(arr) if arr.size else arr
        arr = np.asarray(value)
        if arr.dtype.kind == "V" and arr.dtype.itemsize == want.itemsize:
            return arr.view(want)  # ml_dtypes values saved by numpy as raw bytes
        return arr if arr.dtype == want else arr.astype(want)
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(
            f"Cannot feed {name} as {dtypes.tf_name(dt)}: {e}", name.split(":")[0]
        ) from None


def _as_bytes(x: Any) -> bytes:
    return x if isinstance(x, bytes) else str(x).encode("utf-8")


# -- files --------------------------------------------------------------------------------


def parse_graph_def(data: bytes) -> graph_pb2.GraphDef:
    """A GraphDef from binary or text-format bytes."""
    from google.protobuf import message, text_format

    gd = graph_pb2.GraphDef()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and text.strip():
        try:
            return text_format.Parse(text, gd)
        except text_format.ParseError:
            gd.Clear()
    try:
        gd.ParseFromString(data)
    except message.DecodeError as e:
        raise InvalidArgumentError(f"Invalid GraphDef: could not parse ({e})") from None
    return gd


def load_graph_def(path: str) -> graph_pb2.GraphDef:
    with open(path, "rb") as f:
        return parse_graph_def(f.read())


def to_savable(value: Any) -> np.ndarray:
    """A fetched value as something np.savez stores faithfully: strings as bytes arrays,
    ml_dtypes (bfloat16, float8, int4 ...) widened to float32 / int8, which npz has."""
    arr = np.asarray(value)
    if arr.dtype == object:
        items = [v if isinstance(v, bytes) else bytes(v) for v in arr.reshape(-1)]
        if any(b.endswith(b"\0") for b in items):
            raise InvalidArgumentError("cannot store strings ending in NUL bytes in npz")
        return np.array(items, dtype=bytes).reshape(arr.shape)
    if type(arr.dtype).__module__.startswith("ml_dtypes"):
        kind = np.float32 if arr.dtype.kind == "V" or "float" in arr.dtype.name else np.int8
        return arr.astype(kind)
    return arr
