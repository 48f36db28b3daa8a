"""GraphDef utilities: versions, default attrs, op lists and summaries (TF's graph_def_util).

Works on GraphDef protos before (or instead of) building a Graph: the version numbers
this runtime consumes and produces and their check (`check_versions`), filling and
stripping default attrs for producer/consumer compatibility, the ops a graph uses
(through its function library), and human-readable summaries for error messages.
Pure functions; safe from any thread on protos no one else mutates.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from common import dtypes
from common.errors import InvalidArgumentError, NotFoundError
from common.function_library import collect_func_names
from common.ops import op_def_util, registry
from common.ops.registry import OpDef

# The GraphDef versions of this runtime: TF 2.21's producer version, and the oldest
# producer / consumer it works with (TF_GRAPH_DEF_VERSION and friends).
GRAPH_DEF_VERSION = 2474
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0

# name -> OpDef | None, a Mapping of OpDefs, or an OpList proto
OpLookup = Callable[[str], OpDef | None] | Mapping[str, OpDef] | Any


def check_versions(
    versions: Any,
    consumer: int = GRAPH_DEF_VERSION,
    min_producer: int = GRAPH_DEF_VERSION_MIN_PRODUCER,
    upper_name: str = "GraphDef",
    lower_name: str = "graph",
) -> None:
    """TensorFlow's CheckVersions: may a consumer at `consumer` read data at `versions`?"""
    if versions.producer < min_producer:
        raise InvalidArgumentError(
            f"{upper_name} producer version {versions.producer} below min producer "
            f"{min_producer} supported by {lower_name}.  Please regenerate your {lower_name}."
        )
    if versions.min_consumer > consumer:
        raise InvalidArgumentError(
            f"{upper_name} min consumer version {versions.min_consumer} above current "
            f"version {consumer} for {lower_name}.  Please upgrade TensorFlow."
        )
    for bad in versions.bad_consumers:
        if bad == consumer:
            raise InvalidArgumentError(
                f"{upper_name} disallows consumer version {bad}.  Please upgrade "
                "TensorFlow: this version is likely buggy."
            )


# ---------------------------------------------------------------------------------------
# Op lookups
# ---------------------------------------------------------------------------------------


def _as_lookup(ops: OpLookup | None, gd: Any = None) -> Callable[[str], OpDef | None]:
    """A `name -> OpDef | None` function from a callable, a mapping, an OpList proto, or
    None (the op registry, then the GraphDef's function signatures)."""
    if ops is None:
        from common.function_library import FunctionLibrary

        flib = FunctionLibrary(gd.library) if gd is not None and len(gd.library.function) else None

        def lookup(name: str) -> OpDef | None:
            return registry.find_op(name) or (flib.find_op(name) if flib is not None else None)

        return lookup
    if callable(ops):
        return ops
    if isinstance(ops, Mapping):
        return ops.get
    from common import attr_value

    table = {p.name: attr_value.op_def_from_proto(p) for p in ops.op}
    return table.get


# ---------------------------------------------------------------------------------------
# Default attrs
# ---------------------------------------------------------------------------------------


def add_default_attrs_to_graph_def(
    gd: Any,
    op_lookup: OpLookup | None = None,
    node_offset: int = 0,
    skip_unknown_ops: bool = False,
) -> None:
    """Fill omitted attrs of gd.node[node_offset:] with their OpDef defaults (in place).
    Unknown ops raise NotFoundError unless `skip_unknown_ops`."""
    lookup = _as_lookup(op_lookup, gd)
    if node_offset > len(gd.node):
        raise InvalidArgumentError(
            f"Tried to add default attrs to GraphDef starting at offset {node_offset} with "
            f"total nodes in graph: {len(gd.node)}"
        )
    for i in range(node_offset, len(gd.node)):
        nd = gd.node[i]
        op_def = lookup(nd.op)
        if op_def is None:
            if skip_unknown_ops:
                continue
            raise NotFoundError(f"Op type not registered '{nd.op}'", nd.name)
        for a in op_def.attrs:
            if a.has_default and a.name not in nd.attr:
                nd.attr[a.name].CopyFrom(op_def_util.default_proto(a))


def _same_value(a: Any, b: Any) -> bool:
    return a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True)


def _remove_new_defaults_from_node(
    nd: Any,
    consumer: Callable[[str], OpDef | None],
    producer: Callable[[str], OpDef | None],
    removed: set[tuple[str, str]],
) -> None:
    consumer_op = consumer(nd.op)
    if consumer_op is None:
        raise NotFoundError(f"Op type not registered '{nd.op}'", nd.name)
    producer_op = producer(nd.op)
    if producer_op is None:
        return
    doomed = []
    for name, value in nd.attr.items():
        if name.startswith("_") or consumer_op.attr(name) is not None:
            continue
        pattr = producer_op.attr(name)
        if pattr is None:
            raise InvalidArgumentError(
                f"Attr '{name}' missing in producer's OpDef: "
                f"{op_def_util.summarize_op_def(producer_op)} but found in node: "
                f"{op_def_util.format_node_for_error(nd.name)}",
                nd.name,
            )
        if pattr.has_default and _same_value(op_def_util.default_proto(pattr), value):
            doomed.append(name)
    for name in doomed:
        del nd.attr[name]
        removed.add((nd.op, name))


def remove_new_default_attrs_from_graph_def(
    gd: Any, consumer_op_list: OpLookup, producer_op_list: OpLookup
) -> set[tuple[str, str]]:
    """Drop attrs an older consumer does not know whose value is the producer's default
    (TF's RemoveNewDefaultAttrsFromGraphDef), in graph nodes and function bodies.
    Returns the (op, attr) pairs removed. Calls of library functions are left alone."""
    consumer = _as_lookup(consumer_op_list)
    producer = _as_lookup(producer_op_list)
    functions = {f.signature.name for f in gd.library.function}
    removed: set[tuple[str, str]] = set()
    for nd in gd.node:
        if nd.op not in functions:
            _remove_new_defaults_from_node(nd, consumer, producer, removed)
    for f in gd.library.function:
        for nd in f.node_def:
            if nd.op not in functions:
                _remove_new_defaults_from_node(nd, consumer, producer, removed)
    return removed


# ---------------------------------------------------------------------------------------
# Ops used
# ---------------------------------------------------------------------------------------


def ops_used_by_graph(gd: Any) -> set[str]:
    """Names of the ops (not functions) the graph's nodes use, directly or inside the
    library functions they call (by op name or through func-valued attrs), recursively."""
    functions = {f.signature.name: f for f in gd.library.function}
    used: set[str] = set()
    todo: list[Any] = []

    def mark(names: Iterable[str]) -> None:
        for op in names:
            if op not in used:
                used.add(op)
                f = functions.get(op)
                if f is not None:
                    todo.append(f)

    def node_ops(nodes: Iterable[Any]) -> None:
        for nd in nodes:
            names = {nd.op}
            for v in nd.attr.values():
                collect_func_names(v, names)
            mark(names)

    node_ops(gd.node)
    while todo:
        node_ops(todo.pop().node_def)
    return {op for op in used if op not in functions}


def stripped_op_list_for_graph(gd: Any, op_lookup: OpLookup | None = None) -> Any:
    """An OpList proto of the ops `gd` uses (sorted by name), descriptions removed (TF's
    StrippedOpListForGraph). Raises NotFoundError for an op nobody registered."""
    from common import attr_value
    from protos import op_def_pb2

    lookup = _as_lookup(op_lookup if op_lookup is not None else registry.find_op)
    out = op_def_pb2.OpList()
    for name in sorted(ops_used_by_graph(gd)):
        op_def = lookup(name)
        if op_def is None:
            raise NotFoundError(f"Op type not registered '{name}'")
        p = out.op.add()
        p.CopyFrom(attr_value.op_def_to_proto(op_def))
        _remove_descriptions(p)
    return out


def _remove_descriptions(op: Any) -> None:
    op.ClearField("summary")
    op.ClearField("description")
    for arg in list(op.input_arg) + list(op.output_arg):
        arg.ClearField("description")
    for a in op.attr:
        a.ClearField("description")
    if op.HasField("deprecation"):
        op.deprecation.ClearField("explanation")


# ---------------------------------------------------------------------------------------
# Summaries and external syntax
# ---------------------------------------------------------------------------------------


def _shape_text(shape: Any) -> str:
    if shape.unknown_rank:
        return "<unknown>"
    return "[" + ",".join("?" if d.size < 0 else str(d.size) for d in shape.dim) + "]"


def _escape(b: bytes) -> str:
    return b.decode("utf-8", "backslashreplace").replace("\\", "\\\\").replace('"', '\\"')


def _scalar_text(kind: str, v: Any) -> str:
    if kind == "s":
        return '"' + _escape(v) + '"'
    if kind == "i":
        return str(v)
    if kind == "f":
        return f"{v:g}" if math.isfinite(v) else str(v)
    if kind == "b":
        return "true" if v else "false"
    if kind == "type":
        try:
            return dtypes.DataType(v).name
        except ValueError:
            return str(v)
    if kind == "shape":
        return _shape_text(v)
    if kind == "tensor":
        dt = (
            dtypes.DataType(v.dtype).name
            if v.dtype in dtypes.DataType._value2member_map_
            else v.dtype
        )
        return f"<Tensor<type: {dt} shape: {_shape_text(v.tensor_shape)}>>"
    if kind == "func":
        attrs = ", ".join(f"{k}={summarize_attr_value(v.attr[k])}" for k in sorted(v.attr))
        return f"{v.name}[{attrs}]"
    return str(v)


def summarize_attr_value(value: Any) -> str:
    """An AttrValue proto the way TensorFlow's SummarizeAttrValue prints it."""
    kind = value.WhichOneof("value")
    if kind is None:
        return "<Unknown AttrValue type>"
    if kind == "placeholder":
        return "$" + value.placeholder
    if kind != "list":
        return _scalar_text(kind, getattr(value, kind))
    for f in ("s", "i", "f", "b", "type", "shape", "tensor", "func"):
        items = getattr(value.list, f)
        if len(items):
            return "[" + ", ".join(_scalar_text(f, x) for x in items) + "]"
    return "[]"


def summarize_node_def(nd: Any) -> str:
    """TF's SummarizeNodeDef: "{{node n}} = Op[attr=v, _device="d"](in, ^ctl)"."""
    attrs = [f"{k}={summarize_attr_value(nd.attr[k])}" for k in sorted(nd.attr)]
    if nd.device:
        attrs.append(f'_device="{nd.device}"')
    return (
        f"{op_def_util.format_node_for_error(nd.name)} = {nd.op}[{', '.join(attrs)}]"
        f"({', '.join(nd.input)})"
    )


def summarize_graph_def(gd: Any) -> str:
    """TF's SummarizeGraphDef: the versions, then one summarized node per line."""
    from google.protobuf import text_format

    lines = ["versions = " + text_format.MessageToString(gd.versions, as_one_line=True) + ";"]
    lines.extend(summarize_node_def(nd) + ";" for nd in gd.node)
    return "\n".join(lines) + "\n"


_OP_NAME_RE = re.compile(r"[A-Za-z0-9.][A-Za-z0-9_.\-/>]*")
_OP_INPUT_RE = re.compile(r"\^?[A-Za-z0-9.][A-Za-z0-9_.\-/>]*(?::[0-9]+)?")


def _attach(message: str, node_name: str) -> InvalidArgumentError:
    return InvalidArgumentError(
        f"{message}\n\t [[{op_def_util.format_node_for_error(node_name)}]]", node_name
    )


def validate_external_graph_def_syntax(gd: Any) -> None:
    """TF's ValidateExternalGraphDefSyntax, for GraphDefs from clients: node names may
    not be internal ("_x") or malformed, inputs must be "name", "name:N" or "^name",
    and control inputs must follow data inputs."""
    for nd in gd.node:
        if not _OP_NAME_RE.fullmatch(nd.name):
            raise _attach(f"Illegal op name '{nd.name}'", nd.name)
        in_control = False
        for inp in nd.input:
            if not _OP_INPUT_RE.fullmatch(inp):
                raise _attach(f"Illegal op input name '{inp}'", nd.name)
            is_control = inp.startswith("^")
            if in_control and not is_control:
                raise _attach("All control inputs must follow all data inputs", nd.name)
            in_control = is_control
