"""Function runtime: instantiates library functions and runs them as child steps
(TensorFlow's FunctionLibraryRuntime / ProcessFunctionLibraryRuntime).

`instantiate_function(flib, name, attrs)` turns a FunctionDef into a Graph as TF's
FunctionDefToBody does: one `_Arg` per input (list args expand to name_0, name_1 ...),
the body's NodeDefs with attr placeholders replaced by the call's attrs and inputs
resolved ("node:out_arg:index" to "node:k", bare arg names to their `_Arg`), one
`_Retval` per output. Nothing is pruned, so stateful nodes and `control_ret` nodes run.

`FunctionRuntime.run_async(name, attrs, args, caller_step, done)` runs a call: the body
is placed on the caller's device (or over the runtime's devices when body nodes request
devices: placed and partitioned like a session graph), executed by the same executor as
a child step with its own CallFrame and a fresh local rendezvous (so transfer keys of
concurrent calls never collide), sharing the caller's resource manager and step
container (variables and per-step resources are shared). Instantiations and their
executors are cached by (name, attrs, caller device).

Thread-safe: the cache is guarded by a lock; calls run concurrently.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from common import attr_value, symbolic_gradient
from common.device import Device
from common.dtypes import DataType, as_proto_enum
from common.errors import (
    InvalidArgumentError,
    NotFoundError,
    OpError,
    root_error,
)
from common.executor import CallFrame, Executor, StepState
from common.executor.barrier import ExecutorBarrier
from common.executor.step import FunctionRunner
from common.graph.constructor import convert_graph_def_to_graph, import_graph_def
from common.graph.graph import Graph
from common.ops.op_def_util import _add_arg_types, default_proto
from common.ops.registry import DEAD, OpKernelContext
from common.rendezvous import LocalRendezvous
from protos import attr_value_pb2, graph_pb2, node_def_pb2

DoneFn = Callable[[Any, Any], None]  # done(outputs, error)


# -- instantiation (FunctionDefToBody) ------------------------------------------------------
@dataclasses.dataclass
class FunctionBody:
    """An instantiated function: its graph and the dtypes of its args and results."""

    name: str
    graph: Graph
    arg_types: list[DataType]
    ret_types: list[DataType]


def attrs_key(attrs: Mapping[str, Any]) -> tuple:
    """A hashable, canonical form of instantiation attrs (Python values or AttrValues)."""
    return tuple(
        (k, attr_value.to_proto(attrs[k]).SerializeToString(deterministic=True))
        for k in sorted(attrs)
    )


def _call_attr_protos(fdef: Any, attrs: Mapping[str, Any]) -> dict[str, Any]:
    """The call's attrs as AttrValue protos typed by the signature, defaults filled."""
    out: dict[str, Any] = {}
    types = {a.name: a.type for a in fdef.signature.attr}
    for k, v in attrs.items():
        out[k] = attr_value.to_proto(v, types.get(k))
    for a in fdef.signature.attr:
        if a.name not in out and a.HasField("default_value"):
            out[a.name] = a.default_value
    return out


def _substitute(av: Any, call_attrs: dict[str, Any], fname: str, node: str) -> Any:
    """AttrValue with placeholders replaced by the call's attrs (also inside funcs)."""
    kind = av.WhichOneof("value")
    if kind == "placeholder":
        found = call_attrs.get(av.placeholder)
        if found is None:
            raise InvalidArgumentError(
                f"Function '{fname}': attr placeholder '{av.placeholder}' of node '{node}' "
                "has no value in the call's attrs",
                node,
            )
        return found
    if kind == "func" and any(
        v.WhichOneof("value") == "placeholder" for v in av.func.attr.values()
    ):
        copy = type(av)()
        copy.CopyFrom(av)
        for k, v in av.func.attr.items():
            copy.func.attr[k].CopyFrom(_substitute(v, call_attrs, fname, node))
        return copy
    return av


def _arg_types(arg: Any, call_attrs: dict[str, Any], fname: str) -> list[DataType]:
    """The dtypes an OpDef.ArgDef proto of a signature stands for under `call_attrs`."""

    def attr(name: str) -> Any:
        found = call_attrs.get(name)
        if found is None:
            raise InvalidArgumentError(
                f"Function '{fname}': attr '{name}' of arg '{arg.name}' is not given"
            )
        return found

    if arg.type_list_attr:
        return [DataType(t) for t in attr(arg.type_list_attr).list.type]
    dtype = DataType(arg.type) if arg.type else DataType(attr(arg.type_attr).type)
    count = attr(arg.number_attr).i if arg.number_attr else 1
    return [dtype] * count


class _BodyBuilder:
    """Builds the instantiated GraphDef of one FunctionDef under one set of attrs."""

    def __init__(self, flib: Any, fdef: Any, call_attrs: dict[str, Any]) -> None:
        self.flib = flib
        self.fdef = fdef
        self.fname = fdef.signature.name
        self.call_attrs = call_attrs
        self.gd = graph_pb2.GraphDef()
        # "arg" and "node:out_arg" -> the tensor names they stand for
        self.index: dict[str, list[str]] = {}
        self.arg_types: list[DataType] = []
        self.ret_types: list[DataType] = []
        self.names = {nd.name for nd in fdef.node_def}

    def unique(self, name: str) -> str:
        while name in self.names:
            name += "_"
        self.names.add(name)
        return name

    def add_args(self) -> None:
        for arg in self.fdef.signature.input_arg:
            types = _arg_types(arg, self.call_attrs, self.fname)
            tensors = []
            for i, dtype in enumerate(types):
                name = self.unique(arg.name if len(types) == 1 else f"{arg.name}_{i}")
                nd = self.gd.node.add(name=name, op="_Arg")
                nd.attr["T"].type = as_proto_enum(dtype)
                nd.attr["index"].i = len(self.arg_types)
                self.arg_types.append(dtype)
                tensors.append(name)
            self.index[arg.name] = tensors

    def add_body(self) -> None:
        nodes = []
        for src in self.fdef.node_def:
            nd = self.gd.node.add()
            nd.CopyFrom(src)
            for k, v in src.attr.items():
                nd.attr[k].CopyFrom(_substitute(v, self.call_attrs, self.fname, src.name))
            self._index_outputs(nd)
            nodes.append(nd)
        for nd in nodes:
            inputs = list(nd.input)
            del nd.input[:]
            for s in inputs:
                nd.input.extend(self.resolve(s, nd.name))

    def _index_outputs(self, nd: Any) -> None:
        op_def = self.flib_graph_op(nd.op, nd.name)
        protos = dict(nd.attr)
        for a in op_def.attrs:
            if a.name not in protos and a.has_default:
                protos[a.name] = default_proto(a)
        k = 0
        for arg in op_def.output_args:
            types: list[DataType] = []
            _add_arg_types(nd.name, op_def, protos, arg, types)
            self.index[f"{nd.name}:{arg.name}"] = [
                nd.name if k + j == 0 else f"{nd.name}:{k + j}" for j in range(len(types))
            ]
            k += len(types)

    def flib_graph_op(self, op: str, node: str) -> Any:
        found = self.flib.find_op(op) if self.flib is not None else None
        if found is not None:
            return found
        from common.ops import registry

        op_def = registry.find_op(op)
        if op_def is None:
            raise NotFoundError(
                f"Op type not registered '{op}' (node '{node}' of function '{self.fname}')", node
            )
        return op_def

    def resolve(self, s: str, node: str) -> list[str]:
        """A FunctionDef input ("^x", "arg", "arg:i", "node:out", "node:out:i") as
        GraphDef inputs."""
        if s.startswith("^"):
            target = s[1:]
            found = self.index.get(target)
            return ["^" + (found[0] if found else target)]
        parts = s.split(":")
        found = None
        if len(parts) == 1 or (len(parts) == 2 and s in self.index):
            found = self.index.get(s)
        elif len(parts) == 2 and parts[1].isdigit():
            whole = self.index.get(parts[0])
            if whole is not None and int(parts[1]) < len(whole):
                found = [whole[int(parts[1])]]
        elif len(parts) == 3 and parts[2].isdigit():
            whole = self.index.get(f"{parts[0]}:{parts[1]}")
            if whole is not None and int(parts[2]) < len(whole):
                found = [whole[int(parts[2])]]
        if found is None:
            raise InvalidArgumentError(
                f"Function '{self.fname}': input '{s}' of node '{node}' names no argument or "
                "node output",
                node,
            )
        return found

    def add_retvals(self) -> None:
        for arg in self.fdef.signature.output_arg:
            ret = self.fdef.ret.get(arg.name)
            if ret is None:
                raise InvalidArgumentError(
                    f"Function '{self.fname}': return value '{arg.name}' is not defined"
                )
            tensors = self.resolve(ret, arg.name)
            types = _arg_types(arg, self.call_attrs, self.fname)
            if len(types) != len(tensors):
                raise InvalidArgumentError(
                    f"Function '{self.fname}': return value '{arg.name}' has {len(tensors)} "
                    f"tensors, the signature says {len(types)}"
                )
            for i, (dtype, tensor) in enumerate(zip(types, tensors)):
                name = self.unique(
                    f"{arg.name}_RetVal" if len(types) == 1 else f"{arg.name}_{i}_RetVal"
                )
                nd = self.gd.node.add(name=name, op="_Retval", input=[tensor])
                nd.attr["T"].type = as_proto_enum(dtype)
                nd.attr["index"].i = len(self.ret_types)
                self.ret_types.append(dtype)
        for name in self.fdef.control_ret.values():
            if name not in self.names:
                raise InvalidArgumentError(
                    f"Function '{self.fname}': control return '{name}' is not a body node"
                )


def instantiate_function(flib: Any, name: str, attrs: Mapping[str, Any]) -> FunctionBody:
    """FunctionDef `name` of `flib` under `attrs` as a Graph (TF FunctionDefToBody)."""
    if name == symbolic_gradient.GRADIENT_OP:
        return _gradient_body(flib, attrs)
    fdef = flib.find(name) if flib is not None else None
    if fdef is None:
        raise NotFoundError(f"Function {name} is not defined.")
    b = _BodyBuilder(flib, fdef, _call_attr_protos(fdef, attrs))
    b.add_args()
    b.add_body()
    b.add_retvals()
    graph = Graph(flib)
    import_graph_def(b.gd, graph, allow_internal_ops=True)
    return FunctionBody(name, graph, b.arg_types, b.ret_types)


def _gradient_body(flib: Any, attrs: Mapping[str, Any]) -> FunctionBody:
    """SymbolicGradient's body for its `f` (TF's FunctionLibraryRuntime instantiates the
    op name "SymbolicGradient" this way): f's registered gradient function if it has one,
    else the gradient built from f's body (common.symbolic_gradient)."""
    f = attrs.get("f")
    if isinstance(f, attr_value_pb2.AttrValue):
        f = attr_value.to_python(f)
    if f is None:
        raise InvalidArgumentError("SymbolicGradient: missing attr 'f'")
    fname = f if isinstance(f, str) else f.name
    fattrs = {} if isinstance(f, str) else dict(f.attrs)
    grad_name = flib.gradient(fname) if flib is not None else None
    if grad_name:
        return instantiate_function(flib, grad_name, fattrs)
    fwd = instantiate_function(flib, fname, fattrs)
    types = {}
    for n in fwd.graph.op_nodes():
        for k, t in enumerate(n.output_types):
            types[n.name if k == 0 else f"{n.name}:{k}"] = t
    gd = symbolic_gradient.build(
        fwd.graph.to_graph_def(include_library=False), fwd.arg_types, fwd.ret_types, types, fname
    )
    graph = Graph(flib)
    import_graph_def(gd, graph, allow_internal_ops=True)
    arg_types = list(fwd.arg_types)
    return FunctionBody(f"{symbolic_gradient.GRADIENT_OP}({fname})", graph,
                        arg_types + list(fwd.ret_types), arg_types)  # fmt: skip


def function_body_graph_def(flib: Any, name: str, attrs: Mapping[str, Any]) -> Any:
    """The instantiated body as a GraphDef (for inspection and tests)."""
    return instantiate_function(flib, name, attrs).graph.to_graph_def(include_library=False)


# -- running (a child step) -------------------------------------------------------------------
class _ChildStep(StepState):
    """A function call's step on one device: sees its caller's abort as its own."""

    def __init__(self, parent: StepState, **kwargs: Any) -> None:
        self._parent = parent
        self._own_error: OpError | None = None
        super().__init__(**kwargs)

    @property
    def abort_error(self) -> OpError | None:
        own = self._own_error
        return own if own is not None else self._parent.abort_error

    @abort_error.setter
    def abort_error(self, value: OpError | None) -> None:
        self._own_error = value

    def abort(self, error: OpError) -> None:
        with self._lock:
            if self._own_error is not None:
                return
            self._own_error = error
        if self.rendezvous is not None:
            self.rendezvous.start_abort(error)


@dataclasses.dataclass
class _Plan:
    """A function instantiated for one caller device: executors by device name."""

    body: FunctionBody
    items: list[tuple[str, Executor]]


class FunctionRuntime:
    """Runs library functions as child steps on the caller's devices."""

    def __init__(
        self, flib: Any, devices: Sequence[Device] = (), *, allow_soft_placement: bool = True
    ) -> None:
        self.flib = flib
        self.devices = {d.name: d for d in devices}
        self.allow_soft_placement = allow_soft_placement
        self._lock = threading.Lock()
        self._bodies: dict[tuple, FunctionBody] = {}
        self._plans: dict[tuple, _Plan] = {}

    def instantiate(self, name: str, attrs: Mapping[str, Any]) -> FunctionBody:
        """The cached instantiation of (name, attrs) (TF Instantiate's handle)."""
        key = (name, attrs_key(attrs))
        with self._lock:
            body = self._bodies.get(key)
        if body is None:
            body = instantiate_function(self.flib, name, attrs)
            with self._lock:
                body = self._bodies.setdefault(key, body)
        return body

    def _plan(self, name: str, attrs: Mapping[str, Any], device: str) -> _Plan:
        key = (name, attrs_key(attrs), device)
        with self._lock:
            plan = self._plans.get(key)
        if plan is not None:
            return plan
        body = instantiate_function(self.flib, name, attrs)  # a private graph to place
        graph = body.graph
        wants_devices = any(n.requested_device for n in graph.op_nodes())
        if wants_devices and len(self.devices) > 1:
            items = self._partitioned(graph, device)
        else:
            for n in graph.op_nodes():
                n.assigned_device = device
            items = [(device, Executor(graph, device, flib=self.flib))]
        plan = _Plan(body, items)
        with self._lock:
            return self._plans.setdefault(key, plan)

    def _partitioned(self, graph: Graph, device: str) -> list[tuple[str, Executor]]:
        from common.partition import partition
        from common.placer import place

        place(
            graph,
            sorted(self.devices),
            default_device=device,
            allow_soft_placement=self.allow_soft_placement,
        )
        for n in graph.op_nodes():
            if n.op in ("_Arg", "_Retval"):
                n.assigned_device = device
        names = itertools.count()
        parts = partition(
            graph,
            get_incarnation=lambda d: self.devices[d].incarnation,
            new_name=lambda prefix: f"{prefix}/_f{next(names)}",
        )
        items = []
        for dev in sorted(parts):
            g = convert_graph_def_to_graph(parts[dev], allow_internal_ops=True)
            items.append((dev, Executor(g, self.devices[dev], flib=self.flib)))
        return items

    def run_async(
        self,
        name: str,
        attrs: Mapping[str, Any],
        args: Sequence[Any],
        caller_step: StepState,
        done: DoneFn,
        *,
        device: str | None = None,
    ) -> None:
        """Call function `name`; `done(outputs, None)` or `done(None, error)` exactly once
        (possibly before this returns)."""
        try:
            plan = self._plan(name, attrs, device or caller_step.device)
            if len(args) != len(plan.body.arg_types):
                raise InvalidArgumentError(
                    f"Function '{name}' takes {len(plan.body.arg_types)} arguments, "
                    f"{len(args)} given"
                )
        except OpError as e:
            done(None, e)
            return
        self._start(plan, list(args), caller_step, done)

    def run(
        self,
        name: str,
        attrs: Mapping[str, Any],
        args: Sequence[Any],
        caller_step: StepState,
        *,
        timeout: float | None = None,
    ) -> list[Any]:
        """Call and wait (for tests and synchronous callers)."""
        finished = threading.Event()
        result: list[Any] = []

        def done(outputs: Any, error: Any) -> None:
            result.append((outputs, error))
            finished.set()

        self.run_async(name, attrs, args, caller_step, done)
        if not finished.wait(timeout):
            raise InvalidArgumentError(f"Function '{name}' did not finish within {timeout}s")
        outputs, error = result[0]
        if error is not None:
            raise error
        return outputs

    def _start(self, plan: _Plan, args: list[Any], caller: StepState, done: DoneFn) -> None:
        frame = CallFrame(args, len(plan.body.ret_types))
        rendezvous = LocalRendezvous()  # per call: transfer keys of calls never collide
        steps = [
            _ChildStep(
                caller,
                step_id=caller.step_id,
                device=dev,
                incarnation=self._incarnation(dev, caller),
                rendezvous=rendezvous,
                resource_mgr=self._resource_mgr(dev, caller),
                step_container=caller.step_container,
                function_runtime=self,
                call_frame=frame,
                # A traced caller traces the body too, each node under its own device.
                stats=None if caller.stats is None else caller.stats.for_device(dev),
            )
            for dev, _ in plan.items
        ]

        def abort_all(error: OpError) -> None:
            if len(steps) > 1:
                for s in steps:
                    s.abort(error)

        barrier = ExecutorBarrier(
            len(steps),
            on_error=abort_all,
            on_done=lambda errors: self._finish(plan, frame, errors, done),
        )
        for (_, executor), step in zip(plan.items, steps):
            executor.run_async(step, barrier.when_done)

    def _incarnation(self, dev: str, caller: StepState) -> int:
        found = self.devices.get(dev)
        return found.incarnation if found is not None else caller.incarnation

    def _resource_mgr(self, dev: str, caller: StepState) -> Any:
        if dev == caller.device:
            return caller.resource_mgr
        found = self.devices.get(dev)
        return found.resource_mgr if found is not None else caller.resource_mgr

    @staticmethod
    def _finish(plan: _Plan, frame: CallFrame, errors: list[OpError], done: DoneFn) -> None:
        if errors:
            done(None, root_error(errors))
            return
        for i, v in enumerate(frame.retvals):
            if v is None or v is DEAD:
                done(
                    None,
                    InvalidArgumentError(
                        f"Function '{plan.body.name}': return value {i} was not set"
                        + (" (dead)" if v is DEAD else "")
                    ),
                )
                return
        done(list(frame.retvals), None)


def call_node_def(name: str, op: str, inputs: Sequence[str], attrs: Mapping[str, Any]) -> Any:
    """A NodeDef calling `op` (a function or op name) with Python-valued attrs; tests."""
    nd = node_def_pb2.NodeDef(name=name, op=op, input=list(inputs))
    for k, v in attrs.items():
        nd.attr[k].CopyFrom(attr_value.to_proto(v))
    return nd


class LazyRuntime:
    """The function runtime a kernel's calls use (functional ops, dataset functions): its
    step's, else one built on first use over the kernel's library (a step that carries
    none). Thread-safe."""

    def __init__(self, flib: Any) -> None:
        self.flib = flib
        self._lock = threading.Lock()
        self._runtime: FunctionRuntime | None = None

    def get(self, ctx: OpKernelContext) -> FunctionRunner:
        runtime = ctx.step.function_runtime
        if runtime is not None:
            return runtime
        with self._lock:
            if self._runtime is None:
                self._runtime = FunctionRuntime(self.flib)
            return self._runtime
