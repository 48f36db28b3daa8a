"""Client, training: meta graphs (tf.train.export_meta_graph / import_meta_graph), a
GraphDef with the SaverDef and the named collections a program needs to resume with it.

TensorFlow's python/framework/meta_graph.py over this client's Graph: the same
MetaGraphDef (protos/meta_graph.proto) in binary or text form, so `.meta` files move both
ways between TensorFlow and this client. Export writes the graph with `_output_shapes`,
the stripped OpList of the ops used (from our registry), and each collection as TF's
CollectionDef: a key with a registered proto function (the variable collections and
`global_step`: VariableDef; `savers`: SaverDef) as serialized protos in bytes_list,
otherwise by its first item's kind: str/bytes -> bytes_list, int -> int64_list,
float -> float_list, protobuf Any -> any_list, graph elements -> node_list (names). A
collection that fits none is skipped with a warning, as TF. Import strips
`_output_shapes`, adds the nodes (under `import_scope`), then refills the collections:
graph elements by name, variables as `Variable`s over the imported ops.

tensorflow_version stays empty: TensorFlow's importer then reads VariableDef.trainable,
which this client always writes. Not supported: clear_extraneous_savers, save_debug_info,
the control-flow context collections (cond_context, while_context: imported as bytes),
queue runners. Not thread-safe (graph building, as TensorFlow).
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import os
import re
from collections.abc import Callable, Iterable
from typing import Any

from google.protobuf import any_pb2, text_format

from client.framework import ops as _ops
from client.framework.importer import import_graph_def
from client.ops.variables import Variable, prepend_name_scope, strip_name_scope
from common import attr_value
from common.ops import registry
from protos import graph_pb2, meta_graph_pb2, op_def_pb2, variable_pb2

_log = logging.getLogger(__name__)
GraphKeys = _ops.GraphKeys
UNBOUND_INPUT_PREFIX = "$unbound_inputs_"
MetaGraphDef = meta_graph_pb2.MetaGraphDef
CollectionDef = meta_graph_pb2.CollectionDef


# -- collection proto functions (TF's ops.register_proto_function) -------------------------
@dataclasses.dataclass(frozen=True)
class ProtoFunctions:
    """How the items of one collection key become protos and back."""

    proto_type: type
    to_proto: Callable[..., Any]
    from_proto: Callable[..., Any]


_PROTO_FUNCTIONS: dict[str, ProtoFunctions] = {}
# Collections of variables: one Variable per distinct VariableDef across all of them.
VARIABLE_COLLECTIONS = (
    "variables",
    "local_variables",
    "metric_variables",
    "model_variables",
    "trainable_variables",
    "moving_average_variables",
    "concatenated_variables",
    "trainable_resource_variables",
)


def register_proto_function(
    key: str, proto_type: type, to_proto: Callable[..., Any], from_proto: Callable[..., Any]
) -> None:
    _PROTO_FUNCTIONS[key] = ProtoFunctions(proto_type, to_proto, from_proto)


def _variable_to_proto(v: Any, export_scope: str | None = None) -> Any:
    return v.to_proto(export_scope=export_scope) if isinstance(v, Variable) else None


# TF's resource_variable_ops registrations.
for _key in (
    GraphKeys.GLOBAL_VARIABLES,
    GraphKeys.TRAINABLE_VARIABLES,
    "moving_average_variables",
    GraphKeys.LOCAL_VARIABLES,
    GraphKeys.MODEL_VARIABLES,
    GraphKeys.GLOBAL_STEP,
    "metric_variables",
):
    register_proto_function(_key, variable_pb2.VariableDef, _variable_to_proto, Variable.from_proto)


# -- files ---------------------------------------------------------------------------------
def read_meta_graph_file(filename: str | os.PathLike[str]) -> MetaGraphDef:
    """A MetaGraphDef from a binary file, else a text one (TF's read_meta_graph_file)."""
    filename = os.fsdecode(filename)
    if not os.path.exists(filename):
        raise OSError(f"File does not exist. Received: {filename}.")
    with open(filename, "rb") as f:
        content = f.read()
    meta_graph_def = MetaGraphDef()
    try:
        meta_graph_def.ParseFromString(content)
        return meta_graph_def
    except Exception:  # noqa: BLE001 (not binary: try the text form, as TensorFlow)
        meta_graph_def = MetaGraphDef()
    try:
        text_format.Merge(content.decode("utf-8"), meta_graph_def)
    except (text_format.ParseError, UnicodeDecodeError) as e:
        raise OSError(f"Cannot parse file {filename}: {e}.") from None
    return meta_graph_def


def write_meta_graph_file(meta_graph_def: MetaGraphDef, filename: str, as_text: bool) -> str:
    """TF's graph_io.write_graph: the directory made if needed, the file replaced whole."""
    directory = os.path.dirname(filename)
    if directory:
        os.makedirs(directory, exist_ok=True)
    if as_text:
        data = text_format.MessageToString(meta_graph_def).encode()
    else:
        data = meta_graph_def.SerializeToString(deterministic=True)
    tmp = f"{filename}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, filename)
    return filename


# -- export --------------------------------------------------------------------------------
def graph_def_with_shapes(graph: _ops.Graph) -> graph_pb2.GraphDef:
    """TF's as_graph_def(add_shapes=True): `_output_shapes` on the nodes with outputs."""
    graph_def = graph.as_graph_def(add_shapes=True)
    for node in graph_def.node:
        if not node.attr["_output_shapes"].list.shape:
            del node.attr["_output_shapes"]
    return graph_def


def stripped_op_list_for_graph(graph_def: graph_pb2.GraphDef) -> op_def_pb2.OpList:
    """The OpDefs (our registry's) of the ops the graph and its functions use, by name."""
    functions = {f.signature.name: f for f in graph_def.library.function}
    used: set[str] = set()
    pending = []

    def use(op: str) -> None:
        if op not in used and op in functions:
            pending.append(functions[op])
        used.add(op)

    def visit(node: Any) -> None:
        use(node.op)
        if node.op in ("PartitionedCall", "StatefulPartitionedCall"):
            use(node.attr["f"].func.name)

    for node in graph_def.node:
        visit(node)
    while pending:
        for node in pending.pop().node_def:
            visit(node)
    op_list = op_def_pb2.OpList()
    for name in sorted(used - functions.keys()):
        op_def = registry.find_op(name)
        if op_def is not None:
            op_list.op.add().CopyFrom(attr_value.op_def_to_proto(op_def))
    return op_list


def _kind_name(item: Any) -> str:
    """TF's _get_kind_name: the CollectionDef field for a collection's items."""
    if isinstance(item, (str, bytes)):
        return "bytes_list"
    if isinstance(item, int):
        return "int64_list"
    if isinstance(item, float):
        return "float_list"
    if isinstance(item, any_pb2.Any):
        return "any_list"
    return "node_list"


def _should_include(item: Any, export_scope: str | None) -> bool:
    name = item if isinstance(item, str) else getattr(item, "name", None)
    if not isinstance(name, str):
        return True  # kept: nothing to match a scope against (as TensorFlow)
    return (
        name.startswith(UNBOUND_INPUT_PREFIX) or not export_scope or name.startswith(export_scope)
    )


def add_collection_def(
    meta_graph_def: MetaGraphDef, key: Any, graph: _ops.Graph, export_scope: str | None = None
) -> None:
    """TF's add_collection_def: collection `key` of `graph` into `meta_graph_def`."""
    if not isinstance(key, (str, bytes)):
        _log.warning("Only collections with string type keys will be serialized: %r", key)
        return
    if isinstance(key, bytes):
        key = key.decode()
    items = [x for x in graph.get_collection(key) if _should_include(x, export_scope)]
    if not items:
        return
    col_def = meta_graph_def.collection_def[key]
    try:
        funcs = _PROTO_FUNCTIONS.get(key)
        if funcs is not None:
            for x in items:
                proto = funcs.to_proto(x, export_scope=export_scope)
                if proto is not None:
                    col_def.bytes_list.value.append(proto.SerializeToString())
            return
        kind = _kind_name(items[0])
        if kind == "node_list":
            col_def.node_list.value.extend(
                strip_name_scope(x.name, export_scope)
                for x in items
                if not export_scope or x.name.startswith(export_scope)
            )
        elif kind == "bytes_list":
            col_def.bytes_list.value.extend(x.encode() if isinstance(x, str) else x for x in items)
        else:
            getattr(col_def, kind).value.extend(items)
    except Exception as e:  # noqa: BLE001 (TF: an unserializable collection is left out)
        _log.warning(
            "Issue encountered when serializing %s. Type is unsupported, or the types of the "
            "items don't match field type in CollectionDef. Note this is a warning and "
            "probably safe to ignore.\n%s",
            key,
            e,
        )
        del meta_graph_def.collection_def[key]


def _export_node_def(
    node: Any, export_scope: str | None, unbound_inputs: list[str], clear_devices: bool
) -> Any:
    """TF's meta_graph._node_def: `node` with `export_scope` stripped from its names; inputs
    from outside the scope become `$unbound_inputs_<name>`."""
    out = copy.deepcopy(node)
    for i, name in enumerate(node.input):
        if export_scope and not name.lstrip("^").startswith(export_scope):
            out.input[i] = re.sub(r"([\^]|^)(.*)", r"\1" + UNBOUND_INPUT_PREFIX + r"\2", name)
            unbound_inputs.append(out.input[i])
        else:
            out.input[i] = strip_name_scope(name, export_scope)
    out.name = strip_name_scope(node.name, export_scope)
    if "_class" in node.attr and export_scope:
        kept = [
            strip_name_scope(s.decode(), export_scope).encode()
            for s in node.attr["_class"].list.s
            if s.decode().split("@")[1].startswith(export_scope)
        ]
        del out.attr["_class"].list.s[:]
        out.attr["_class"].list.s.extend(kept)
    if clear_devices:
        out.device = ""
    return out


def _strip_default_attrs(graph_def: graph_pb2.GraphDef) -> None:
    """TF's strip_graph_default_valued_attrs over nodes and function bodies."""
    functions = {f.signature.name for f in graph_def.library.function}

    def strip(node: Any) -> None:
        op_def = None if node.op in functions else registry.find_op(node.op)
        if op_def is None:
            return
        defaults = {
            a.name: a.default_value
            for a in attr_value.op_def_to_proto(op_def).attr
            if a.HasField("default_value")
        }
        for name in [n for n, v in node.attr.items() if n in defaults and v == defaults[n]]:
            del node.attr[name]

    for node in graph_def.node:
        strip(node)
    for fdef in graph_def.library.function:
        for node in fdef.node_def:
            strip(node)


def export_scoped_meta_graph(
    filename: str | os.PathLike[str] | None = None,
    graph_def: graph_pb2.GraphDef | None = None,
    graph: _ops.Graph | None = None,
    export_scope: str | None = None,
    as_text: bool = False,
    unbound_inputs_col_name: str | None = "unbound_inputs",
    clear_devices: bool = False,
    saver_def: Any = None,
    clear_extraneous_savers: bool = False,
    strip_default_attrs: bool = False,
    save_debug_info: bool = False,
    meta_info_def: Any = None,
    collection_list: Iterable[str] | None = None,
) -> tuple[MetaGraphDef, dict[str, Variable]]:
    """TF's export_scoped_meta_graph: the MetaGraphDef (written to `filename` if given) and
    the global variables under `export_scope` by stripped name."""
    if clear_extraneous_savers:
        raise NotImplementedError(
            "export_meta_graph(clear_extraneous_savers=True): pruning other savers' nodes "
            "from the exported graph is not supported by this client"
        )
    if save_debug_info:
        raise NotImplementedError(
            "export_meta_graph(save_debug_info=True): this client records no Python stack "
            "traces for nodes, so it has no GraphDebugInfo to write"
        )
    graph = graph or _ops.get_default_graph()
    if graph_def is None:
        graph_def = graph_def_with_shapes(graph)
    if export_scope or clear_devices:
        unbound_inputs: list[str] = []
        scoped = graph_pb2.GraphDef()
        if graph_def.HasField("versions"):
            scoped.versions.CopyFrom(graph_def.versions)
        if graph_def.HasField("library"):
            scoped.library.CopyFrom(graph_def.library)
        for node in graph_def.node:
            if _should_include(node.name, export_scope):
                scoped.node.add().CopyFrom(
                    _export_node_def(node, export_scope, unbound_inputs, clear_devices)
                )
        graph_def = scoped
        if unbound_inputs_col_name:
            graph.get_collection_ref(unbound_inputs_col_name)[:] = unbound_inputs
    var_list = {
        strip_name_scope(v.name, export_scope): v
        for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES, scope=export_scope)
    }
    meta_graph_def = create_meta_graph_def(
        meta_info_def=meta_info_def,
        graph_def=graph_def,
        saver_def=saver_def,
        collection_list=collection_list,
        graph=graph,
        export_scope=export_scope,
        strip_default_attrs=strip_default_attrs,
    )
    if filename:
        write_meta_graph_file(meta_graph_def, os.fsdecode(filename), as_text)
    return meta_graph_def, var_list


def create_meta_graph_def(
    meta_info_def: Any = None,
    graph_def: graph_pb2.GraphDef | None = None,
    saver_def: Any = None,
    collection_list: Iterable[str] | None = None,
    graph: _ops.Graph | None = None,
    export_scope: str | None = None,
    strip_default_attrs: bool = False,
) -> MetaGraphDef:
    """TF's create_meta_graph_def: meta info, graph, saver and collections in one proto."""
    graph = graph or _ops.get_default_graph()
    meta_graph_def = MetaGraphDef()
    if meta_info_def is not None:
        meta_graph_def.meta_info_def.MergeFrom(meta_info_def)
    meta_graph_def.graph_def.MergeFrom(
        graph_def if graph_def is not None else graph_def_with_shapes(graph)
    )
    if not meta_graph_def.meta_info_def.stripped_op_list.op:
        meta_graph_def.meta_info_def.stripped_op_list.MergeFrom(
            stripped_op_list_for_graph(meta_graph_def.graph_def)
        )
    if strip_default_attrs:
        _strip_default_attrs(meta_graph_def.graph_def)
        meta_graph_def.meta_info_def.stripped_default_attrs = True
    if saver_def is not None:
        meta_graph_def.saver_def.MergeFrom(saver_def)
    keys = graph.get_all_collection_keys() if collection_list is None else collection_list
    for key in keys:
        add_collection_def(meta_graph_def, key, graph, export_scope)
    return meta_graph_def


# -- import --------------------------------------------------------------------------------
def _graph_def_to_import(
    meta_graph_def: MetaGraphDef, clear_devices: bool, prefix: str
) -> graph_pb2.GraphDef:
    """The meta graph's GraphDef as TF's importer takes it: no `_output_shapes` (shapes are
    inferred again), devices cleared if asked, colocation groups under the import prefix."""
    graph_def = graph_pb2.GraphDef()
    graph_def.CopyFrom(meta_graph_def.graph_def)
    for node in graph_def.node:
        if "_output_shapes" in node.attr:
            del node.attr["_output_shapes"]
        if clear_devices:
            node.device = ""
        if prefix and "_class" in node.attr:
            groups = [
                prepend_name_scope(s.decode(), prefix).encode() for s in node.attr["_class"].list.s
            ]
            del node.attr["_class"].list.s[:]
            node.attr["_class"].list.s.extend(groups)
    return graph_def


def _check_unbound_inputs(
    meta_graph_def: MetaGraphDef, col_name: str | None, input_map: dict[str, Any] | None
) -> None:
    if not col_name or col_name not in meta_graph_def.collection_def:
        return
    col_def = meta_graph_def.collection_def[col_name]
    kind = col_def.WhichOneof("kind")
    values = (
        [v.decode() if isinstance(v, bytes) else v for v in getattr(col_def, kind).value]
        if kind
        else []
    )
    if values and (not input_map or sorted(values) != sorted(input_map)):
        missing = [v for v in values if not input_map or v not in input_map]
        raise ValueError(
            f"Graph contains unbound inputs: {','.join(missing)}. Must provide these inputs "
            "through input_map."
        )


def _restore_collection(
    graph: _ops.Graph,
    key: str,
    col_def: CollectionDef,
    scope: str,
    variables: dict[bytes, Variable],
) -> None:
    """TF's per-collection import: protos through the key's from_proto (one Variable per
    VariableDef across the variable collections), node names as graph elements."""
    kind = col_def.WhichOneof("kind")
    if kind is None:
        _log.error("Cannot identify data type for collection %s. Skipping.", key)
        return
    funcs = _PROTO_FUNCTIONS.get(key)
    if key == "metric_variables":
        funcs = _PROTO_FUNCTIONS[GraphKeys.GLOBAL_VARIABLES]
    if funcs is not None and kind == "bytes_list":
        for value in col_def.bytes_list.value:
            item = variables.get(value) if key in VARIABLE_COLLECTIONS else None
            if item is None:
                proto = funcs.proto_type()
                proto.ParseFromString(value)
                item = funcs.from_proto(proto, import_scope=scope)
                if key in VARIABLE_COLLECTIONS:
                    variables[value] = item
            graph.add_to_collection(key, item)
        return
    field = getattr(col_def, kind)
    for value in field.value:
        if kind == "node_list":
            graph.add_to_collection(key, graph.as_graph_element(prepend_name_scope(value, scope)))
        elif kind == "int64_list":
            graph.add_to_collection(key, int(value))
        elif kind == "bytes_list" and scope:
            graph.add_to_collection(key, prepend_name_scope(value.decode(), scope))
        else:
            graph.add_to_collection(key, value)


def import_scoped_meta_graph_with_return_elements(
    meta_graph_or_file: Any,
    clear_devices: bool = False,
    graph: _ops.Graph | None = None,
    import_scope: str | None = None,
    input_map: dict[str, Any] | None = None,
    unbound_inputs_col_name: str | None = "unbound_inputs",
    restore_collections_predicate: Callable[[str], bool] = lambda key: True,
    return_elements: Any = None,
) -> tuple[dict[str, Variable], Any]:
    """TF's import_scoped_meta_graph_with_return_elements: the graph's nodes added to
    `graph` (under `import_scope`), its collections refilled; returns the imported global
    variables by name without the scope, and the `return_elements`."""
    if isinstance(meta_graph_or_file, MetaGraphDef):
        meta_graph_def = meta_graph_or_file
    else:
        meta_graph_def = read_meta_graph_file(meta_graph_or_file)
    _check_unbound_inputs(meta_graph_def, unbound_inputs_col_name, input_map)
    graph = graph or _ops.get_default_graph()
    with graph.as_default():
        # import_graph_def's name scope (made unique) is this same name.
        scope = graph.unique_name(import_scope or "", mark_as_used=False)
        returned = import_graph_def(
            _graph_def_to_import(meta_graph_def, clear_devices, scope),
            input_map=input_map,
            name=import_scope or scope,
            return_elements=return_elements,
        )
        # TRAINABLE_VARIABLES first, then the others by name (TF's order).
        collections = sorted(
            meta_graph_def.collection_def.items(),
            key=lambda kv: (kv[0] != GraphKeys.TRAINABLE_VARIABLES, kv[0]),
        )
        variables: dict[bytes, Variable] = {}
        for key, col_def in collections:
            if key == unbound_inputs_col_name or not restore_collections_predicate(key):
                continue
            _restore_collection(graph, key, col_def, scope, variables)
        var_list = {
            strip_name_scope(v.name, scope): v
            for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES, scope=scope)
        }
    return var_list, returned


def import_scoped_meta_graph(
    meta_graph_or_file: Any,
    clear_devices: bool = False,
    graph: _ops.Graph | None = None,
    import_scope: str | None = None,
    input_map: dict[str, Any] | None = None,
    unbound_inputs_col_name: str | None = "unbound_inputs",
    restore_collections_predicate: Callable[[str], bool] = lambda key: True,
) -> dict[str, Variable]:
    return import_scoped_meta_graph_with_return_elements(
        meta_graph_or_file,
        clear_devices,
        graph,
        import_scope,
        input_map,
        unbound_inputs_col_name,
        restore_collections_predicate,
    )[0]
