"""Client, training: tf.train.AdadeltaOptimizer (ResourceApplyAdadelta and its sparse
form; slots accum and accum_update)."""

from __future__ import annotations

from typing import Any

from client.ops import math_ops
from client.ops.variables import Variable
from client.training.optimizer import Optimizer, apply_training_op, as_tensor


class AdadeltaOptimizer(Optimizer):
    def __init__(
        self,
        learning_rate: Any = 0.001,
        rho: Any = 0.95,
        epsilon: Any = 1e-8,
        use_locking: bool = False,
        name: str = "Adadelta",
    ) -> None:
        super().__init__(use_locking, name)
        self._lr, self._rho, self._epsilon = learning_rate, rho, epsilon

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name + "_1")

    def _prepare(self) -> None:
        self._lr_t = as_tensor(self._lr, "lr")
        self._rho_t = as_tensor(self._rho, "rho")
        self._epsilon_t = as_tensor(self._epsilon, "epsilon")

    def _inputs(self, var: Variable, dtype: Any) -> list[Any]:
        scalars = [math_ops.cast(t, dtype) for t in (self._lr_t, self._rho_t, self._epsilon_t)]
        return scalars

    def _resource_apply_dense(self, grad: Any, var: Variable) -> Any:
        return apply_training_op(
            "ApplyAdadelta",
            self._variables(var),
            self._inputs(var, grad.dtype.base_dtype) + [grad],
            {"use_locking": self._use_locking},
        )

    def _resource_apply_sparse(self, grad: Any, var: Variable, indices: Any) -> Any:
        return apply_training_op(
            "SparseApplyAdadelta",
            self._variables(var),
            self._inputs(var, grad.dtype) + [grad, indices],
            {"use_locking": self._use_locking},
        )

    def _variables(self, var: Variable) -> list[Variable]:
        return [var, self._slot(var, "accum"), self._slot(var, "accum_update")]
