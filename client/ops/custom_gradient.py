"""Client, graph building: tf.custom_gradient in graph mode (TF's custom_gradient.py,
_graph_mode_decorator). The function's results, its inputs and the variables it reads pass
through one IdentityN whose gradient is overridden by the user's gradient function,
registered under a fresh "CustomGradient-<uid>" name. Builds graphs; not thread-safe, as
graph building is not.
"""

from __future__ import annotations

import functools
import inspect
import itertools
from collections.abc import Callable
from typing import Any

from client.framework import ops as _ops
from client.framework import shape_fns
from client.framework.gradient_registry import RegisterGradient
from client.framework.nest import flatten, map_structure, pack_sequence_as
from client.framework.op_builder import convert_to_tensor
from client.ops import array_ops

# TF's ops.uid(): one counter per process, so names never repeat across graphs.
_UID = itertools.count(1)
_VAR_OP_TYPES = ("VariableV2", "VarHandleOp")

shape_fns.SHAPE_FNS["IdentityN"] = lambda op: [t.shape for t in op.inputs]


def custom_gradient(f: Callable[..., Any] | None = None) -> Any:
    """`f(*args) -> (result, grad_fn)`: the decorated function returns `result`, whose
    gradient tf.gradients takes from `grad_fn(*result_grads)` (and, when `f` reads
    variables, `grad_fn(*result_grads, variables=...) -> (input_grads, variable_grads)`)."""
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args: Any, **kwargs: Any) -> Any:
        return _graph_mode_decorator(f, args, kwargs)

    return decorated


def _dependent_variables(args: list[Any], results: list[Any]) -> list[Any]:
    """The global variables whose ops lie between `args` and `results` (TF's
    _get_dependent_variables: a backward walk stopping at the inputs)."""
    # TF walks back from an Identity of each result (left in the graph, as in TF's).
    results = [array_ops.identity(t) for t in results]
    stop = {id(t) for t in args}
    seen: set[int] = set()
    names: list[str] = []
    pending = [t.op for t in results]
    while pending:
        op = pending.pop()
        if id(op) in seen:
            continue
        seen.add(id(op))
        if op.type in _VAR_OP_TYPES:
            names.append(op.name)
        pending.extend(t.op for t in op.inputs if id(t) not in stop)
    by_name = {
        v.op.name: v
        for v in _ops.get_collection(_ops.GraphKeys.GLOBAL_VARIABLES)
        if hasattr(v, "op")
    }
    return [by_name[n] for n in names if n in by_name]


def _takes_variables(grad_fn: Callable[..., Any]) -> bool:
    spec = inspect.getfullargspec(grad_fn)
    return "variables" in spec.args or "variables" in spec.kwonlyargs or bool(spec.varkw)


def _graph_mode_decorator(f: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    if kwargs:
        raise ValueError(
            "The custom_gradient decorator currently supports keywords "
            "arguments only when eager execution is enabled."
        )
    name = f"CustomGradient-{next(_UID)}"
    # Each leaf of the arguments becomes a tensor (a list of numbers is several scalars,
    # as in TF); a variable argument is read (TF's convert_variables_to_tensors).
    args = map_structure(convert_to_tensor, list(args))
    result, grad_fn = f(*args)
    flat_args = flatten(args)
    flat_result = [convert_to_tensor(r) for r in flatten(result)]
    n_results = len(flat_result)
    variables = sorted(_dependent_variables(flat_args, flat_result), key=lambda v: v.name)
    if variables and not _takes_variables(grad_fn):
        raise TypeError(
            "@tf.custom_gradient grad_fn must accept keyword argument 'variables', "
            f"since function uses variables: {variables}"
        )

    @RegisterGradient(name)
    def internal_grad_fn(unused_op: Any, *result_grads: Any) -> list[Any]:
        grads = list(result_grads[:n_results])
        if variables:
            input_grads, variable_grads = grad_fn(*grads, variables=variables)
            if len(variable_grads) != len(variables):
                raise ValueError(
                    "Must return gradient for each variable from @custom_gradient grad_fn."
                )
        else:
            input_grads, variable_grads = grad_fn(*grads), []
        return [None] * n_results + flatten(input_grads) + list(variable_grads)

    all_tensors = flat_result + flat_args + [convert_to_tensor(v) for v in variables]
    with _ops.get_default_graph().gradient_override_map({"IdentityN": name}):
        outputs = array_ops.identity_n(all_tensors)
    return pack_sequence_as(result, outputs[:n_results])
