"""Client, graph building: reference variables (TF's RefVariable, tf.compat.v1's variable
when resource variables are off): a VariableV2 node whose output is a ref (float32_ref),
an `Assign` initializer, a `<name>/read` Identity snapshot that reads see, and state ops
(Assign, AssignAdd, Scatter*) that write the ref in place. Graph building: not
thread-safe."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape, as_shape
from client.ops.variables import (
    SaveSliceInfo,
    Variable,
    VariableAggregation,
    VariableSynchronization,
    _set_colocation_class,
    prepend_name_scope,
    register_ref_variable_class,
    strip_name_scope,
)
from protos import variable_pb2

GraphKeys = _ops.GraphKeys


class RefVariable(Variable):
    """TF's RefVariable: VariableV2 + "<name>/Assign" + "<name>/read"."""

    _is_resource_variable = False

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
        """TF's RefVariable._init_from_args: VariableV2, "<name>/Assign", "<name>/read"."""
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        if not isinstance(collections, (list, tuple, set)):
            raise ValueError(
                "collections argument to Variable constructor must be a list, tuple, "
                f"or set. Got {collections} of type {type(collections)}"
            )
        self._trainable = True if trainable is None else bool(trainable)
        g = _ops.get_default_graph()
        self._graph = g
        with g.control_dependencies(None), _ops.name_scope(name, "Variable", []) as scope:
            true_name = scope[:-1]
            if callable(initial_value):
                # TF's _attr_scope({"_class": loc:@<name>}): the initializer and the
                # variable join the variable's colocation group.
                first_new_op = len(g._ops)
                with _ops.name_scope("Initializer"), g.device(None):
                    init = convert_to_tensor(initial_value(), dtype=dtype, name="initial_value")
                self._variable = _variable_op(init, shape, validate_shape, true_name)
                _set_colocation_class(g._ops[first_new_op:], true_name)
            else:
                init = convert_to_tensor(initial_value, dtype=dtype, name="initial_value")
                self._variable = _variable_op(init, shape, validate_shape, true_name)
            self._initial_value = init
            if validate_shape and not init.shape.is_fully_defined():
                raise ValueError(f"initial_value must have a shape specified: {init}")
            self._initializer_op = apply_op(
                "Assign", [self._variable, init], {"validate_shape": validate_shape}, "Assign"
            )
            if caching_device is not None:
                with g.device(caching_device):
                    self._snapshot = _identity(self._variable, "read")
            else:
                with g.colocate_with(self._variable.op):
                    self._snapshot = _identity(self._variable, "read")
        cols = list(collections)
        if self._trainable and GraphKeys.TRAINABLE_VARIABLES not in cols:
            cols.append(GraphKeys.TRAINABLE_VARIABLES)
        g.add_to_collections(cols, self)

    def _init_from_proto(self, variable_def: Any, import_scope: str | None) -> None:
        """TF's RefVariable._init_from_proto: the ops named by the VariableDef, found in
        the default graph (a meta graph just imported)."""
        g = _ops.get_default_graph()

        def element(name: str) -> Any:
            return g.as_graph_element(prepend_name_scope(name, import_scope))

        self._graph = g
        self._variable = element(variable_def.variable_name)
        self._initializer_op = element(variable_def.initializer_name)
        self._initial_value = (
            element(variable_def.initial_value_name) if variable_def.initial_value_name else None
        )
        self._snapshot = element(variable_def.snapshot_name)
        self._trainable = variable_def.trainable
        self._synchronization = VariableSynchronization(variable_def.synchronization)
        self._aggregation = VariableAggregation(variable_def.aggregation)
        if variable_def.HasField("save_slice_info_def"):
            info = variable_def.save_slice_info_def
            self._save_slice_info = SaveSliceInfo(
                prepend_name_scope(info.full_name, import_scope),
                tuple(info.full_shape),
                tuple(info.var_offset),
                tuple(info.var_shape),
            )

    def to_proto(self, export_scope: str | None = None) -> variable_pb2.VariableDef | None:
        if export_scope is not None and not self._variable.name.startswith(export_scope):
            return None
        var_def = variable_pb2.VariableDef(
            variable_name=strip_name_scope(self._variable.name, export_scope),
            initializer_name=strip_name_scope(self._initializer_op.name, export_scope),
            snapshot_name=strip_name_scope(self._snapshot.name, export_scope),
            is_resource=False,
            trainable=self._trainable,
            synchronization=f"VARIABLE_SYNCHRONIZATION_{self._synchronization.name}",
            aggregation=f"VARIABLE_AGGREGATION_{self._aggregation.name}",
        )
        if self._initial_value is not None:
            var_def.initial_value_name = strip_name_scope(self._initial_value.name, export_scope)
        if self._save_slice_info is not None:
            var_def.save_slice_info_def.CopyFrom(self._save_slice_info.to_proto(export_scope))
        return var_def

    # -- properties: the VariableV2 output's (its dtype is the ref dtype, as in TF) -------
    name = property(lambda self: self._variable.name)
    dtype = property(lambda self: self._variable.dtype)
    shape = property(lambda self: self._variable.shape)
    op = property(lambda self: self._variable.op)
    device = property(lambda self: self._variable.device)
    constraint = property(lambda self: self._constraint)

    @property
    def handle(self) -> Any:
        raise AttributeError("'RefVariable' object has no attribute 'handle'")

    def get_shape(self) -> TensorShape:
        return self._variable.shape

    def set_shape(self, shape: Any) -> None:
        self._variable.set_shape(shape)
        self._snapshot.set_shape(shape)

    def _ref(self) -> Any:
        """The VariableV2 output, what ops writing the variable take."""
        return self._variable

    def _as_graph_element(self) -> Any:
        return self._variable

    def value(self) -> Any:
        return self._snapshot

    def read_value(self) -> Any:
        """A fresh Identity of the ref named "read" in the caller's scope."""
        return _identity(self._variable, "read")

    def is_initialized(self, name: str | None = None) -> Any:
        return apply_op(
            "IsVariableInitialized", [self._variable], {"dtype": self.dtype.base_dtype}, name
        ).outputs[0]

    def load(self, value: Any, session: Any = None) -> None:
        session = session or _ops.get_default_session()
        session.run(self._initializer_op, {self._initializer_op.inputs[1]: value})

    def eval(self, session: Any = None) -> Any:
        return self._variable.eval(session=session)

    def count_up_to(self, limit: int) -> Any:
        return apply_op("CountUpTo", [self._variable], {"limit": limit}).outputs[0]

    # -- updates: TF's gen_state_ops on the ref --------------------------------------------
    def _assign(
        self, op_type: str, value: Any, attrs: dict[str, Any], name: Any, read: bool
    ) -> Any:
        out = apply_op(op_type, [self._variable, value], attrs, name).outputs[0]
        return out if read else out.op

    def assign(
        self, value: Any, use_locking: Any = False, name: str | None = None, read_value: bool = True
    ) -> Any:
        return self._assign("Assign", value, {"use_locking": use_locking}, name, read_value)

    def assign_add(
        self, delta: Any, use_locking: Any = False, name: str | None = None, read_value: bool = True
    ) -> Any:
        return self._assign("AssignAdd", delta, {"use_locking": use_locking}, name, read_value)

    def assign_sub(
        self, delta: Any, use_locking: Any = False, name: str | None = None, read_value: bool = True
    ) -> Any:
        return self._assign("AssignSub", delta, {"use_locking": use_locking}, name, read_value)

    def _scatter(self, op_type: str, sparse_delta: Any, use_locking: Any, name: Any) -> Any:
        from client.framework.indexed_slices import IndexedSlices

        if not isinstance(sparse_delta, IndexedSlices):
            raise TypeError(f"sparse_delta is not IndexedSlices: {sparse_delta}")
        return apply_op(
            op_type,
            [self._variable, sparse_delta.indices, sparse_delta.values],
            {"use_locking": use_locking},
            name,
        ).outputs[0]

    def scatter_update(self, sparse_delta: Any, use_locking: Any = False, name: Any = None) -> Any:
        return self._scatter("ScatterUpdate", sparse_delta, use_locking, name)

    def scatter_add(self, sparse_delta: Any, use_locking: Any = False, name: Any = None) -> Any:
        return self._scatter("ScatterAdd", sparse_delta, use_locking, name)

    def scatter_sub(self, sparse_delta: Any, use_locking: Any = False, name: Any = None) -> Any:
        return self._scatter("ScatterSub", sparse_delta, use_locking, name)

    def scatter_mul(self, sparse_delta: Any, use_locking: Any = False, name: Any = None) -> Any:
        return self._scatter("ScatterMul", sparse_delta, use_locking, name)

    def scatter_div(self, sparse_delta: Any, use_locking: Any = False, name: Any = None) -> Any:
        return self._scatter("ScatterDiv", sparse_delta, use_locking, name)

    def scatter_max(self, sparse_delta: Any, use_locking: Any = False, name: Any = None) -> Any:
        return self._scatter("ScatterMax", sparse_delta, use_locking, name)

    def scatter_min(self, sparse_delta: Any, use_locking: Any = False, name: Any = None) -> Any:
        return self._scatter("ScatterMin", sparse_delta, use_locking, name)

    def _scatter_nd(self, op_type: str, indices: Any, updates: Any, name: Any) -> Any:
        # TF's RefVariable.scatter_nd_*: use_locking=True.
        return apply_op(
            op_type, [self._variable, indices, updates], {"use_locking": True}, name
        ).outputs[0]

    def scatter_nd_update(self, indices: Any, updates: Any, name: Any = None) -> Any:
        return self._scatter_nd("ScatterNdUpdate", indices, updates, name)

    def scatter_nd_add(self, indices: Any, updates: Any, name: Any = None) -> Any:
        return self._scatter_nd("ScatterNdAdd", indices, updates, name)

    def scatter_nd_sub(self, indices: Any, updates: Any, name: Any = None) -> Any:
        return self._scatter_nd("ScatterNdSub", indices, updates, name)

    def sparse_read(self, indices: Any, name: str | None = None) -> Any:
        from client.ops import array_ops

        return array_ops.gather(self._snapshot, indices, name=name)

    def __repr__(self) -> str:
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    __hash__ = object.__hash__


def _variable_op(init: Any, shape: Any, validate_shape: bool, true_name: str) -> Any:
    """TF's state_ops.variable_op_v2: the VariableV2 node named `true_name`."""
    if shape is None:
        shape = init.shape if validate_shape else TensorShape(None)
    shape = as_shape(shape)
    op = apply_op(
        "VariableV2",
        [],
        {
            "shape": shape.as_tuple(),
            "dtype": init.dtype.base_dtype,
            "container": "",
            "shared_name": "",
        },
        name=true_name + "/",
    )
    return op.outputs[0]


def _identity(ref: Any, name: str) -> Any:
    return apply_op("Identity", [ref], {}, name).outputs[0]


def is_ref(x: Any) -> bool:
    """Whether `x` (a variable or a tensor) is a reference, as TF's `dtype._is_ref_dtype`."""
    dtype = getattr(x, "dtype", None)
    return isinstance(dtype, dtypes.DType) and dtype.is_ref_dtype


# -- shape functions (TF's state_ops shape fns) ---------------------------------------------
@shape_fns._reg("VariableV2", "TemporaryVariable")
def _variable_v2(op: Any) -> list[Any]:
    return [TensorShape(shape_fns._attr(op, "shape"))]


@shape_fns._reg("Assign")
def _assign(op: Any) -> list[Any]:
    if not shape_fns._attr(op, "validate_shape"):
        return [op.inputs[1].shape]
    return [op.inputs[0].shape.merge_with(op.inputs[1].shape)]


@shape_fns._reg(
    "AssignAdd",
    "AssignSub",
    "CountUpTo",
    "ScatterUpdate",
    "ScatterAdd",
    "ScatterSub",
    "ScatterMul",
    "ScatterDiv",
    "ScatterMin",
    "ScatterMax",
    "ScatterNdUpdate",
    "ScatterNdAdd",
    "ScatterNdSub",
    "ApplyGradientDescent",
    "ApplyProximalGradientDescent",
    "ApplyMomentum",
    "ApplyAdam",
    "ApplyAdagrad",
    "ApplyProximalAdagrad",
    "ApplyAdagradDA",
    "ApplyAdadelta",
    "ApplyRMSProp",
    "ApplyCenteredRMSProp",
    "ApplyFtrl",
    "ApplyFtrlV2",
    "SparseApplyProximalGradientDescent",
    "SparseApplyMomentum",
    "SparseApplyAdagrad",
    "SparseApplyProximalAdagrad",
    "SparseApplyAdagradDA",
    "SparseApplyAdadelta",
    "SparseApplyRMSProp",
    "SparseApplyCenteredRMSProp",
    "SparseApplyFtrl",
    "SparseApplyFtrlV2",
    "RefIdentity",
)
def _like_ref(op: Any) -> list[Any]:
    return [op.inputs[0].shape]


register_ref_variable_class(RefVariable)
