"""Client, graph building: one generic op constructor driven by the registry's OpDefs.

`apply_op(op_type, inputs, attrs, name)` is TensorFlow's op_def_library.apply_op: it
converts inputs to Tensors, infers type attrs (T, N, Tlist) from them, fills defaults,
names the op under the current name scope, applies device/colocation/control-dependency
scopes and the control-flow context, then runs the op's shape function. Errors read as
TF's (TypeError for dtype mismatches, ValueError for shape errors).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np

from client.framework import dtypes as _dtypes
from client.framework import ops as _ops
from client.framework.tensor_shape import TensorShape
from common import attr_value as _attr_value
from common import tensor as _tensor
from common.dtypes import DataType
from common.dtypes import is_ref as _dt_is_ref
from common.errors import OpError
from common.graph.graph_def_util import summarize_node_def
from common.ops import op_def_util, registry

Tensor = _ops.Tensor
Operation = _ops.Operation

# How a list or tuple that holds tensors becomes one tensor (a Pack). array_ops registers it
# when it is imported, as TF's array_ops registers its autopacking conversion function, so
# this module does not import the ops built on it.
_autopack: Callable[..., Tensor] | None = None


def register_autopack(fn: Callable[..., Tensor]) -> None:
    """Sets `fn(values, dtype=, name=)` as the packer of nested lists holding tensors."""
    global _autopack
    _autopack = fn


# -- conversion ---------------------------------------------------------------------------
def convert_to_tensor(
    value: Any, dtype: Any = None, name: str | None = None, preferred_dtype: Any = None
) -> Tensor:
    """TF's convert_to_tensor: Tensors pass through (dtype-checked), Variables read,
    Python and numpy values become Const ops."""
    if isinstance(value, Tensor):
        if dtype is not None and not _dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError(
                f"Tensor conversion requested dtype {_dtypes.as_dtype(dtype).name} for Tensor "
                f"with dtype {value.dtype.name}: {value!r}"
            )
        return value
    for base_type, fn in _ops._tensor_conversion_functions:
        if isinstance(value, base_type):
            return fn(value, dtype=dtype, name=name)
    if isinstance(value, Operation):
        raise TypeError(f"Can't convert Operation '{value.name}' to Tensor")
    if isinstance(value, (list, tuple)) and any(_is_tensor_like(v) for v in _flatten(value)):
        if _autopack is None:
            raise TypeError("a list holding tensors needs client.ops.array_ops imported")
        return _autopack(value, dtype=dtype, name=name or "packed")
    if dtype is None and preferred_dtype is not None:
        try:
            return constant(value, dtype=preferred_dtype, name=name or "Const", _strict=True)
        except (TypeError, ValueError):
            pass
    return constant(value, dtype=dtype, name=name or "Const", _strict=True)


def _flatten(v: Any) -> list[Any]:
    if isinstance(v, (list, tuple)):
        return [y for x in v for y in _flatten(x)]
    return [v]


def _is_tensor_like(v: Any) -> bool:
    return isinstance(v, Tensor) or any(
        isinstance(v, t) for t, _ in _ops._tensor_conversion_functions
    )


def _numpy_value(value: Any, dtype: _dtypes.DType | None, strict: bool) -> np.ndarray:
    if dtype is None:
        if isinstance(value, (np.ndarray, np.generic)):
            return (
                np.asarray(value)
                if np.asarray(value).dtype.kind not in "SU"
                else np.asarray(value, object)
            )
        return _tensor._python_array(value, None)
    if dtype.base_dtype in (_dtypes.string,):
        return np.asarray(value, dtype=object)
    arr = np.asarray(value)
    want = np.dtype(dtype.as_numpy_dtype)
    if (
        strict
        and arr.dtype.kind == "f"
        and want.kind in "iub"
        and not isinstance(value, np.ndarray)
        and not np.all(np.equal(np.mod(arr, 1), 0))
    ):
        raise TypeError(
            f"Expected {dtype.name}, but got {value!r} of type '{type(value).__name__}'."
        )
    if strict and arr.dtype.kind in "SUO" and want.kind not in "SUO":
        raise TypeError(
            f"Expected {dtype.name}, but got {value!r} of type '{type(value).__name__}'."
        )
    return arr.astype(want)


def constant(
    value: Any, dtype: Any = None, shape: Any = None, name: str = "Const", _strict: bool = False
) -> Tensor:
    """tf.constant: a Const op holding `value` (broadcast to `shape` as TF does)."""
    dt = None if dtype is None else _dtypes.as_dtype(dtype)
    arr = _numpy_value(value, dt, _strict)
    if dt is None:
        dt = _dtypes.as_dtype(_tensor.infer_dtype(arr))
    if shape is not None:
        shape = [int(d) for d in shape]
        if arr.size == 1:
            arr = np.broadcast_to(arr.reshape(()), shape)
        elif arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:
            raise TypeError(
                f"Eager execution of tf.constant with unsupported shape. Tensor {value!r} "
                f"(converted from {value!r}) has {arr.size} elements, but got `shape` {shape} "
                f"with {int(np.prod(shape))} elements)."
            )
    proto = _tensor.make_tensor_proto(arr, dt.as_datatype_enum)
    op = apply_op("Const", [], {"value": proto, "dtype": dt}, name=name)
    op.outputs[0]._shape = TensorShape(arr.shape)
    op._constant_value = arr  # cached for constant folding in shape inference
    return op.outputs[0]


# -- apply_op -----------------------------------------------------------------------------
def _attr_type_from_value(v: Any) -> DataType:
    return _dtypes.as_dtype(v).base_dtype.as_datatype_enum


def _convert_inputs(
    op_def: Any, inputs: list[Any], attrs: dict[str, Any], op_type: str, name: str | None
) -> list[Tensor]:
    """Convert each input arg (a list for N/Tlist args) and infer the type attrs."""
    if len(inputs) != len(op_def.input_args):
        raise TypeError(f"{op_type} expects {len(op_def.input_args)} inputs, got {len(inputs)}")
    inferred: dict[str, DataType] = {
        k: _attr_type_from_value(v)
        for k, v in attrs.items()
        if (a := op_def.attr(k)) is not None and a.type == "type"
    }
    from_tensors: set[str] = set()
    # Pass 1: Tensors fix type attrs; pass 2: Python values convert with them.
    for arg, value in zip(op_def.input_args, inputs):
        if arg.type_attr and arg.type_attr not in inferred:
            for v in value if arg.number_attr else [value]:
                if _is_tensor_like(v):
                    # A variable's dtype without reading it: converting here would leave
                    # a stray ReadVariableOp beside the one pass 2 makes.
                    dt = v.dtype if hasattr(v, "dtype") else convert_to_tensor(v).dtype
                    inferred[arg.type_attr] = _dtypes.as_dtype(dt).base_dtype.as_datatype_enum
                    from_tensors.add(arg.type_attr)
                    break
    flat: list[Tensor] = []
    first_arg_of: dict[str, str] = {}
    for arg, value in zip(op_def.input_args, inputs):
        values = list(value) if (arg.number_attr or arg.type_list_attr) else [value]
        if arg.number_attr:
            attrs.setdefault(arg.number_attr, len(values))
        want = None
        if arg.type != DataType.DT_INVALID:
            want = arg.type
        elif arg.type_attr in inferred:
            want = inferred[arg.type_attr]
        tensors = []
        is_list = bool(arg.number_attr or arg.type_list_attr)
        for i, v in enumerate(values):
            if not is_list and _float_first(op_def, arg, v, from_tensors):
                # TF's _apply_op_helper converts an empty list as float32 first, finds the
                # type not allowed and retries with the attr's default: the float Const
                # stays in the graph ("Reshape/shape", then "Reshape/shape_1").
                constant(np.zeros([0], np.float32), name=arg.name)
                if want is None:
                    want = op_def.attr(arg.type_attr).default
            if arg.is_ref and hasattr(v, "_ref"):
                # TF converts a ref arg with as_ref=True: a ref variable's VariableV2
                # output, not its "read" snapshot.
                tensors.append(v._ref())
                continue
            try:
                t = convert_to_tensor(
                    v,
                    dtype=None if want is None or _is_tensor_like(v) else _dtypes.as_dtype(want),
                    # convert_n_to_tensor's names for a list arg: "values_0", "values_1" ...
                    name=f"{arg.name}_{i}" if is_list else arg.name,
                )
            except (TypeError, ValueError) as e:
                if want is not None and not _is_tensor_like(v):
                    raise TypeError(
                        f"Expected {_dtypes.as_dtype(want).name} passed to parameter "
                        f"'{arg.name}' of op '{op_type}', got {v!r} of type "
                        f"'{type(v).__name__}' instead. Error: {e}"
                    ) from None
                raise
            tensors.append(t)
        if arg.type_attr:
            from_tensors.add(arg.type_attr)
            for t in tensors:
                dt = t.dtype.base_dtype.as_datatype_enum
                if arg.type_attr not in inferred:
                    inferred[arg.type_attr] = dt
                if dt != inferred[arg.type_attr]:
                    other = first_arg_of.get(arg.type_attr, arg.name)
                    raise TypeError(
                        f"Input '{arg.name}' of '{op_type}' Op has type {t.dtype.name} that "
                        f"does not match type {_dtypes.as_dtype(inferred[arg.type_attr]).name} "
                        f"of argument '{other}'."
                    )
            first_arg_of.setdefault(arg.type_attr, arg.name)
        elif arg.type_list_attr:
            attrs.setdefault(arg.type_list_attr, [t.dtype.base_dtype for t in tensors])
        elif want is not None and not arg.is_ref and arg.type != DataType.DT_RESOURCE:
            for t in tensors:
                if t.dtype.base_dtype.as_datatype_enum != want:
                    raise TypeError(
                        f"Input '{arg.name}' of '{op_type}' Op has type {t.dtype.name} that "
                        f"does not match expected type of {_dtypes.as_dtype(want).name}."
                    )
        flat.extend(tensors)
    for k, v in inferred.items():
        attrs.setdefault(k, v)
    return flat


def _float_first(op_def: Any, arg: Any, value: Any, from_tensors: set[str]) -> bool:
    """Whether TF would convert `value` as float32 before the attr's default type: an
    empty Python list for a type attr no earlier input fixed, float32 not allowed."""
    if not arg.type_attr or arg.type_attr in from_tensors:
        return False
    if not isinstance(value, (list, tuple)) or len(value) != 0:
        return False
    a = op_def.attr(arg.type_attr)
    return bool(
        a is not None
        and a.has_default
        and a.allowed_values
        and DataType.DT_FLOAT not in a.allowed_values
    )


def _attr_protos(op_def: Any, attrs: dict[str, Any], op_type: str) -> dict[str, Any]:
    protos: dict[str, Any] = {}
    for k, v in attrs.items():
        if v is None:
            continue
        a = op_def.attr(k)
        if a is None:
            if k.startswith("_"):
                protos[k] = v if hasattr(v, "WhichOneof") else _attr_value.to_proto(v)
                continue
            raise TypeError(f"Op {op_type} has no attr named '{k}'")
        protos[k] = _attr_value.to_proto(_attr_python(v, a.type), a.type)
    op_def_util.add_default_attrs(op_def, protos)
    return protos


def _attr_python(v: Any, attr_type: str) -> Any:
    # As TF's _MakeType: a type attr takes a ref dtype's base (placeholder(v.dtype)).
    if isinstance(v, _dtypes.DType):
        return v.base_dtype.as_datatype_enum
    if attr_type == "type":
        return _dtypes.as_dtype(v).base_dtype.as_datatype_enum
    if attr_type == "list(type)":
        return [_dtypes.as_dtype(x).base_dtype.as_datatype_enum for x in v]
    if attr_type == "shape":
        return _shape_attr(v)
    if attr_type == "list(shape)":
        return [_shape_attr(x) for x in v]
    if attr_type == "string" and isinstance(v, bytes):
        return v
    return v


def _shape_attr(v: Any) -> Any:
    if isinstance(v, TensorShape):
        return v.as_tuple()
    return v if v is None else tuple(v)


def apply_op(
    op_type: str,
    inputs: list[Any],
    attrs: dict[str, Any] | None = None,
    name: str | None = None,
    graph: _ops.Graph | None = None,
) -> Operation:
    """Create an `op_type` node: TF's op_def_library._apply_op_helper + Graph.create_op."""
    op_def = registry.lookup_op(op_type)
    attrs = dict(attrs or {})
    g = graph or _graph_of(inputs) or _ops.get_default_graph()
    with g.as_default():
        op_name = _op_name(g, name or op_type)
        # Python inputs become Consts named after their arg, under the op's name
        # ("Less/y", "Reshape/shape"), as op_def_library does.
        # The control-flow context's AddOp runs under it too ("while/mul/Enter").
        with g.name_scope(op_name + "/"):
            flat = _convert_inputs(op_def, inputs, attrs, op_type, name)
            if g.building_function:
                flat = [t if t.graph is g else g.capture(t) for t in flat]
            for t in flat:
                if t.graph is not g:
                    raise ValueError(f"Tensor {t!r} must be from the same graph as the new op.")
            protos = _attr_protos(op_def, attrs, op_type)
            try:
                in_types, out_types = op_def_util.in_out_types(op_name, op_def, protos)
            except OpError as e:
                raise ValueError(str(e)) from None
            # As TF's _apply_op_helper: an op writing a ref input runs where the ref is.
            refs = [t.op for t, dt in zip(flat, in_types) if _dt_is_ref(dt)]
            with g.colocate_with(refs[0]) if refs else contextlib.nullcontext():
                return create_op(
                    g, op_name, op_type, op_def, flat, protos, list(out_types), list(in_types)
                )


def _op_name(g: _ops.Graph, name: str) -> str:
    if name.endswith("/"):
        return name[:-1]
    if not _ops._VALID_OP_NAME.match(name):
        raise ValueError(f"'{name}' is not a valid node name")
    return g.unique_name(name)


def _graph_of(inputs: list[Any]) -> _ops.Graph | None:
    default = _ops.get_default_graph()
    if default.building_function:
        return default  # a function being traced captures outer inputs (TF's rule)
    for v in inputs:
        for x in v if isinstance(v, (list, tuple)) else [v]:
            if isinstance(x, Tensor):
                return x.graph
            if hasattr(x, "graph") and isinstance(getattr(x, "graph", None), _ops.Graph):
                return x.graph
    return None


def create_op(
    g: _ops.Graph,
    name: str,
    op_type: str,
    op_def: Any,
    inputs: list[Tensor],
    attr_protos: dict[str, Any],
    output_types: list[Any],
    input_types: list[Any],
) -> Operation:
    """Add a fully specified node: scopes applied, control-flow context entered,
    output shapes inferred."""
    control = g._current_control_dependencies([t.op for t in inputs])
    op = Operation(
        g, name, op_type, op_def, inputs, attr_protos, output_types, input_types, control
    )
    mapped = g._gradient_override_map.get(op_type)
    if mapped is not None:
        # Recorded on the op as it is made (TF's _gradient_op_type): the override holds for
        # ops built inside gradient_override_map, wherever tf.gradients is called later.
        op._attrs["_gradient_op_type"] = _attr_value.to_proto(mapped.encode(), "string")
    op._set_device(g._apply_device_functions(op))
    if g._colocation_stack:
        groups: list[bytes] = []
        for c in g._colocation_stack:
            groups.extend(x for x in c.colocation_groups() if x not in groups)
        op._attrs["_class"] = _attr_value.to_proto(sorted(groups), "list(string)")
        # TF's rule: the innermost colocation op that has a device gives its device.
        placed = next((c.device for c in reversed(g._colocation_stack) if c.device), "")
        if placed:
            op._set_device(placed)
    ctx = g._get_control_flow_context()
    g._add_op(op)
    try:
        if ctx is not None:
            ctx.AddOp(op)
        _infer_shapes(op)
    except Exception:
        _remove_op(g, op)
        raise
    return op


def _remove_op(g: _ops.Graph, op: Operation) -> None:
    """Undo `_add_op` for a node whose construction failed (TF never adds such nodes)."""
    if g._ops and g._ops[-1] is op:
        g._ops.pop()
    g._nodes_by_name.pop(op.name, None)
    for t in op._inputs:
        if op in t._consumers:
            t._consumers.remove(op)
    for c in op._control_inputs:
        if op in c._control_outputs:
            c._control_outputs.remove(op)


def _infer_shapes(op: Operation) -> None:
    from client.framework import shape_fns

    fn = shape_fns.SHAPE_FNS.get(op.type)
    if fn is None:
        return
    try:
        shapes = fn(op)
    except shape_fns.ShapeError as e:
        summary = summarize_node_def(op.node_def)
        in_shapes = ", ".join(t.shape.debug_string() for t in op.inputs)
        raise ValueError(f"{e} for '{summary}' with input shapes: {in_shapes}.") from None
    for t, s in zip(op._outputs, shapes):
        t._shape = TensorShape(s) if not isinstance(s, TensorShape) else s
