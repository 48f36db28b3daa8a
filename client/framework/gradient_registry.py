"""Client, gradients: the registry of gradient functions by op type (tf.RegisterGradient,
tf.no_gradient), apart from the gradient algorithm (client.gradients) and the functions
themselves (client.ops.gradients, one module per op family), so both import it and not
each other. Filled at import time; read-only afterwards."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes

GRADIENTS: dict[str, Any] = {}
NOT_DIFFERENTIABLE: set[str] = set()
# Op types whose gradient function takes IndexedSlices as they are (TF's _IdGrad,
# _ReadGrad, _AddNGrad, _CastGrad); every other one gets its IndexedSlices densified.
SPARSE_GRAD_PASSTHROUGH: set[str] = {
    "Identity",
    "PlaceholderWithDefault",
    "RefIdentity",
    "IdentityN",
    "ReadVariableOp",
    "AddN",
    "Cast",
}


def RegisterGradient(op_type: str):
    def deco(fn: Any) -> Any:
        GRADIENTS[op_type] = fn
        return fn

    return deco


def NotDifferentiable(op_type: str) -> None:
    NOT_DIFFERENTIABLE.add(op_type)


no_gradient = NotDifferentiable


def is_trainable(t: Any) -> bool:
    """Whether a tensor of this dtype carries a gradient (floating, complex, resource,
    variant), as TensorFlow's backprop_util.IsTrainable."""
    d = t.dtype.base_dtype
    return d.is_floating or d.is_complex or d == dtypes.resource or d == dtypes.variant
