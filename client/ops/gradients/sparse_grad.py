"""Client, gradients: the sparse ops' gradients as TensorFlow's sparse_grad.py builds them
(SparseTensorDenseMatMul: the dense side through the op with adjoint_a flipped, the values
through gathered rows multiplied as batches of vectors)."""

from __future__ import annotations

from typing import Any

from client.framework.gradient_registry import RegisterGradient
from client.framework.op_builder import apply_op
from client.ops import array_ops, math_ops


@RegisterGradient("SparseTensorDenseMatMul")
def _sparse_tensor_dense_matmul_grad(op: Any, grad: Any) -> list[Any]:
    a_indices, a_values, a_shape = op.inputs[:3]
    b = op.inputs[3]
    adj_a, adj_b = op.get_attr("adjoint_a"), op.get_attr("adjoint_b")
    if a_values.dtype.base_dtype != b.dtype.base_dtype:
        raise TypeError(
            "SparseTensorDenseMatMul op received operands with different types: "
            f"`{a_values.dtype.base_dtype}` and `{b.dtype.base_dtype}`."
        )
    b_grad = apply_op(
        "SparseTensorDenseMatMul",
        [a_indices, a_values, a_shape, grad],
        {"adjoint_a": not adj_a, "adjoint_b": False},
    ).outputs[0]
    if adj_b:
        b_grad = array_ops.matrix_transpose(b_grad, conjugate=True)
    rows = a_indices[:, 0]
    cols = a_indices[:, 1]
    parts_a = array_ops.gather(grad, rows if not adj_a else cols)
    parts_b = array_ops.gather(
        b if not adj_b else array_ops.transpose(b), cols if not adj_a else rows
    )
    if not adj_a and not adj_b:
        a_values_grad = math_ops.matmul(
            array_ops.expand_dims(parts_a, -2), array_ops.expand_dims(parts_b, -2), adjoint_b=True
        )
    elif adj_a and not adj_b:
        a_values_grad = math_ops.matmul(
            array_ops.expand_dims(parts_a, -1), array_ops.expand_dims(parts_b, -1), adjoint_a=True
        )
    elif not adj_a and adj_b:
        a_values_grad = math_ops.matmul(
            array_ops.expand_dims(parts_a, -2), array_ops.expand_dims(parts_b, -1)
        )
    else:
        a_values_grad = math_ops.matmul(
            array_ops.expand_dims(parts_a, -1),
            array_ops.expand_dims(parts_b, -2),
            adjoint_a=True,
            adjoint_b=True,
        )
    return [None, array_ops.squeeze(a_values_grad, axis=[-2, -1]), None, b_grad]
