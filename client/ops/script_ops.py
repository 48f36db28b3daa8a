"""Client, graph building: tf.py_func, tf.numpy_function and tf.py_function (TF's
script_ops). Each registers the Python function in this process's FuncRegistry
(common/ops/py_func_ops.py) and adds one PyFunc / PyFuncStateless / EagerPyFunc node
whose `token` attr names it; the graph keeps the function alive.

As in TensorFlow, the node runs only on a task in this process (a local Session, or an
in-process `client.train.Server`): a task of another process answers InvalidArgument
"Could not find callback ...", which is TensorFlow's answer too. Outputs have unknown
shapes. TF registers no gradient for PyFunc and PyFuncStateless; EagerPyFunc's needs
eager execution, which this client does not have (tf.gradients says so naming the op).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from client.framework import dtypes as _dtypes
from client.framework import ops as _ops
from client.framework.gradient_registry import NotDifferentiable
from client.framework.op_builder import apply_op
from common.ops.py_func_ops import REGISTRY


def _keep_alive(graph: _ops.Graph, func: Callable[..., Any]) -> None:
    # The registry holds functions weakly; the outermost graph holds them for as long as
    # it lives (TF's graph._py_funcs_used_in_graph), a function body's graph included.
    while graph.building_function:
        graph = graph.outer_graph  # type: ignore[attr-defined]
    used = graph.__dict__.setdefault("_py_funcs_used_in_graph", [])
    used.append(func)


def _callable_by_weakref(func: Callable[..., Any]) -> Callable[..., Any]:
    """A plain function calling `func`: ufuncs and builtins cannot be weakly referenced
    (TF wraps every function too)."""

    def call(*args: Any) -> Any:
        return func(*args)

    return call


def _internal_py_func(
    op_type: str, func: Callable[..., Any], inp: Any, Tout: Any, name: str | None
) -> Any:
    if not callable(func):
        raise ValueError(f"Expected func to be callable, got func of type {type(func)}")
    is_list = isinstance(Tout, (list, tuple))
    out_types = [_dtypes.as_dtype(t) for t in (Tout if is_list else [Tout])]
    inputs = list(inp) if isinstance(inp, Sequence) else [inp]
    func = _callable_by_weakref(func)
    token = REGISTRY.register(func)
    attrs: dict[str, Any] = {"token": token, "Tout": out_types}
    if not inputs:
        attrs["Tin"] = []
    op = apply_op(op_type, [inputs], attrs, name)
    _keep_alive(op.graph, func)
    if not out_types:
        return op
    return list(op.outputs) if is_list else op.outputs[0]


def py_func(
    func: Callable[..., Any],
    inp: Any,
    Tout: Any,
    stateful: bool = True,
    name: str | None = None,
) -> Any:
    """tf.compat.v1.py_func: `func` takes and returns numpy arrays."""
    op_type = "PyFunc" if stateful else "PyFuncStateless"
    return _internal_py_func(op_type, func, inp, Tout, name)


def numpy_function(
    func: Callable[..., Any],
    inp: Any,
    Tout: Any,
    stateful: bool = True,
    name: str | None = None,
) -> Any:
    """tf.numpy_function: py_func under its TF 2 name."""
    return py_func(func, inp, Tout, stateful=stateful, name=name)


def py_function(func: Callable[..., Any], inp: Any, Tout: Any, name: str | None = None) -> Any:
    """tf.py_function (eager_py_func): `func` gets arrays with EagerTensor's .numpy()."""
    return _internal_py_func("EagerPyFunc", func, inp, Tout, name)


eager_py_func = py_function

NotDifferentiable("PyFunc")
NotDifferentiable("PyFuncStateless")
