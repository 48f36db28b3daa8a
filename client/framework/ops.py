"""Client, graph building: Graph, Operation, Tensor and the scopes that shape new ops.

TensorFlow's python/framework/ops.py in miniature: a Graph owns Operations in creation
order (append-only, so sessions can ship deltas), hands out unique names, and keeps the
name-scope, device, control-dependency, colocation and control-flow-context stacks that
`op_builder.apply_op` consults. A default-graph stack (per thread, like TF's) backs
`get_default_graph()`. Graph building is not thread-safe (as in TF); one graph per thread.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from client.framework import dtypes as _dtypes
from client.framework.tensor_shape import TensorShape, as_shape
from common import attr_value as _attr_value
from common import device_name as _device_name
from protos import graph_pb2, node_def_pb2

_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\\/>-]*$")
GRAPH_DEF_PRODUCER = 2474


class Tensor:
    """One output of an Operation: a symbolic value (TF's tf.Tensor in graph mode)."""

    __array_priority__ = 100

    def __init__(self, op: Operation, value_index: int, dtype: _dtypes.DType) -> None:
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = TensorShape(None)
        self._consumers: list[Operation] = []

    op = property(lambda self: self._op)
    value_index = property(lambda self: self._value_index)
    dtype = property(lambda self: self._dtype)
    graph = property(lambda self: self._op.graph)
    device = property(lambda self: self._op.device)

    @property
    def name(self) -> str:
        return f"{self._op.name}:{self._value_index}"

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape: Any) -> None:
        self._shape = self._shape.merge_with(as_shape(shape))

    def consumers(self) -> list[Operation]:
        return list(self._consumers)

    def eval(self, feed_dict: Any = None, session: Any = None) -> Any:
        session = session or get_default_session()
        if session is None:
            raise ValueError(
                "Cannot evaluate tensor using `eval()`: No default session is registered."
            )
        return session.run(self, feed_dict)

    def _as_node_input(self) -> str:
        return self._op.name if self._value_index == 0 else self.name

    def __repr__(self) -> str:
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    def __str__(self) -> str:
        # TF's form, device last when placed: check_ops messages embed it.
        device = f", device={self.device}" if self.device else ""
        return f'Tensor("{self.name}", shape={self._shape}, dtype={self._dtype.name}{device})'

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        raise TypeError(
            "Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` "
            "instead of `if t:` to test if a tensor is defined, and use TensorFlow ops such "
            "as tf.cond to execute subgraphs conditioned on the value of a tensor."
        )

    def __iter__(self):
        shape = self._shape
        if shape.ndims is None or shape[0] is None:
            raise TypeError("Cannot iterate over a tensor with unknown first dimension.")
        for i in range(shape[0]):
            yield self[i]

    def __len__(self) -> int:
        raise TypeError(
            f"len is not well defined for a symbolic Tensor ({self.name}). Please call "
            "`x.shape` rather than `len(x)` for shape information."
        )

    if TYPE_CHECKING:
        # Installed at import by client.ops.math_ops._overload_operators (as TF's
        # math_ops does); declared here so type checkers know a Tensor's operators.
        def __add__(self, other: Any) -> Tensor: ...
        def __radd__(self, other: Any) -> Tensor: ...
        def __sub__(self, other: Any) -> Tensor: ...
        def __rsub__(self, other: Any) -> Tensor: ...
        def __mul__(self, other: Any) -> Tensor: ...
        def __rmul__(self, other: Any) -> Tensor: ...
        def __truediv__(self, other: Any) -> Tensor: ...
        def __rtruediv__(self, other: Any) -> Tensor: ...
        def __floordiv__(self, other: Any) -> Tensor: ...
        def __rfloordiv__(self, other: Any) -> Tensor: ...
        def __mod__(self, other: Any) -> Tensor: ...
        def __rmod__(self, other: Any) -> Tensor: ...
        def __pow__(self, other: Any) -> Tensor: ...
        def __rpow__(self, other: Any) -> Tensor: ...
        def __matmul__(self, other: Any) -> Tensor: ...
        def __rmatmul__(self, other: Any) -> Tensor: ...
        def __and__(self, other: Any) -> Tensor: ...
        def __rand__(self, other: Any) -> Tensor: ...
        def __or__(self, other: Any) -> Tensor: ...
        def __ror__(self, other: Any) -> Tensor: ...
        def __xor__(self, other: Any) -> Tensor: ...
        def __rxor__(self, other: Any) -> Tensor: ...
        def __lt__(self, other: Any) -> Tensor: ...
        def __le__(self, other: Any) -> Tensor: ...
        def __gt__(self, other: Any) -> Tensor: ...
        def __ge__(self, other: Any) -> Tensor: ...
        def __neg__(self) -> Tensor: ...
        def __abs__(self) -> Tensor: ...
        def __invert__(self) -> Tensor: ...
        def __getitem__(self, key: Any) -> Tensor: ...


class Operation:
    """A node in the Graph: op type, inputs, attrs (AttrValue protos), device."""

    def __init__(
        self,
        graph: Graph,
        name: str,
        op_type: str,
        op_def: Any,
        inputs: list[Tensor],
        attrs: dict[str, Any],
        output_types: list[Any],
        input_types: list[Any],
        control_inputs: Sequence[Operation] = (),
        device: str = "",
    ) -> None:
        self._graph = graph
        self._name = name
        self._type = op_type
        self.op_def = op_def
        self._inputs = list(inputs)
        self._input_types = [_dtypes.as_dtype(t) for t in input_types]
        self._attrs = attrs  # name -> AttrValue proto
        self._control_inputs: list[Operation] = []
        self._control_outputs: list[Operation] = []
        self._device = device
        # A Const's value as numpy, decoded once by shape inference (shape_fns).
        self._constant_value: Any = None
        self._outputs = [Tensor(self, i, _dtypes.as_dtype(t)) for i, t in enumerate(output_types)]
        self._control_flow_context = graph._get_control_flow_context()
        self._id = len(graph._ops)
        for t in self._inputs:
            t._consumers.append(self)
        for c in control_inputs:
            self._add_control_input(c)

    name = property(lambda self: self._name)
    type = property(lambda self: self._type)
    graph = property(lambda self: self._graph)
    device = property(lambda self: self._device)
    outputs = property(lambda self: list(self._outputs))
    control_inputs = property(lambda self: list(self._control_inputs))

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        return tuple(self._inputs)

    def values(self) -> tuple[Tensor, ...]:
        return tuple(self._outputs)

    def _set_device(self, device: str) -> None:
        self._device = device

    def _add_control_input(self, op: Operation) -> None:
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            op._control_outputs.append(self)

    def _add_control_inputs(self, ops: Any) -> None:
        for op in ops:
            self._add_control_input(op)

    def _update_input(self, index: int, tensor: Tensor) -> None:
        old = self._inputs[index]
        if self in old._consumers:
            old._consumers.remove(self)
        self._inputs[index] = tensor
        tensor._consumers.append(self)

    def _add_input(self, tensor: Tensor) -> None:
        self._inputs.append(tensor)
        self._input_types.append(tensor.dtype)
        tensor._consumers.append(self)

    def _get_control_flow_context(self) -> Any:
        return self._control_flow_context

    def _set_control_flow_context(self, ctx: Any) -> None:
        self._control_flow_context = ctx

    def get_attr(self, name: str) -> Any:
        if name not in self._attrs:
            raise ValueError(f"Operation '{self._name}' has no attr named '{name}'.")
        value = _attr_value.to_python(self._attrs[name])
        return _present_attr(value)

    def _set_attr(self, name: str, value_proto: Any) -> None:
        self._attrs[name] = value_proto

    def colocation_groups(self) -> list[bytes]:
        if "_class" in self._attrs:
            got = [c for c in self._attrs["_class"].list.s if c.startswith(b"loc:@")]
            if got:
                return got
        return [f"loc:@{self._name}".encode()]

    @property
    def node_def(self) -> node_def_pb2.NodeDef:
        nd = node_def_pb2.NodeDef(name=self._name, op=self._type, device=self._device)
        nd.input.extend(t._as_node_input() for t in self._inputs)
        # TF's GraphDef lists control inputs sorted by name (graph.cc's ToGraphDef).
        nd.input.extend(sorted("^" + c.name for c in self._control_inputs))
        for k, v in self._attrs.items():
            nd.attr[k].CopyFrom(v)
        return nd

    def run(self, feed_dict: Any = None, session: Any = None) -> None:
        (session or get_default_session()).run(self, feed_dict)

    def __repr__(self) -> str:
        return f"<tf.Operation '{self._name}' type={self._type}>"

    def __str__(self) -> str:
        return str(self.node_def)


def _present_attr(value: Any) -> Any:
    from common.dtypes import DataType

    if isinstance(value, DataType):
        return _dtypes.as_dtype(value)
    if isinstance(value, list):
        return [_present_attr(v) for v in value]
    if isinstance(value, str):
        return value.encode()
    return value


class Graph:
    """A dataflow graph under construction (TensorFlow's tf.Graph)."""

    # True for client.framework.function.FuncGraph: apply_op then builds into it and
    # captures outer tensors (TF's Graph.building_function).
    building_function = False

    def __init__(self) -> None:
        self._ops: list[Operation] = []
        self._nodes_by_name: dict[str, Operation] = {}
        self._names_in_use: dict[str, int] = {}
        self._name_stack = ""
        self._device_stack: list[Any] = []
        # (control inputs, ops created under them) per control_dependencies scope.
        self._control_dependencies_stack: list[tuple[list[Operation], set[Operation]]] = []
        self._colocation_stack: list[Operation] = []
        self._control_flow_context: Any = None
        self._collections: dict[str, list[Any]] = {}
        # Owned by client.ops.variable_scope: get_variable's store and the scope stack.
        self._variable_store: dict[str, Any] = {}
        self._variable_scope_stack: list[Any] = []
        self._finalized = False
        self._seed: int | None = None
        self._version = 0
        self._gradient_override_map: dict[str, str] = {}
        # FunctionDef protos by name (the GraphDef's library), in insertion order.
        self._functions: dict[str, Any] = {}

    # -- ops ------------------------------------------------------------------------------
    def _add_op(self, op: Operation) -> None:
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        if op.name in self._nodes_by_name:
            raise ValueError(f"Duplicate node name in graph: '{op.name}'")
        self._ops.append(op)
        self._nodes_by_name[op.name] = op
        for _, seen in self._control_dependencies_stack:
            seen.add(op)

    def get_operations(self) -> list[Operation]:
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not {type(name).__name__}.")
        op = self._nodes_by_name.get(name)
        if op is None:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.")
        return op

    def get_tensor_by_name(self, name: str) -> Tensor:
        if ":" not in name:
            raise ValueError(
                f"The name '{name}' looks a like an Operation name, not a Tensor. Tensor "
                'names must be of the form "<op_name>:<output_index>".'
            )
        op_name, idx = name.rsplit(":", 1)
        op = self._nodes_by_name.get(op_name)
        if op is None:
            raise KeyError(
                f"The name '{name}' refers to a Tensor which does not exist. The operation, "
                f"'{op_name}', does not exist in the graph."
            )
        i = int(idx)
        if i >= len(op._outputs):
            raise KeyError(
                f"The name '{name}' refers to a Tensor which does not exist. The operation, "
                f"'{op_name}', exists but only has {len(op._outputs)} outputs."
            )
        return op._outputs[i]

    def as_graph_element(
        self, obj: Any, allow_tensor: bool = True, allow_operation: bool = True
    ) -> Any:
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj} is not an element of this graph.")
            return obj
        if hasattr(obj, "_as_graph_element"):
            return self.as_graph_element(obj._as_graph_element(), allow_tensor, allow_operation)
        if isinstance(obj, str):
            if ":" in obj and allow_tensor:
                return self.get_tensor_by_name(obj)
            if allow_operation:
                return self.get_operation_by_name(obj)
            raise ValueError(f"Name '{obj}' appears to refer to an Operation, not a Tensor.")
        raise TypeError(f"Can not convert a {type(obj).__name__} into a Tensor or Operation.")

    @property
    def version(self) -> int:
        return len(self._ops)

    @property
    def finalized(self) -> bool:
        return self._finalized

    def finalize(self) -> None:
        self._finalized = True

    @property
    def seed(self) -> int | None:
        return self._seed

    @seed.setter
    def seed(self, value: int | None) -> None:
        self._seed = value

    # -- names ----------------------------------------------------------------------------
    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """TF's Graph.unique_name: "add", "add_1", ... under the current name scope."""
        if self._name_stack:
            name = self._name_stack + "/" + name
        name_key = name.lower()
        i = self._names_in_use.get(name_key, 0)
        if mark_as_used:
            self._names_in_use[name_key] = i + 1
        if i > 0:
            base_name_key = name_key
            while name_key in self._names_in_use:
                name_key = f"{base_name_key}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[name_key] = 1
            name = f"{name}_{i - 1}"
        return name

    def get_name_scope(self) -> str:
        return self._name_stack

    @contextlib.contextmanager
    def name_scope(self, name: str | None) -> Iterator[str]:
        if name:
            if self._name_stack:
                if not _VALID_SCOPE_NAME.match(name):
                    raise ValueError(f"'{name}' is not a valid scope name")
            elif not _VALID_OP_NAME.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
        old = self._name_stack
        if not name:
            new, returned = "", ""
        elif name[-1] == "/":
            new, returned = name[:-1], name
        else:
            new = self.unique_name(name)
            returned = new + "/"
        self._name_stack = new
        try:
            yield returned
        finally:
            self._name_stack = old

    # -- devices --------------------------------------------------------------------------
    @contextlib.contextmanager
    def device(self, device_name_or_function: Any) -> Iterator[None]:
        self._device_stack.append(device_name_or_function)
        try:
            yield
        finally:
            self._device_stack.pop()

    def _apply_device_functions(self, op: Operation) -> str:
        """TF's order: innermost scope first, down to a `device(None)`. A device string
        fills only the parts still unset; a device function sees the op with the device
        so far (op.device) and its result replaces it (replica_device_setter merges)."""
        device = ""
        for spec in reversed(self._device_stack):
            if spec is None:
                break
            if callable(spec):
                op._set_device(device)
                device = _merge_device(str(spec(op) or ""), "")
            else:
                device = (
                    _merge_device(device, str(spec)) if device else _merge_device(str(spec), "")
                )
        return device

    # -- control dependencies -------------------------------------------------------------
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs: Any) -> Iterator[None]:
        if control_inputs is None:
            saved = self._control_dependencies_stack
            self._control_dependencies_stack = []
            saved_ctx = self._control_flow_context
            self._control_flow_context = None
            try:
                yield
            finally:
                self._control_dependencies_stack = saved
                self._control_flow_context = saved_ctx
            return
        ops: list[Operation] = []
        current = {c for frame, _ in self._control_dependencies_stack for c in frame}
        for c in control_inputs:
            if hasattr(c, "_as_graph_element") and not isinstance(c, (Tensor, Operation)):
                c = c._as_graph_element()
            if isinstance(c, Tensor):
                c = c.op
            if not isinstance(c, Operation):
                raise TypeError(f"Control input must be Operation or Tensor: {c}")
            if c not in current:  # TF drops inputs an enclosing scope already adds
                ops.append(c)
                current.add(c)
        self._control_dependencies_stack.append((ops, set()))
        try:
            yield
        finally:
            self._control_dependencies_stack.pop()

    def _current_control_dependencies(self, input_ops: list[Operation]) -> list[Operation]:
        """TF's rule: a scope adds nothing to an op with an input created inside that
        scope (the input already carries the dependency), nor inputs it already has."""
        out: list[Operation] = []
        for frame, seen in self._control_dependencies_stack:
            if any(op in seen for op in input_ops):
                continue
            out.extend(op for op in frame if op not in input_ops and op not in out)
        return out

    # -- colocation -----------------------------------------------------------------------
    @contextlib.contextmanager
    def colocate_with(self, op: Any, ignore_existing: bool = False) -> Iterator[None]:
        # As TF's: colocation is stronger than device scopes, so the device stack is
        # empty inside (an op colocated with a ps variable does not take the worker
        # device of an enclosing tf.device); it comes back on exit.
        saved_devices = self._device_stack
        self._device_stack = []
        try:
            with self._colocation_scope(op, ignore_existing):
                yield
        finally:
            self._device_stack = saved_devices

    @contextlib.contextmanager
    def _colocation_scope(self, op: Any, ignore_existing: bool) -> Iterator[None]:
        if op is None:
            saved = self._colocation_stack
            self._colocation_stack = []
            try:
                yield
            finally:
                self._colocation_stack = saved
            return
        if isinstance(getattr(op, "handle", None), Tensor) and not isinstance(op, Tensor):
            op = op.handle  # TF's _op_to_colocate_with: a resource variable's handle op
        elif hasattr(op, "_as_graph_element") and not isinstance(op, (Tensor, Operation)):
            op = op._as_graph_element()
        if isinstance(op, Tensor):
            op = op.op
        saved = self._colocation_stack
        if ignore_existing:
            self._colocation_stack = []
        self._colocation_stack = self._colocation_stack + [op]
        try:
            yield
        finally:
            self._colocation_stack = saved

    # -- control flow ---------------------------------------------------------------------
    def _get_control_flow_context(self) -> Any:
        return self._control_flow_context

    def _set_control_flow_context(self, ctx: Any) -> None:
        self._control_flow_context = ctx

    # -- collections ----------------------------------------------------------------------
    def add_to_collection(self, name: str, value: Any) -> None:
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names: Any, value: Any) -> None:
        for n in [names] if isinstance(names, str) else names:
            self.add_to_collection(n, value)

    def get_collection(self, name: str, scope: str | None = None) -> list[Any]:
        items = self._collections.get(name, [])
        if scope is None:
            return list(items)
        pat = re.compile(scope)
        return [x for x in items if hasattr(x, "name") and pat.match(x.name)]

    def get_collection_ref(self, name: str) -> list[Any]:
        return self._collections.setdefault(name, [])

    def get_all_collection_keys(self) -> list[str]:
        return list(self._collections)

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map: dict[str, str]) -> Iterator[None]:
        saved = dict(self._gradient_override_map)
        self._gradient_override_map.update(op_type_map)
        try:
            yield
        finally:
            self._gradient_override_map = saved

    # -- function library -----------------------------------------------------------------
    def _add_function(self, fdef: Any) -> None:
        """Add a FunctionDef to the library (TF's Graph._add_function); the same name
        twice must be the same function."""
        name = fdef.signature.name
        existing = self._functions.get(name)
        if existing is not None:
            if existing.SerializeToString(deterministic=True) != fdef.SerializeToString(
                deterministic=True
            ):
                raise ValueError(f"Cannot add function '{name}': another function has that name.")
            return
        self._functions[name] = fdef

    def _get_function(self, name: str) -> Any:
        return self._functions.get(name)

    def capture(self, tensor: Tensor) -> Tensor:
        """A tensor of another graph used here: only function graphs capture."""
        raise ValueError(f"Tensor {tensor!r} must be from the same graph as the new op.")

    # -- serialization --------------------------------------------------------------------
    def as_graph_def(
        self, from_version: int | None = None, add_shapes: bool = False
    ) -> graph_pb2.GraphDef:
        gd = graph_pb2.GraphDef()
        gd.versions.producer = GRAPH_DEF_PRODUCER
        for op in self._ops[from_version or 0 :]:
            nd = gd.node.add()
            nd.CopyFrom(op.node_def)
            if add_shapes:
                shapes = _attr_value.to_proto(
                    [t.shape.as_tuple() for t in op.outputs], "list(shape)"
                )
                nd.attr["_output_shapes"].CopyFrom(shapes)
        # The whole library each time, as TF's ToGraphDefSubRange: a delta for
        # ExtendSession carries every function its nodes may call.
        for fdef in self._functions.values():
            gd.library.function.add().CopyFrom(fdef)
        return gd

    # -- default graph --------------------------------------------------------------------
    def as_default(self) -> contextlib.AbstractContextManager[Graph]:
        return _default_graph_stack.get_controller(self)


def _merge_device(spec: str, outer: str) -> str:
    """TF's MergeDevice: the new spec's parts win; unset parts come from the outer scope."""
    if not spec:
        return outer
    if not outer:
        return _device_name.to_string(_device_name.parse(spec))
    merged = _device_name.merge_unset(_device_name.parse(spec), _device_name.parse(outer))
    return _device_name.to_string(merged)


class _DefaultGraphStack(threading.local):
    def __init__(self) -> None:
        self.stack: list[Graph] = []
        self.global_default: Graph | None = None

    def get_default(self) -> Graph:
        if self.stack:
            return self.stack[-1]
        if _GLOBAL.graph is None:
            _GLOBAL.graph = Graph()
        return _GLOBAL.graph

    @contextlib.contextmanager
    def get_controller(self, graph: Graph) -> Iterator[Graph]:
        self.stack.append(graph)
        try:
            yield graph
        finally:
            self.stack.pop()


class _Global:
    graph: Graph | None = None


_GLOBAL = _Global()
_default_graph_stack = _DefaultGraphStack()
# The default-session stack (tf.compat.v1.get_default_session), per thread as the graphs'.
_default_session_stack = threading.local()


def get_default_session() -> Any:
    stack = getattr(_default_session_stack, "stack", [])
    return stack[-1] if stack else None


@contextlib.contextmanager
def default_session(sess: Any) -> Iterator[Any]:
    """Make `sess` this thread's default session (Session.as_default)."""
    stack = getattr(_default_session_stack, "stack", None)
    if stack is None:
        stack = _default_session_stack.stack = []
    stack.append(sess)
    try:
        yield sess
    finally:
        stack.remove(sess)


def get_default_graph() -> Graph:
    return _default_graph_stack.get_default()


def reset_default_graph() -> None:
    if _default_graph_stack.stack:
        raise AssertionError(
            "Do not use tf.reset_default_graph() to clear nested graphs. If you need a "
            "cleared graph, exit the nesting and create a new graph."
        )
    _GLOBAL.graph = Graph()


@contextlib.contextmanager
def name_scope(
    name: str | None, default_name: str | None = None, values: Any = None
) -> Iterator[str]:
    """tf.compat.v1.name_scope(name, default_name, values)."""
    n = default_name if name is None else name
    g = _graph_from_values(values)
    if n is None and default_name is None:
        n = ""
    with g.name_scope(n) as scope:
        yield scope


def _graph_from_values(values: Any) -> Graph:
    for v in values or ():
        if isinstance(v, (Tensor, Operation)):
            return v.graph
        if hasattr(v, "graph") and isinstance(v.graph, Graph):
            return v.graph
    return get_default_graph()


def device(device_name_or_function: Any) -> contextlib.AbstractContextManager[None]:
    return get_default_graph().device(device_name_or_function)


def control_dependencies(control_inputs: Any) -> contextlib.AbstractContextManager[None]:
    return get_default_graph().control_dependencies(control_inputs)


def colocate_with(
    op: Any, ignore_existing: bool = False
) -> contextlib.AbstractContextManager[None]:
    return get_default_graph().colocate_with(op, ignore_existing)


def get_collection(key: str, scope: str | None = None) -> list[Any]:
    return get_default_graph().get_collection(key, scope)


def add_to_collection(name: str, value: Any) -> None:
    get_default_graph().add_to_collection(name, value)


def get_collection_ref(key: str) -> list[Any]:
    return get_default_graph().get_collection_ref(key)


class GraphKeys:
    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    GLOBAL_STEP = "global_step"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    METRIC_VARIABLES = "metric_variables"
    TRAIN_OP = "train_op"
    SUMMARIES = "summaries"
    MODEL_VARIABLES = "model_variables"
    QUEUE_RUNNERS = "queue_runners"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    SUMMARY_OP = "summary_op"
    TABLE_INITIALIZERS = "table_initializer"
    SAVEABLE_OBJECTS = "saveable_objects"


_tensor_conversion_functions: list[tuple[type, Callable[..., Any]]] = []


def register_tensor_conversion_function(
    base_type: type, conversion_func: Callable[..., Any], priority: int = 100
) -> None:
    _tensor_conversion_functions.append((base_type, conversion_func))
