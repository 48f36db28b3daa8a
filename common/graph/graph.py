"""Graph: the mutable dataflow graph every stage rewrites (TensorFlow's Graph/Node/Edge).

Node ids are dense; SOURCE (id 0) and SINK (id 1) always exist, as in TensorFlow, so
every op node can be reached from SOURCE and reaches SINK (the constructor adds those
control edges). An Edge connects (src, src_output) to (dst, dst_input); control edges use
slot CONTROL_SLOT (-1) on both ends.

A node's attrs are kept as AttrValue protos (`attr_protos`, the truth, defaults filled by
the constructor) with a lazily built dict of Python values (`attrs`) for kernels and
passes. Input and output dtypes are resolved from the OpDef when the node is added.

Not thread-safe: a Graph is owned by one stage at a time (built, then rewritten, then
handed to the executor, which only reads it).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from common.dtypes import DataType
from common.errors import InvalidArgumentError, NotFoundError
from common.ops import registry
from common.ops.registry import OpDef

CONTROL_SLOT = -1
SOURCE_ID = 0
SINK_ID = 1


class Edge:
    __slots__ = ("id", "src", "src_output", "dst", "dst_input")

    def __init__(self, id: int, src: Node, src_output: int, dst: Node, dst_input: int) -> None:
        self.id = id
        self.src = src
        self.src_output = src_output
        self.dst = dst
        self.dst_input = dst_input

    @property
    def is_control(self) -> bool:
        return self.src_output == CONTROL_SLOT

    def __repr__(self) -> str:
        if self.is_control:
            return f"Edge({self.src.name} -> ^{self.dst.name})"
        return f"Edge({self.src.name}:{self.src_output} -> {self.dst.name}:{self.dst_input})"


class Node:
    __slots__ = (
        "id",
        "name",
        "op",
        "op_def",
        "attr_protos",
        "_attrs",
        "requested_device",
        "assigned_device",
        "input_types",
        "output_types",
        "in_edges",
        "out_edges",
    )

    def __init__(
        self,
        id: int,
        name: str,
        op: str,
        op_def: OpDef | None,
        attr_protos: dict[str, Any],
        requested_device: str,
        input_types: tuple[DataType, ...],
        output_types: tuple[DataType, ...],
    ) -> None:
        self.id = id
        self.name = name
        self.op = op
        self.op_def = op_def
        self.attr_protos = attr_protos
        self._attrs: dict[str, Any] | None = None
        self.requested_device = requested_device
        self.assigned_device = ""
        self.input_types = input_types
        self.output_types = output_types
        self.in_edges: list[Edge] = []
        self.out_edges: list[Edge] = []

    # -- attrs -------------------------------------------------------------------------
    @property
    def attrs(self) -> dict[str, Any]:
        """Attr values as Python values (see registry.AttrDef), built once."""
        if self._attrs is None:
            from common import attr_value

            self._attrs = attr_value.attrs_to_python(self.attr_protos, self.op_def)
        return self._attrs

    def attr(self, name: str, default: Any = ...) -> Any:
        attrs = self.attrs
        if name in attrs:
            return attrs[name]
        if default is not ...:
            return default
        raise InvalidArgumentError(f"Node {self.name} ({self.op}) has no attr '{name}'", self.name)

    def set_attr(self, name: str, value: Any) -> None:
        """Set an attr from a Python value (or an AttrValue proto)."""
        from common import attr_value

        attr_def = self.op_def.attr(name) if self.op_def else None
        self.attr_protos[name] = attr_value.to_proto(value, attr_def.type if attr_def else None)
        self._attrs = None

    # -- structure ---------------------------------------------------------------------
    @property
    def is_source(self) -> bool:
        return self.id == SOURCE_ID

    @property
    def is_sink(self) -> bool:
        return self.id == SINK_ID

    @property
    def is_op(self) -> bool:
        return self.id > SINK_ID

    @property
    def num_inputs(self) -> int:
        return len(self.input_types)

    @property
    def num_outputs(self) -> int:
        return len(self.output_types)

    def data_inputs(self) -> list[Edge | None]:
        """In-edges by input slot (None for a slot not yet connected)."""
        slots: list[Edge | None] = [None] * len(self.input_types)
        for e in self.in_edges:
            if not e.is_control and e.dst_input < len(slots):
                slots[e.dst_input] = e
        return slots

    def input_edge(self, i: int) -> Edge:
        for e in self.in_edges:
            if e.dst_input == i:
                return e
        raise NotFoundError(f"Node {self.name} has no input {i}", self.name)

    def control_inputs(self) -> list[Node]:
        return [e.src for e in self.in_edges if e.is_control and e.src.is_op]

    @property
    def device(self) -> str:
        """Assigned device if placed, else the requested one."""
        return self.assigned_device or self.requested_device

    def __repr__(self) -> str:
        return f"Node({self.name}: {self.op})"


class Graph:
    def __init__(self, flib: Any = None) -> None:
        # `flib`: the function library (common.function_library.FunctionLibrary) whose
        # functions may be used as ops; None means no functions.
        self.flib = flib
        self._nodes: list[Node | None] = []
        self._by_name: dict[str, Node] = {}
        self._edges: list[Edge | None] = []
        self._num_nodes = 0
        self._num_edges = 0
        self.versions: Any = None  # VersionDef proto, set by the constructor
        self.source = self._new_node("_SOURCE", "NoOp", None, {}, "", (), ())
        self.sink = self._new_node("_SINK", "NoOp", None, {}, "", (), ())
        del self._by_name["_SOURCE"], self._by_name["_SINK"]

    # -- ops -----------------------------------------------------------------------------
    def lookup_op(self, op: str) -> OpDef:
        if self.flib is not None:
            found = self.flib.find_op(op)
            if found is not None:
                return found
        return registry.lookup_op(op)

    # -- nodes ---------------------------------------------------------------------------
    def _new_node(self, name, op, op_def, attr_protos, device, in_types, out_types) -> Node:
        node = Node(len(self._nodes), name, op, op_def, attr_protos, device, in_types, out_types)
        self._nodes.append(node)
        self._by_name[name] = node
        self._num_nodes += 1
        return node

    def add_node(
        self,
        name: str,
        op: str,
        attr_protos: dict[str, Any] | None = None,
        requested_device: str = "",
        *,
        op_def: OpDef | None = None,
        input_types: tuple[DataType, ...] | None = None,
        output_types: tuple[DataType, ...] | None = None,
    ) -> Node:
        """Add an op node. Types are resolved from the OpDef and attrs unless given."""
        if name in self._by_name:
            raise InvalidArgumentError(f"Node '{name}' already exists in the graph", name)
        if op_def is None:
            op_def = self.lookup_op(op)
        attr_protos = dict(attr_protos or {})
        if input_types is None or output_types is None:
            from common.ops import op_def_util

            input_types, output_types = op_def_util.in_out_types(name, op_def, attr_protos)
        return self._new_node(
            name, op, op_def, attr_protos, requested_device, input_types, output_types
        )

    def remove_node(self, node: Node) -> None:
        assert node.is_op, "SOURCE and SINK cannot be removed"
        for e in list(node.in_edges) + list(node.out_edges):
            self.remove_edge(e)
        self._nodes[node.id] = None
        del self._by_name[node.name]
        self._num_nodes -= 1

    def remove_nodes(self, nodes: list[Node]) -> None:
        """Remove many nodes and their edges in time linear in their degrees."""
        edges = {e.id: e for node in nodes for e in (*node.in_edges, *node.out_edges)}
        self.remove_edges(list(edges.values()))
        for node in nodes:
            assert node.is_op, "SOURCE and SINK cannot be removed"
            self._nodes[node.id] = None
            del self._by_name[node.name]
            self._num_nodes -= 1

    def node(self, name: str) -> Node | None:
        return self._by_name.get(name)

    def find_node_id(self, id: int) -> Node | None:
        return self._nodes[id] if 0 <= id < len(self._nodes) else None

    def nodes(self) -> Iterator[Node]:
        """All live nodes, SOURCE and SINK included, in id order."""
        return (n for n in self._nodes if n is not None)

    def op_nodes(self) -> Iterator[Node]:
        return (n for n in self._nodes if n is not None and n.id > SINK_ID)

    @property
    def num_node_ids(self) -> int:
        """One past the largest node id ever used (ids are not reused)."""
        return len(self._nodes)

    @property
    def num_nodes(self) -> int:
        return self._num_nodes

    @property
    def num_op_nodes(self) -> int:
        return self._num_nodes - 2

    # -- edges ---------------------------------------------------------------------------
    def add_edge(self, src: Node, src_output: int, dst: Node, dst_input: int) -> Edge:
        e = Edge(len(self._edges), src, src_output, dst, dst_input)
        self._edges.append(e)
        src.out_edges.append(e)
        dst.in_edges.append(e)
        self._num_edges += 1
        return e

    def add_control_edge(self, src: Node, dst: Node, allow_duplicates: bool = False) -> Edge:
        if not allow_duplicates:
            # Scan the shorter side: a node with 100,000 control inputs made this quadratic.
            if len(src.out_edges) <= len(dst.in_edges):
                for e in src.out_edges:
                    if e.dst is dst and e.is_control:
                        return e
            else:
                for e in dst.in_edges:
                    if e.src is src and e.is_control:
                        return e
        return self.add_edge(src, CONTROL_SLOT, dst, CONTROL_SLOT)

    def remove_edge(self, e: Edge) -> None:
        e.src.out_edges.remove(e)
        e.dst.in_edges.remove(e)
        self._edges[e.id] = None
        self._num_edges -= 1

    def remove_edges(self, edges: list[Edge]) -> None:
        """Remove many edges in time linear in the edges and the degrees of their ends
        (`remove_edge` one by one is quadratic for a node with many inputs)."""
        gone = {e.id for e in edges}
        touched: dict[int, Node] = {}
        for e in edges:
            touched[e.src.id] = e.src
            touched[e.dst.id] = e.dst
            self._edges[e.id] = None
        for node in touched.values():
            node.in_edges = [e for e in node.in_edges if e.id not in gone]
            node.out_edges = [e for e in node.out_edges if e.id not in gone]
        self._num_edges -= len(gone)

    def edges(self) -> Iterator[Edge]:
        return (e for e in self._edges if e is not None)

    @property
    def num_edge_ids(self) -> int:
        return len(self._edges)

    @property
    def num_edges(self) -> int:
        return self._num_edges

    # -- conversion ----------------------------------------------------------------------
    def to_graph_def(self, include_library: bool = True, use_assigned_device: bool = True):
        """A GraphDef of the op nodes: data inputs in slot order, then ^control inputs."""
        from protos import graph_pb2

        gd = graph_pb2.GraphDef()
        if self.versions is not None:
            gd.versions.CopyFrom(self.versions)
        if include_library and self.flib is not None:
            gd.library.CopyFrom(self.flib.to_proto())
        for node in self.op_nodes():
            nd = gd.node.add()
            nd.name = node.name
            nd.op = node.op
            nd.device = (
                node.assigned_device
                if use_assigned_device and node.assigned_device
                else node.requested_device
            )
            for e in sorted(
                (e for e in node.in_edges if not e.is_control), key=lambda e: e.dst_input
            ):
                nd.input.append(e.src.name if e.src_output == 0 else f"{e.src.name}:{e.src_output}")
            for e in node.in_edges:
                if e.is_control and e.src.is_op:
                    nd.input.append("^" + e.src.name)
            for k, v in node.attr_protos.items():
                nd.attr[k].CopyFrom(v)
        return gd
