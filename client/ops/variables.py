"""Client, graph building: resource variables (tf.Variable as TF2's compat.v1 builds them:
VarHandleOp / AssignVariableOp / ReadVariableOp), initializers and the variable
collections."""

from __future__ import annotations

import dataclasses
import enum
import re
from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape, as_shape
from client.ops import resource_variables_toggle
from common import attr_value as _attr_value
from protos import variable_pb2

GraphKeys = _ops.GraphKeys


class VariableSynchronization(enum.IntEnum):
    """tf.VariableSynchronization (variable.proto's values)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.IntEnum):
    """tf.VariableAggregation (variable.proto's values)."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


@dataclasses.dataclass(frozen=True)
class SaveSliceInfo:
    """TF's Variable.SaveSliceInfo: this variable is the slice at `var_offset` (shape
    `var_shape`) of the `full_shape` variable `full_name` (a PartitionedVariable's shard)."""

    full_name: str
    full_shape: tuple[int, ...]
    var_offset: tuple[int, ...]
    var_shape: tuple[int, ...]

    @property
    def spec(self) -> str:
        """The checkpoint's shape-and-slice spec, e.g. "10 4 0,5:0,4"."""
        full = " ".join(str(d) for d in self.full_shape)
        extents = ":".join(f"{o},{n}" for o, n in zip(self.var_offset, self.var_shape))
        return f"{full} {extents}"

    def to_proto(self, export_scope: str | None = None) -> variable_pb2.SaveSliceInfoDef:
        return variable_pb2.SaveSliceInfoDef(
            full_name=strip_name_scope(self.full_name, export_scope),
            full_shape=self.full_shape,
            var_offset=self.var_offset,
            var_shape=self.var_shape,
        )


_REF_VARIABLE_CLASS: list[type] = []  # client.ops.ref_variable registers RefVariable


def register_ref_variable_class(cls: type) -> None:
    _REF_VARIABLE_CLASS[:] = [cls]


def _ref_variable_class() -> type:
    if not _REF_VARIABLE_CLASS:  # imported by client.ops.variable_scope and client
        raise RuntimeError("reference variables need client.ops.ref_variable imported")
    return _REF_VARIABLE_CLASS[0]


class Variable:
    """A resource variable: a VarHandleOp, an initializer (AssignVariableOp) and reads."""

    _is_resource_variable = True  # math_ops.cast passes a same-dtype variable through
    _save_slice_info: SaveSliceInfo | None = None  # set on a PartitionedVariable's shards

    def __new__(cls, *args: Any, **kwargs: Any) -> Variable:
        """TF's default_variable_creator: tf.Variable(...) is a RefVariable when resource
        variables are off (the argument, the variable scope's, the process-wide switch)
        or when it comes from a reference variable's VariableDef."""
        if cls is Variable:
            variable_def = kwargs.get("variable_def", args[6] if len(args) > 6 else None)
            explicit = kwargs.get("use_resource", args[11] if len(args) > 11 else None)
            if variable_def is not None:
                is_ref = not variable_def.is_resource
            else:
                is_ref = not resource_variables_toggle.use_resource(explicit)
            if is_ref:
                return object.__new__(_ref_variable_class())
        return object.__new__(cls)

    def __init__(
        self,
        initial_value: Any = None,
        trainable: bool | None = None,
        collections: Any = None,
        validate_shape: bool = True,
        caching_device: Any = None,
        name: str | None = None,
        variable_def: Any = None,
        dtype: Any = None,
        expected_shape: Any = None,
        import_scope: Any = None,
        constraint: Any = None,
        use_resource: Any = None,
        synchronization: Any = None,
        aggregation: Any = None,
        shape: Any = None,
    ) -> None:
        """tf.Variable's constructor, shared with RefVariable: the variable is restored
        from `variable_def` (`_init_from_proto`) or built from `initial_value`
        (`_init_from_args`), each class's own, as in TensorFlow."""
        self._synchronization = VariableSynchronization(synchronization or 0)
        self._aggregation = VariableAggregation(aggregation or 0)
        self._initial_value: Any = None
        self._validate_shape = validate_shape
        self._constraint = constraint
        self._caching_device = caching_device
        if variable_def is not None:
            if initial_value is not None:
                raise ValueError("variable_def and initial_value are mutually exclusive.")
            self._init_from_proto(variable_def, import_scope)
            return
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        self._init_from_args(
            initial_value,
            trainable,
            collections,
            validate_shape,
            caching_device,
            name,
            dtype,
            shape,
        )

    def _init_from_args(
        self,
        initial_value: Any,
        trainable: bool | None,
        collections: Any,
        validate_shape: bool,
        caching_device: Any,
        name: str | None,
        dtype: Any,
        shape: Any,
    ) -> None:
        """TF's ResourceVariable._init_from_args: VarHandleOp, its initializer, reads."""
        trainable = True if trainable is None else trainable
        g = _ops.get_default_graph()
        self._graph = g
        self._trainable = trainable
        with g.control_dependencies(None), _ops.name_scope(name, "Variable", []) as scope:
            handle_name = scope[:-1]
            first_new_op = len(g._ops)
            # TF builds the initializer under device(None): it runs where the variable
            # is, by colocation (the "_class" set below), not by the device scope.
            with _ops.name_scope("Initializer"), g.device(None):
                init = initial_value() if callable(initial_value) else initial_value
                init = convert_to_tensor(init, dtype=dtype, name="initial_value")
            self._initial_value = init
            self._dtype = init.dtype.base_dtype
            self._shape = (
                as_shape(shape)
                if shape is not None
                else (init.shape if validate_shape else TensorShape(None))
            )
            # No colocation reset: a slot made under colocate_with(primary) gets the
            # primary's device and "loc:@primary" group, as TF's slot variables do.
            handle_op = apply_op(
                "VarHandleOp",
                [],
                {
                    "dtype": self._dtype,
                    "shape": self._shape.as_tuple(),
                    "shared_name": handle_name,
                    "container": "",
                    "allowed_devices": [],
                },
                name=handle_name + "/",
            )
            self._handle = handle_op.outputs[0]
            self._handle._handle_shape = self._shape
            self._handle._handle_dtype = self._dtype
            _set_colocation_class(g._ops[first_new_op:], handle_name)
            # As TF's ResourceVariable: IsInitialized takes the scope's device (the placer
            # moves a resource's consumer to the resource), Assign and Read the handle's.
            with _ops.name_scope("IsInitialized"):
                self._is_initialized_op = apply_op("VarIsInitializedOp", [self._handle]).outputs[0]
            # TF's initializer assign leaves validate_shape at its default (false);
            # assign() sets it.
            with g.colocate_with(None, ignore_existing=True), g.device(handle_op.device):
                self._initializer_op = apply_op(
                    "AssignVariableOp", [self._handle, init], {}, name="Assign"
                )
            # A caching device (dynamic_rnn sets one) reads the variable once per step,
            # outside any loop: uses see "Read/Identity", as in TF.
            self._cached_value = None
            with _ops.name_scope("Read"):
                with g.device(handle_op.device):
                    self._graph_element = apply_op(
                        "ReadVariableOp", [self._handle], {"dtype": self._dtype}
                    ).outputs[0]
                if caching_device is not None:
                    with g.colocate_with(None, ignore_existing=True), g.device(caching_device):
                        self._cached_value = apply_op(
                            "Identity", [self._graph_element], {}
                        ).outputs[0]
        cols = list(collections) if collections is not None else [GraphKeys.GLOBAL_VARIABLES]
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in cols:
            cols.append(GraphKeys.TRAINABLE_VARIABLES)
        g.add_to_collections(cols, self)

    def _init_from_proto(self, variable_def: Any, import_scope: str | None) -> None:
        """TF's ResourceVariable._init_from_proto: the variable's ops, found by name in the
        default graph (a meta graph just imported); no op is added, no collection."""
        if not variable_def.is_resource:
            raise ValueError(
                "Trying to restore a TF 1.x Reference Variable as a resource variable. This "
                f"is unsupported. Got variable_def={variable_def}"
            )
        g = _ops.get_default_graph()

        def element(name: str, allow_operation: bool = True) -> Any:
            return g.as_graph_element(
                prepend_name_scope(name, import_scope), allow_operation=allow_operation
            )

        self._graph = g
        self._handle = element(variable_def.variable_name, allow_operation=False)
        self._dtype = dtypes.as_dtype(self._handle.op.get_attr("dtype"))
        self._shape = as_shape(self._handle.op.get_attr("shape"))
        self._handle._handle_shape = self._shape
        self._handle._handle_dtype = self._dtype
        self._initializer_op = element(variable_def.initializer_name)
        # None for a VariableDef without one (written before TF 1.x had the field).
        self._initial_value = (
            element(variable_def.initial_value_name) if variable_def.initial_value_name else None
        )
        self._trainable = variable_def.trainable
        self._synchronization = VariableSynchronization(variable_def.synchronization)
        self._aggregation = VariableAggregation(variable_def.aggregation)
        if variable_def.snapshot_name:
            snapshot = element(variable_def.snapshot_name)
            while snapshot.op.type != "ReadVariableOp":
                snapshot = snapshot.op.inputs[0]
        else:
            snapshot = g.get_tensor_by_name(self._handle.op.name + "/Read/ReadVariableOp:0")
        self._graph_element = snapshot
        self._is_initialized_op = None
        if variable_def.HasField("save_slice_info_def"):
            info = variable_def.save_slice_info_def
            self._save_slice_info = SaveSliceInfo(
                prepend_name_scope(info.full_name, import_scope),
                tuple(info.full_shape),
                tuple(info.var_offset),
                tuple(info.var_shape),
            )

    def to_proto(self, export_scope: str | None = None) -> variable_pb2.VariableDef | None:
        """TF's ResourceVariable.to_proto: a VariableDef naming this variable's ops (with
        `export_scope` stripped), or None if the variable is outside `export_scope`."""
        if export_scope is not None and not self._handle.name.startswith(export_scope):
            return None
        var_def = variable_pb2.VariableDef(
            variable_name=strip_name_scope(self._handle.name, export_scope),
            initializer_name=strip_name_scope(self._initializer_op.name, export_scope),
            snapshot_name=strip_name_scope(self._graph_element.name, export_scope),
            is_resource=True,
            trainable=self._trainable,
            synchronization=f"VARIABLE_SYNCHRONIZATION_{self._synchronization.name}",
            aggregation=f"VARIABLE_AGGREGATION_{self._aggregation.name}",
        )
        if self._initial_value is not None:
            var_def.initial_value_name = strip_name_scope(self._initial_value.name, export_scope)
        if self._save_slice_info is not None:
            var_def.save_slice_info_def.CopyFrom(self._save_slice_info.to_proto(export_scope))
        return var_def

    @staticmethod
    def from_proto(variable_def: Any, import_scope: str | None = None) -> Variable:
        # A reference variable's VariableDef makes a RefVariable (Variable.__new__).
        return Variable(variable_def=variable_def, import_scope=import_scope)

    # -- properties -----------------------------------------------------------------------
    name = property(lambda self: self._handle.name)
    dtype = property(lambda self: self._dtype)
    shape = property(lambda self: self._shape)
    handle = property(lambda self: self._handle)
    op = property(lambda self: self._handle.op)
    graph = property(lambda self: self._graph)
    device = property(lambda self: self._handle.device)
    initializer = property(lambda self: self._initializer_op)
    initial_value = property(lambda self: self._initial_value)
    trainable = property(lambda self: self._trainable)
    synchronization = property(lambda self: self._synchronization)
    aggregation = property(lambda self: self._aggregation)

    def get_shape(self) -> TensorShape:
        return self._shape

    def _set_save_slice_info(self, save_slice_info: SaveSliceInfo) -> None:
        self._save_slice_info = save_slice_info

    def _get_save_slice_info(self) -> SaveSliceInfo | None:
        return self._save_slice_info

    def _as_graph_element(self) -> Any:
        return self._graph_element

    def value(self) -> Any:
        if getattr(self, "_cached_value", None) is not None:
            return self._cached_value
        # As TF's: no colocation and no device scope; the placer runs a resource's reader
        # where the resource lives, and the value travels to its consumers.
        with self._graph.colocate_with(None, ignore_existing=True):
            return self._read_variable_op()

    def _read_variable_op(self) -> Any:
        return apply_op("ReadVariableOp", [self._handle], {"dtype": self._dtype}).outputs[0]

    def read_value(self) -> Any:
        """TF's read_value: "Read/ReadVariableOp" then an Identity in the caller's scope
        and device (so the value can be placed where it is used)."""
        from client.ops import array_ops

        with _ops.name_scope("Read"):
            value = self._read_variable_op()
        return array_ops.identity(value)

    def _lazy_read(self) -> Any:
        """The read after an update (TF's _UnreadVariable's graph element): a bare
        ReadVariableOp in the caller's device and colocation scopes, no "Read" scope and
        no Identity."""
        return self._read_variable_op()

    def initialized_value(self) -> Any:
        from client.ops import control_flow_ops

        return control_flow_ops.cond(
            is_variable_initialized(self), self.read_value, lambda: self.initial_value
        )

    def is_initialized(self, name: str | None = None) -> Any:
        return apply_op("VarIsInitializedOp", [self._handle], {}, name).outputs[0]

    def load(self, value: Any, session: Any = None) -> None:
        (session or _ops.get_default_session()).run(self.initializer, {self._initial_value: value})

    def eval(self, session: Any = None) -> Any:
        return self._graph_element.eval(session=session)

    # -- updates --------------------------------------------------------------------------
    def _update(
        self, op_type: str, value: Any, use_locking: Any, name: str | None, read_value: bool
    ) -> Any:
        value = convert_to_tensor(value, dtype=self._dtype)
        attrs = {}
        if op_type == "AssignVariableOp":  # TF's assign() checks a fully defined shape
            attrs["validate_shape"] = self._validate_shape and self._shape.is_fully_defined()
        op = apply_op(op_type, [self._handle, value], attrs, name)
        if not read_value:
            return op
        with self._graph.control_dependencies([op]):
            return self._lazy_read()

    def assign(
        self, value: Any, use_locking: Any = None, name: str | None = None, read_value: bool = True
    ) -> Any:
        return self._update("AssignVariableOp", value, use_locking, name, read_value)

    def assign_add(
        self, delta: Any, use_locking: Any = None, name: str | None = None, read_value: bool = True
    ) -> Any:
        return self._update("AssignAddVariableOp", delta, use_locking, name, read_value)

    def assign_sub(
        self, delta: Any, use_locking: Any = None, name: str | None = None, read_value: bool = True
    ) -> Any:
        return self._update("AssignSubVariableOp", delta, use_locking, name, read_value)

    def sparse_read(self, indices: Any, name: str | None = None) -> Any:
        with _ops.name_scope("Gather" if name is None else name) as scope:
            return apply_op(
                "ResourceGather", [self._handle, indices], {"dtype": self._dtype}, scope
            ).outputs[0]

    def __repr__(self) -> str:
        return f"<tf.Variable '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    __hash__ = object.__hash__

    # Operators read the variable, then apply the Tensor operator.
    def _op(name: str):  # type: ignore[misc]
        def method(self: Variable, *args: Any) -> Any:
            return getattr(self.value(), name)(*args)

        return method

    _OPERATORS = (
        "__add__",
        "__radd__",
        "__sub__",
        "__rsub__",
        "__mul__",
        "__rmul__",
        "__truediv__",
        "__rtruediv__",
        "__floordiv__",
        "__rfloordiv__",
        "__mod__",
        "__rmod__",
        "__pow__",
        "__rpow__",
        "__matmul__",
        "__rmatmul__",
        "__neg__",
        "__abs__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__getitem__",
        "__and__",
        "__or__",
        "__invert__",
    )
    for _n in _OPERATORS:
        locals()[_n] = _op(_n)
    del _n, _op


def _set_colocation_class(ops: list[Any], handle_name: str) -> None:
    """TF's _attr_scope({"_class": ["loc:@<variable>"]}) around a variable's initializer
    and handle: ops not already colocated by the caller join the variable's group."""
    group = _attr_value.to_proto([f"loc:@{handle_name}".encode()], "list(string)")
    for op in ops:
        if "_class" not in op._attrs:
            op._attrs["_class"] = group


def _var_to_tensor(v: Variable, dtype: Any = None, name: str | None = None) -> Any:
    if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(v.dtype):
        raise ValueError(
            f"Incompatible type conversion requested to type '{dtypes.as_dtype(dtype).name}' "
            f"for variable of type '{v.dtype.name}' (Variable: {v!r})"
        )
    return v.value()


_ops.register_tensor_conversion_function(Variable, _var_to_tensor)
ResourceVariable = Variable


def strip_name_scope(name: str, export_scope: str | None) -> str:
    """TF's ops.strip_name_scope: `name` without a leading `export_scope/` (also after
    `^` or `loc:@`)."""
    if not export_scope:
        return name
    scope = export_scope[:-1] if export_scope.endswith("/") else export_scope
    return re.sub(r"([\^]|loc:@|^)" + re.escape(scope) + r"[\/]+(.*)", r"\1\2", name, count=1)


def prepend_name_scope(name: str, import_scope: str | None) -> str:
    """TF's ops.prepend_name_scope: `import_scope/name` (also after `^` or `loc:@`)."""
    if not import_scope:
        return name
    scope = import_scope[:-1] if import_scope.endswith("/") else import_scope
    return re.sub(r"([\^]|loc:@|^)(.*)", lambda m: f"{m.group(1)}{scope}/{m.group(2)}", name)


def global_variables(scope: str | None = None) -> list[Variable]:
    return _ops.get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def local_variables(scope: str | None = None) -> list[Variable]:
    return _ops.get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def trainable_variables(scope: str | None = None) -> list[Variable]:
    return _ops.get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


all_variables = global_variables


def variables_initializer(var_list: Any, name: str = "init") -> Any:
    from client.ops import control_flow_ops

    if var_list:
        return control_flow_ops.group(*[v.initializer for v in var_list], name=name)
    return control_flow_ops.no_op(name=name)


def global_variables_initializer() -> Any:
    return variables_initializer(global_variables())


def local_variables_initializer() -> Any:
    return variables_initializer(local_variables())


initialize_all_variables = global_variables_initializer


def is_variable_initialized(variable: Variable) -> Any:
    return variable.is_initialized()
