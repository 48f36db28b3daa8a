"""Client, training: tf.train.GradientDescentOptimizer (ResourceApplyGradientDescent; sparse
gradients as one ResourceScatterAdd)."""

from __future__ import annotations

from typing import Any

from client.framework.op_builder import apply_op
from client.ops import math_ops
from client.ops.variables import Variable
from client.training.optimizer import (
    Optimizer,
    apply_training_op,
    as_tensor,
    resource_scatter_add,
)


class GradientDescentOptimizer(Optimizer):
    def __init__(
        self, learning_rate: Any, use_locking: bool = False, name: str = "GradientDescent"
    ) -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _prepare(self) -> None:
        self._lr_t = as_tensor(self._learning_rate, "learning_rate")

    def _resource_apply_dense(self, grad: Any, var: Variable) -> Any:
        return apply_training_op(
            "ApplyGradientDescent",
            [var],
            [math_ops.cast(self._lr_t, var.dtype), grad],
            {"use_locking": self._use_locking},
        )

    def _resource_apply_sparse_duplicate_indices(
        self, grad: Any, handle: Variable, indices: Any
    ) -> Any:
        # The scatter sums repeated indices itself: no deduplication (as TF).
        if not handle._is_resource_variable:  # TF's _apply_sparse_duplicate_indices
            delta = grad * math_ops.cast(self._lr_t, handle.dtype.base_dtype)
            return apply_op(
                "ScatterSub", [handle, indices, delta], {"use_locking": self._use_locking}
            ).outputs[0]
        return resource_scatter_add(
            handle.handle, indices, -grad * math_ops.cast(self._lr_t, grad.dtype.base_dtype)
        )
