"""Client, training: tf.train.MomentumOptimizer (ResourceApplyMomentum and its sparse form,
Nesterov optional)."""

from __future__ import annotations

from typing import Any

from client.ops import math_ops
from client.ops.variables import Variable
from client.training.optimizer import Optimizer, apply_training_op, as_tensor


class MomentumOptimizer(Optimizer):
    def __init__(
        self,
        learning_rate: Any,
        momentum: Any,
        use_locking: bool = False,
        name: str = "Momentum",
        use_nesterov: bool = False,
    ) -> None:
        super().__init__(use_locking, name)
        self._learning_rate, self._momentum, self._use_nesterov = (
            learning_rate,
            momentum,
            use_nesterov,
        )

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self) -> None:
        self._lr_t = as_tensor(self._learning_rate, "learning_rate")
        self._momentum_t = as_tensor(self._momentum, "momentum")

    def _resource_apply_dense(self, grad: Any, var: Variable) -> Any:
        mom = self._slot(var, "momentum")
        return apply_training_op(
            "ApplyMomentum",
            [var, mom],
            [
                math_ops.cast(self._lr_t, var.dtype),
                grad,
                math_ops.cast(self._momentum_t, var.dtype),
            ],
            {"use_locking": self._use_locking, "use_nesterov": self._use_nesterov},
        )

    def _resource_apply_sparse(self, grad: Any, var: Variable, indices: Any) -> Any:
        mom = self._slot(var, "momentum")
        return apply_training_op(
            "SparseApplyMomentum",
            [var, mom],
            [
                math_ops.cast(self._lr_t, grad.dtype),
                grad,
                indices,
                math_ops.cast(self._momentum_t, grad.dtype),
            ],
            {"use_locking": self._use_locking, "use_nesterov": self._use_nesterov},
        )
