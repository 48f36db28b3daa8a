"""Graph optimization (before placement): constant folding (TensorFlow's ConstantFold).

A node is constant-foldable when its op is pure (not stateful, not control flow, not a
transfer or placeholder, not one whose cost its inputs do not bound (regexes), no
ref/resource/variant types, no function attrs, a CPU kernel
exists) and every data input comes from a constant-foldable node; Consts start the
closure. Control inputs from other nodes are allowed: they are recorded, transitively,
and the replacing Const gets them, so deadness and frames are preserved as in TF.
Each foldable tensor read by a node outside the foldable set is computed once (the
needed foldable nodes run in a private Graph on a local CPU Executor, with _Retval
outputs) and replaced by a Const on the producer's device named
"<producer>/_<n>__cf__<n>". A tensor larger than `max_constant_bytes` is left alone. A
subgraph whose evaluation fails is not folded (the error then surfaces at run time,
attributed to the original node). The nodes that became unused are left for dead-node
removal.

Mutates the Graph it is given; not thread-safe (like Graph). Folding runs kernels on this
thread and the shared CPU pool, never touching any session's devices or resources.
"""

from __future__ import annotations

import itertools

import numpy as np

from common import dtypes
from common.device import Device
from common.dtypes import DataType
from common.errors import OpError
from common.executor import CallFrame, Executor, StepState
from common.graph import algorithm
from common.graph.graph import Graph, Node
from common.ops import registry
from common.optimizer.simplify import (
    CONTROL_FLOW_OPS,
    TRANSFER_OPS,
    has_ref_type,
    topological_order_by_id,
)
from common.resource_mgr import ResourceMgr, Scope
from common.tensor import from_numpy
from protos import attr_value_pb2

DEFAULT_MAX_CONSTANT_BYTES = 10 << 20  # TF's default when max_folded_constant_in_bytes is 0

_CONST_OPS = frozenset({"Const", "HostConst"})
# PyFuncStateless is pure but calls a function that lives only in the process that built
# the graph (common/ops/py_func_ops.py): the master must never run it.
_NEVER_FOLD = frozenset(
    {"Placeholder", "PlaceholderV2", "PlaceholderWithDefault", "NoOp", "PyFuncStateless"}
)
# Ops whose cost the inputs' sizes do not bound (a short pattern against a short string
# may take long): folding runs on the master's planning thread, shared by every client,
# so these run at step time instead, under the step's deadline.
_COSTLY_OPS = frozenset(
    {"RegexReplace", "StaticRegexReplace", "RegexFullMatch", "StaticRegexFullMatch"}
)
_OPAQUE_TYPES = frozenset({DataType.DT_RESOURCE, DataType.DT_VARIANT})
_DEADNESS_SPLITTING_OPS = frozenset({"Switch", "RefSwitch", "_SwitchN"})
_FOLD_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"

Tensor = tuple[Node, int]


def _has_func_attr(node: Node) -> bool:
    return any(v.HasField("func") or len(v.list.func) for v in node.attr_protos.values())


def is_foldable_op(graph: Graph, node: Node) -> bool:
    """Whether `node`'s op may be evaluated ahead of time (its inputs aside)."""
    op_def = node.op_def
    if op_def is None or op_def.is_stateful or not node.output_types:
        return False
    if node.op in _NEVER_FOLD or node.op in TRANSFER_OPS or node.op in CONTROL_FLOW_OPS:
        return False
    if node.op in _COSTLY_OPS:
        return False
    if graph.flib is not None and graph.flib.find_op(node.op) is not None:
        return False  # a function call: needs the function runtime
    if has_ref_type(node) or _has_func_attr(node):
        return False
    if any(dtypes.base(t) in _OPAQUE_TYPES for t in node.input_types + node.output_types):
        return False
    label = node.attr("_kernel", "") if "_kernel" in node.attr_protos else ""
    return registry.find_kernel(node.op, "CPU", label) is not None


def find_constant_foldable(graph: Graph) -> dict[int, frozenset[Node]]:
    """{node id: the non-foldable nodes it transitively depends on by control edges} for
    every constant-foldable node (TF's FindConstantFoldableNodes)."""
    foldable: dict[int, frozenset[Node]] = {}
    for node in topological_order_by_id(graph):
        if not node.is_op or not is_foldable_op(graph, node):
            continue
        deps: frozenset[Node] = frozenset()
        ok = True
        for e in node.in_edges:
            src = e.src
            if src.is_source:
                continue
            if src.id in foldable:
                deps = deps | foldable[src.id] if foldable[src.id] else deps
            elif e.is_control:
                deps = deps | {src}
            else:
                ok = False
                break
        if ok:
            foldable[node.id] = deps
    return foldable


def _fold_targets(graph: Graph, foldable: dict[int, frozenset[Node]]) -> list[Tensor]:
    """The foldable tensors some non-foldable node reads, producers in id order."""
    targets: list[Tensor] = []
    for node in graph.op_nodes():
        if node.id not in foldable or node.op in _CONST_OPS:
            continue
        outs = sorted(
            {e.src_output for e in node.out_edges if not e.is_control and e.dst.id not in foldable}
        )
        targets.extend((node, k) for k in outs)
    return targets


def _needed(graph: Graph, targets: list[Tensor], foldable: dict) -> list[Node]:
    """The foldable nodes the targets are computed from, producers first."""
    seen: set[int] = set()
    stack = [n for n, _ in targets]
    while stack:
        n = stack.pop()
        if n.id in seen:
            continue
        seen.add(n.id)
        stack.extend(e.src for e in n.in_edges if e.src.id in foldable)
    return [n for n in topological_order_by_id(graph) if n.id in seen]


def _attr_type(dt: DataType) -> attr_value_pb2.AttrValue:
    return attr_value_pb2.AttrValue(type=dtypes.as_proto_enum(dt))


def evaluate(
    nodes: list[Node],
    targets: list[Tensor],
    max_bytes: int = DEFAULT_MAX_CONSTANT_BYTES,
    intra_op_threads: int = 0,
) -> list[np.ndarray]:
    """Run the `nodes` (a closed, foldable subgraph) once and return the targets' values.
    Raises OpError if a kernel fails, or ResourceExhausted if one would allocate more than
    `max_bytes` (checked before it does: a Fill of a constant 4 GB shape must not
    materialise on the master)."""
    g = Graph()
    copies: dict[int, Node] = {}
    for n in nodes:
        copies[n.id] = g.add_node(
            n.name,
            n.op,
            dict(n.attr_protos),
            op_def=n.op_def,
            input_types=n.input_types,
            output_types=n.output_types,
        )
    for n in nodes:
        for e in n.in_edges:
            if e.src.id in copies:
                g.add_edge(copies[e.src.id], e.src_output, copies[n.id], e.dst_input)
    for i, (n, k) in enumerate(targets):
        dt = dtypes.base(n.output_types[k])
        ret = g.add_node(
            f"_cf_retval_{i}",
            "_Retval",
            {"T": _attr_type(dt), "index": attr_value_pb2.AttrValue(i=i)},
        )
        g.add_edge(copies[n.id], k, ret, 0)
    algorithm.fixup_source_and_sink_edges(g)
    device = Device(_FOLD_DEVICE, incarnation=1)
    device.allocation_limit = max_bytes
    frame = CallFrame([], len(targets))
    step = StepState(
        device=device.name, incarnation=1, resource_mgr=ResourceMgr(), call_frame=frame
    )
    scope = Scope(intra_op_threads)  # shards as the session's kernels would
    try:
        Executor(g, device, scope=scope).run(step)
    finally:
        step.cleanup()
        scope.close()
    return [np.asarray(v) for v in frame.retvals]


def tensor_bytes(value: np.ndarray) -> int:
    if value.dtype == object:
        return sum(len(x) if isinstance(x, bytes) else 8 for x in value.reshape(-1))
    return int(value.nbytes)


def _const_name(graph: Graph, node: Node, counter: itertools.count) -> str:
    while True:
        i = next(counter)
        name = f"{node.name}/_{i}__cf__{i}"
        if graph.node(name) is None:
            return name


def _replace(
    graph: Graph,
    tensor: Tensor,
    value: np.ndarray,
    deps: frozenset[Node],
    foldable: dict,
    counter: itertools.count,
) -> Node:
    """A Const holding `value` in place of `tensor` for every non-foldable consumer."""
    node, k = tensor
    dt = dtypes.base(node.output_types[k])
    const = graph.add_node(
        _const_name(graph, node, counter),
        "Const",
        {
            "value": attr_value_pb2.AttrValue(tensor=from_numpy(value, dt)),
            "dtype": _attr_type(dt),
        },
        node.requested_device,
    )
    const.assigned_device = node.assigned_device
    for d in sorted(deps, key=lambda n: n.id):
        graph.add_control_edge(d, const)
    for e in list(node.out_edges):
        if not e.is_control and e.src_output == k and e.dst.id not in foldable:
            graph.add_edge(const, 0, e.dst, e.dst_input)
            graph.remove_edge(e)
    return const


def _static_shape(node: Node, output: int) -> tuple[int, ...] | None:
    """The fully known shape `_output_shapes` records for an output, else None."""
    av = node.attr_protos.get("_output_shapes")
    if av is None or output >= len(av.list.shape):
        return None
    shape = av.list.shape[output]
    if shape.unknown_rank or any(d.size < 0 for d in shape.dim):
        return None
    return tuple(d.size for d in shape.dim)


def _shape_value(node: Node, shape: tuple[int, ...]) -> np.ndarray:
    dt = dtypes.as_numpy(dtypes.base(node.output_types[0]))
    if node.op == "Shape":
        return np.array(shape, dtype=dt)
    if node.op == "Size":
        return np.array(int(np.prod(shape, dtype=np.int64)), dtype=dt)
    return np.array(len(shape), dtype=dt)


def fold_static_shapes(graph: Graph, counter: itertools.count) -> int:
    """Replace Shape/Size/Rank of a tensor whose `_output_shapes` is fully known by a
    Const (TF folds these from inferred shapes). The Const keeps a control edge from the
    tensor's producer (same frame, same deadness) and the node's control inputs. Returns
    the number of Consts added."""
    added = 0
    for node in list(graph.op_nodes()):
        if node.op not in ("Shape", "Size", "Rank") or not any(
            not e.is_control for e in node.out_edges
        ):
            continue
        (data,) = [e for e in node.in_edges if not e.is_control]
        src = data.src
        if src.op in _DEADNESS_SPLITTING_OPS or dtypes.is_ref(src.output_types[data.src_output]):
            continue
        shape = _static_shape(src, data.src_output)
        if shape is None:
            continue
        deps = frozenset([src, *node.control_inputs()])
        _replace(graph, (node, 0), _shape_value(node, shape), deps, {}, counter)
        added += 1
    return added


def constant_fold(
    graph: Graph,
    *,
    max_constant_bytes: int = DEFAULT_MAX_CONSTANT_BYTES,
    counter: itertools.count | None = None,
    intra_op_threads: int = 0,
) -> int:
    """Fold every foldable tensor with a non-foldable consumer into a Const; returns the
    number of Consts added (0 when nothing could be folded). Shape/Size/Rank of tensors
    with fully known `_output_shapes` are folded first (`fold_static_shapes`). Kernels
    shard as on a pool of `intra_op_threads` (the session's; TF folds on its device)."""
    if max_constant_bytes <= 0:
        max_constant_bytes = DEFAULT_MAX_CONSTANT_BYTES
    counter = counter if counter is not None else itertools.count()
    added = fold_static_shapes(graph, counter)
    foldable = find_constant_foldable(graph)
    targets = _fold_targets(graph, foldable)
    values: list[np.ndarray] = []
    if targets:
        try:
            needed = _needed(graph, targets, foldable)
            values = evaluate(needed, targets, max_constant_bytes, intra_op_threads)
        except OpError:
            values = []
    for tensor, value in zip(targets, values):
        if tensor_bytes(value) > max_constant_bytes:
            continue
        _replace(graph, tensor, value, foldable[tensor[0].id], foldable, counter)
        added += 1
    if added:
        algorithm.fixup_source_and_sink_edges(graph)
    return added
