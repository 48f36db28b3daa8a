"""Client, graph building: tf.edit_distance as TF's array_ops builds it (one EditDistance
node named "edit_distance" fed by the two SparseTensors' components), with TF's shape
function for EditDistance. TF registers no gradient for it (NotDifferentiable)."""

from __future__ import annotations

from typing import Any

from client.framework import ops as _ops
from client.framework import shape_fns
from client.framework.gradient_registry import NotDifferentiable
from client.framework.op_builder import apply_op
from client.framework.sparse_tensor import SparseTensor, SparseTensorValue
from client.framework.tensor_shape import TensorShape


def edit_distance(
    hypothesis: Any, truth: Any, normalize: bool = True, name: str = "edit_distance"
) -> _ops.Tensor:
    if not isinstance(hypothesis, (SparseTensor, SparseTensorValue)):
        raise TypeError("Hypothesis must be a SparseTensor.")
    if not isinstance(truth, (SparseTensor, SparseTensorValue)):
        raise TypeError("Truth must be a SparseTensor.")
    inputs = [
        hypothesis.indices,
        hypothesis.values,
        hypothesis.dense_shape,
        truth.indices,
        truth.values,
        truth.dense_shape,
    ]
    return apply_op("EditDistance", inputs, {"normalize": bool(normalize)}, name).outputs[0]


def _edit_distance_shape(op: Any) -> list[TensorShape]:
    hyp = shape_fns.constant_value(op.inputs[2])
    truth = shape_fns.constant_value(op.inputs[5])
    if hyp is None or truth is None:
        return [TensorShape(None)]
    if hyp.size != truth.size:
        raise ValueError(
            "Num elements of hypothesis_shape does not match truth_shape: "
            f"{hyp.size} vs. {truth.size}"
        )
    return [TensorShape([max(int(a), int(b)) for a, b in zip(hyp[:-1], truth[:-1])])]


shape_fns.SHAPE_FNS["EditDistance"] = _edit_distance_shape
NotDifferentiable("EditDistance")
