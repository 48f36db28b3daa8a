"""Client, gradients: the sparse ops' gradients as TensorFlow's sparse_grad.py builds them
(SparseTensorDenseMatMul: the dense side through the op with adjoint_a flipped, the values
through gathered rows multiplied as batches of vectors; SparseSlice through SparseSliceGrad;
SparseSoftmax as SoftmaxGrad on the entries)."""

from __future__ import annotations

from typing import Any

from client.framework.gradient_registry import NotDifferentiable, RegisterGradient
from client.framework.op_builder import apply_op
from client.framework.sparse_tensor import SparseTensor
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


# -- the reshaping, joining and normalizing ops (TensorFlow's sparse_grad.py) ----------------
for _t in ("SparseAddGrad", "SparseConcat"):
    NotDifferentiable(_t)


@RegisterGradient("SparseSlice")
def _sparse_slice_grad(op: Any, *grads: Any) -> list[Any]:
    """The sliced values' gradient scattered back to the input's entries."""
    val_grad = apply_op(
        "SparseSliceGrad", [grads[1], op.inputs[0], op.inputs[3], op.outputs[0]]
    ).outputs[0]
    val_grad.set_shape(op.inputs[1].get_shape())
    return [None, val_grad, None, None, None]


@RegisterGradient("SparseSoftmax")
def _sparse_softmax_grad(op: Any, grad: Any) -> list[Any]:
    """SoftmaxGrad on the entries: (grad - sum(grad * softmax) over each row) * softmax."""
    indices, shape = op.inputs[0], op.inputs[2]
    out_vals = op.outputs[0]
    sp_output = SparseTensor(indices, out_vals, shape)
    sp_grad = SparseTensor(indices, grad, shape)
    sp_product = SparseTensor(indices, sp_output.values * sp_grad.values, shape)
    summed = apply_op(
        "SparseReduceSum",
        [sp_product.indices, sp_product.values, sp_product.dense_shape, [-1]],
        {"keep_dims": True},
    ).outputs[0]
    sum_reduced = -summed
    sp_sum = apply_op(
        "SparseDenseCwiseAdd", [sp_grad.indices, sp_grad.values, sp_grad.dense_shape, sum_reduced]
    ).outputs[0]
    return [None, sp_sum * sp_output.values, None]


def _not_implemented(op_type: str) -> None:
    @RegisterGradient(op_type)
    def _grad(op: Any, *grads: Any) -> list[Any]:
        raise NotImplementedError(f"Gradient for {op_type} is not implemented.")


_not_implemented("SparseSparseMaximum")
_not_implemented("SparseSparseMinimum")
