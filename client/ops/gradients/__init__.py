"""Client, gradients: the gradient function of each op type, one module per op family as
TensorFlow's python/ops/*_grad.py. Importing this package registers them all, from one place;
the op types without a gradient are listed here. `fn(op, *out_grads) -> [grad per input or
None]`."""

from __future__ import annotations

from client.framework.gradient_registry import NotDifferentiable
from client.ops.gradients import (  # noqa: F401  (imported for their registrations)
    array_grad,
    control_flow_grad,
    data_flow_grad,
    image_grad,
    manip_grad,
    math_grad,
    nn_grad,
    segment_grad,
    tensor_array_grad,
)

for _t in (
    "Shape",
    "ShapeN",
    "Size",
    "Rank",
    "ZerosLike",
    "OnesLike",
    "Equal",
    "NotEqual",
    "Less",
    "LessEqual",
    "Greater",
    "GreaterEqual",
    "LogicalAnd",
    "LogicalOr",
    "LogicalNot",
    "ArgMax",
    "ArgMin",
    "Range",
    "Const",
    "Placeholder",
    "PlaceholderV2",
    "BroadcastGradientArgs",
    "VarHandleOp",
    "VarIsInitializedOp",
    "Floor",
    "Ceil",
    "Round",
    "Sign",
    "FloorDiv",
    "TruncateDiv",
    "RandomStandardNormal",
    "RandomUniform",
    "TruncatedNormal",
    "RandomUniformInt",
    "OneHot",
    "Where",
    "IsNan",
    "IsInf",
    "IsFinite",
    "NoOp",
    "AssignVariableOp",
    "AssignAddVariableOp",
    "AssignSubVariableOp",
    "StopGradient",
    "PreventGradient",
    "ConcatOffset",
    "InvertPermutation",
    "LoopCond",
    "Fill",
    "Cumprod",
    "InTopKV2",
):
    NotDifferentiable(_t)
