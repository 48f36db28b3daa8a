"""Executor stage, cost graphs: what a step measured, per node, in TensorFlow's
CostGraphDef form (TF's CostModel::AddToCostGraphDef), for RunMetadata.cost_graph when a
session asks for it (ConfigProto.graph_options.build_cost_model).

One entry per node of an executor's graph, _SOURCE and _SINK included, in node-id order:
the node's id (offset by the nodes already in the CostGraphDef, as TF numbers partitions),
its data inputs (preceding node and port) and control inputs (sorted by id), per output
its size in bytes, shape and dtype as recorded, its kernel time in microseconds
(compute_cost), the persistent memory a constant or a variable holds, and `is_final` for
_Send nodes. Pure: reads a Graph and the step's records.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from common.graph.graph import Graph, Node
from protos import cost_graph_pb2

_SENDS = frozenset({"_Send", "_HostSend"})
# Kernels whose outputs live as long as the kernel (TF's persistent memory).
_PERSISTENT = frozenset({"Const", "HostConst", "VariableV2", "Variable", "TemporaryVariable"})

# A record as common.executor.stats keeps it: (name, label, start ns, kernel ns, thread,
# outputs as (slot, dtype, shape, nbytes)).
Record = tuple[str, str, int, int, int, tuple]


def add_to_cost_graph(
    graph: Graph, records: Iterable[Record], cost_graph: cost_graph_pb2.CostGraphDef
) -> None:
    """Append `graph`'s nodes, with what `records` measured, to `cost_graph`."""
    measured: dict[str, tuple[int, dict[int, tuple[Any, Any, int]]]] = {}
    for name, _label, _start, kernel_ns, _thread, outputs in records:
        micros, outs = measured.get(name, (0, {}))
        for slot, dtype, shape, nbytes in outputs:
            old = outs.get(slot)
            if old is None or nbytes >= old[2]:
                outs[slot] = (dtype, shape, nbytes)
        measured[name] = (max(micros, kernel_ns // 1000), outs)
    offset = len(cost_graph.node)
    for node in sorted(graph.nodes(), key=lambda n: n.id):
        _add_node(node, offset, measured.get(node.name), cost_graph.node.add())


def _add_node(node: Node, offset: int, measured: Any, out: Any) -> None:
    out.name = node.name
    if node.is_op:
        out.device = node.assigned_device or node.requested_device
    out.id = node.id + offset
    data: list[Any] = [None] * node.num_inputs
    controls = []
    for e in node.in_edges:
        if e.is_control:
            controls.append(e.src.id)
        elif 0 <= e.dst_input < len(data):
            data[e.dst_input] = e
    for e in data:
        if e is not None:
            info = out.input_info.add(preceding_node=e.src.id + offset)
            if e.src_output:
                info.preceding_port = e.src_output
    out.control_input.extend(sorted(i + offset for i in controls))
    micros, outputs = measured if measured is not None else (0, {})
    persistent = 0
    for slot in range(node.num_outputs):
        info = out.output_info.add(alias_input_port=-1)
        info.dtype = int(node.output_types[slot]) % 100  # a ref type as its base type
        recorded = outputs.get(slot)
        if recorded is None:
            continue
        _dtype, shape, nbytes = recorded
        info.size = nbytes
        if shape is None:
            info.shape.unknown_rank = True
        else:
            for size in shape:
                info.shape.dim.add(size=size)
        persistent += nbytes
    if node.op in _PERSISTENT:
        out.persistent_memory_size = persistent
    out.compute_cost = micros
    out.is_final = node.op in _SENDS
