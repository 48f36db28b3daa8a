"""Subgraph: rewrite a graph for one execution's feeds, fetches and targets
(TensorFlow's subgraph::RewriteGraphForExecution).

Each fed tensor "node:k" is replaced by a feed node (a client-terminated `_Recv`, or an
`_Arg` in the function convention) whose consumers are rewired; each fetched tensor gets
a fetch node (a client-terminated `_Send`, or a `_Retval`); then the graph is pruned to
what the fetch and target nodes need, and SOURCE/SINK edges are fixed up. Feed and fetch
nodes are assigned to the client device, as in TensorFlow.

Pure graph surgery: mutates the Graph it is given (callers rewrite a private copy). Not
thread-safe for one Graph; independent graphs may be rewritten concurrently.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from common import dtypes
from common.dtypes import DataType
from common.errors import InvalidArgumentError, NotFoundError
from common.graph import algorithm
from common.graph.graph import CONTROL_SLOT, Graph, Node
from protos import attr_value_pb2

_PLACEHOLDER_OPS = ("Placeholder", "PlaceholderV2")


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    """The client device feeds come from and fetches go to (DeviceAttributes subset)."""

    name: str  # full device name
    incarnation: int  # uint64, as in DeviceAttributes


@dataclasses.dataclass
class RewriteResult:
    """What the rewrite added. `feed_nodes` / `fetch_nodes` map each endpoint name as given
    ("x:0" or "x") to its _Recv/_Arg or _Send/_Retval node; a feed whose node was pruned
    (nothing needed it) is absent from `feed_nodes` but still typed in `feed_types`."""

    feed_nodes: dict[str, Node]
    fetch_nodes: dict[str, Node]
    feed_types: list[DataType]
    fetch_types: list[DataType]


def parse_tensor_name(name: str) -> tuple[str, int]:
    """TensorFlow's ParseTensorName: "x" -> (x, 0), "x:2" -> (x, 2), "^x" -> (x, -1)."""
    if name.startswith("^"):
        return name[1:], CONTROL_SLOT
    node, sep, index = name.rpartition(":")
    if sep and index.isdigit():
        return node, int(index)
    return name, 0


def signed_incarnation(incarnation: int) -> int:
    """The uint64 incarnation as the signed int64 `send_device_incarnation` attr holds."""
    incarnation &= (1 << 64) - 1
    return incarnation - (1 << 64) if incarnation >= 1 << 63 else incarnation


def base_type(dtype: DataType) -> DataType:
    return dtypes.DataType(dtype - 100) if dtype > 100 else dtype


# -- AttrValue builders (kept local: rewrite nodes need only these few kinds) ------------
def attr_s(value: str) -> Any:
    return attr_value_pb2.AttrValue(s=value.encode())


def attr_i(value: int) -> Any:
    return attr_value_pb2.AttrValue(i=value)


def attr_b(value: bool) -> Any:
    return attr_value_pb2.AttrValue(b=value)


def attr_type(value: DataType) -> Any:
    return attr_value_pb2.AttrValue(type=dtypes.as_proto_enum(value))


def sendrecv_attrs(
    tensor_name: str,
    send_device: str,
    incarnation: int,
    recv_device: str,
    client_terminated: bool,
) -> dict[str, Any]:
    """The attrs every _Send/_Recv pair shares (TF SetSendRecvAttrs)."""
    return {
        "tensor_name": attr_s(tensor_name),
        "send_device": attr_s(send_device),
        "send_device_incarnation": attr_i(signed_incarnation(incarnation)),
        "recv_device": attr_s(recv_device),
        "client_terminated": attr_b(client_terminated),
    }


# -- feed and fetch rewrites ---------------------------------------------------------------
def _lookup_output(graph: Graph, endpoint: str, where: str) -> tuple[Node, int]:
    name, index = parse_tensor_name(endpoint)
    node = graph.node(name)
    if node is None:
        if where == "feed":
            raise NotFoundError(f"FeedInputs: unable to find feed output {endpoint}")
        raise NotFoundError(f"FetchOutputs node {endpoint}: not found")
    if where == "feed" and index >= node.num_outputs:
        raise InvalidArgumentError(
            f"FeedInputs: {endpoint} should have output index < {node.num_outputs}", name
        )
    if where == "fetch" and node.num_outputs == 0:
        raise InvalidArgumentError(
            f"Tried to fetch data for '{endpoint}', which produces no output.  To run to a "
            f"node but not fetch any data, pass '{endpoint}' as an argument to the "
            "'target_node_names' argument of the Session::Run API.",
            name,
        )
    if where == "fetch" and index >= node.num_outputs:
        raise InvalidArgumentError(
            f"FetchOutputs {endpoint}: output index too large, must be < {node.num_outputs}",
            name,
        )
    return node, index


def _add_feed_node(
    graph: Graph,
    endpoint: str,
    src: Node,
    index: int,
    dtype: DataType,
    device: DeviceInfo,
    arg_index: int | None,
) -> Node:
    if arg_index is not None:
        node = graph.add_node(
            f"_arg_{src.name}_{index}_{arg_index}",
            "_Arg",
            {"T": attr_type(dtype), "index": attr_i(arg_index)},
            input_types=(),
            output_types=(dtype,),
        )
    else:
        attrs = sendrecv_attrs(endpoint, device.name, device.incarnation, device.name, True)
        attrs["tensor_type"] = attr_type(dtype)
        node = graph.add_node(
            f"_recv_{src.name}_{index}", "_Recv", attrs, input_types=(), output_types=(dtype,)
        )
    node.assigned_device = device.name
    return node


def _add_fetch_node(
    graph: Graph,
    endpoint: str,
    src: Node,
    index: int,
    dtype: DataType,
    device: DeviceInfo,
    retval_index: int | None,
) -> Node:
    if retval_index is not None:
        node = graph.add_node(
            f"_retval_{src.name}_{index}_{retval_index}",
            "_Retval",
            {"T": attr_type(dtype), "index": attr_i(retval_index)},
            input_types=(dtype,),
            output_types=(),
        )
    else:
        attrs = sendrecv_attrs(endpoint, device.name, device.incarnation, device.name, True)
        attrs["T"] = attr_type(dtype)
        node = graph.add_node(
            f"_send_{src.name}_{index}", "_Send", attrs, input_types=(dtype,), output_types=()
        )
    node.assigned_device = device.name
    graph.add_edge(src, index, node, 0)
    return node


def _feed_inputs(
    graph: Graph, feeds: list[str], device: DeviceInfo, function_convention: bool
) -> tuple[dict[str, Node], list[DataType]]:
    """TF FeedInputs: replace each fed output's out-edges with edges from a feed node."""
    nodes: dict[str, Node] = {}
    types: list[DataType] = []
    for i, endpoint in enumerate(feeds):
        src, index = _lookup_output(graph, endpoint, "feed")
        dtype = base_type(src.output_types[index])
        feed = _add_feed_node(
            graph, endpoint, src, index, dtype, device, i if function_convention else None
        )
        graph.add_control_edge(graph.source, feed, allow_duplicates=True)
        is_placeholder = src.op in _PLACEHOLDER_OPS
        for e in list(src.out_edges):
            if e.src_output == index:
                graph.add_edge(feed, 0, e.dst, e.dst_input)
            elif e.is_control and is_placeholder:
                # Feeding a Placeholder: its control dependents wait on the feed instead.
                graph.add_control_edge(feed, e.dst, allow_duplicates=True)
            else:
                continue
            graph.remove_edge(e)
        nodes[endpoint] = feed
        types.append(dtype)
    return nodes, types


def _fetch_outputs(
    graph: Graph, fetches: list[str], device: DeviceInfo, function_convention: bool
) -> tuple[dict[str, Node], list[DataType]]:
    nodes: dict[str, Node] = {}
    types: list[DataType] = []
    for i, endpoint in enumerate(fetches):
        src, index = _lookup_output(graph, endpoint, "fetch")
        dtype = base_type(src.output_types[index])
        fetch = _add_fetch_node(
            graph, endpoint, src, index, dtype, device, i if function_convention else None
        )
        graph.add_control_edge(fetch, graph.sink, allow_duplicates=True)
        nodes[endpoint] = fetch
        types.append(dtype)
    return nodes, types


def _prune_for_targets(graph: Graph, fetch_nodes: list[Node], targets: list[str]) -> None:
    """TF PruneForTargets: keep what reaches a fetch or target node, then fix SOURCE/SINK."""
    keep: set[Node] = set(fetch_nodes)
    not_found = ""
    for t in targets:
        node = graph.node(parse_tensor_name(t)[0])
        if node is None:
            not_found += t + " "
        else:
            keep.add(node)
    if not_found:
        raise NotFoundError(f"PruneForTargets: Some target nodes not found: {not_found}")
    algorithm.prune_for_reverse_reachability(graph, keep)
    algorithm.fixup_source_and_sink_edges(graph)


def prune_after_lowering(graph: Graph, result: RewriteResult, targets: list[str]) -> None:
    """Prune again once functional ops were lowered: TensorFlow lowers If/Case/While
    before it prunes for a signature, so a branch output nothing fetched (and every node
    only it needs, stateful or not) does not run. Feed nodes stay (their keys are set)."""
    roots = list(result.fetch_nodes.values()) + list(result.feed_nodes.values())
    _prune_for_targets(graph, roots, targets)


def _check_endpoints(feeds: list[str], fetches: list[str], targets: list[str]) -> None:
    if not fetches and not targets:
        raise InvalidArgumentError("Must specify at least one target to fetch or execute.")
    seen: set[str] = set()
    for f in feeds:
        if f in seen:
            raise InvalidArgumentError(f'Endpoint "{f}" fed more than once.')
        seen.add(f)
    for f in fetches:
        if f in seen:
            raise InvalidArgumentError(f"{f} is both fed and fetched.")


def rewrite_graph_for_execution(
    graph: Graph,
    feeds: list[str],
    fetches: list[str],
    targets: list[str],
    *,
    device_info: DeviceInfo,
    use_function_convention: bool = False,
) -> RewriteResult:
    """Rewrite `graph` in place for one (feeds, fetches, targets) signature.

    Errors as TensorFlow: InvalidArgument without fetches or targets, for a tensor fed
    twice, fed and fetched, or an output index out of range; NotFound for an unknown
    feed, fetch or target node."""
    _check_endpoints(feeds, fetches, targets)
    feed_nodes, feed_types = _feed_inputs(graph, feeds, device_info, use_function_convention)
    fetch_nodes, fetch_types = _fetch_outputs(graph, fetches, device_info, use_function_convention)
    _prune_for_targets(graph, list(fetch_nodes.values()), targets)
    live_feeds = {k: n for k, n in feed_nodes.items() if graph.find_node_id(n.id) is n}
    return RewriteResult(live_feeds, fetch_nodes, feed_types, fetch_types)
