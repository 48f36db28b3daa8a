"""Client, training: tf.train.ProximalGradientDescentOptimizer and
tf.train.ProximalAdagradOptimizer (ResourceApplyProximal* and their sparse forms: the
update followed by the l1/l2 proximal step)."""

from __future__ import annotations

from typing import Any

from client.ops.variables import Variable
from client.training.optimizer import Optimizer, apply_training_op, as_tensor


class _Proximal(Optimizer):
    """The shared hyperparameters: learning rate, l1 and l2 strengths (not cast: TF
    passes the tensors as they are)."""

    def __init__(self, learning_rate: Any, l1: Any, l2: Any, use_locking: bool, name: str):
        super().__init__(use_locking, name)
        self._learning_rate, self._l1, self._l2 = learning_rate, l1, l2

    def _prepare(self) -> None:
        self._lr_t = as_tensor(self._learning_rate, "learning_rate")
        self._l1_t = as_tensor(self._l1, "l1_regularization_strength")
        self._l2_t = as_tensor(self._l2, "l2_regularization_strength")

    def _scalars(self) -> list[Any]:
        return [self._lr_t, self._l1_t, self._l2_t]


class ProximalGradientDescentOptimizer(_Proximal):
    def __init__(
        self,
        learning_rate: Any,
        l1_regularization_strength: Any = 0.0,
        l2_regularization_strength: Any = 0.0,
        use_locking: bool = False,
        name: str = "ProximalGradientDescent",
    ) -> None:
        super().__init__(
            learning_rate, l1_regularization_strength, l2_regularization_strength, use_locking, name
        )

    def _resource_apply_dense(self, grad: Any, var: Variable) -> Any:
        return apply_training_op(
            "ApplyProximalGradientDescent",
            [var],
            [*self._scalars(), grad],
            {"use_locking": self._use_locking},
        )

    def _resource_apply_sparse(self, grad: Any, var: Variable, indices: Any) -> Any:
        return apply_training_op(
            "SparseApplyProximalGradientDescent",
            [var],
            [*self._scalars(), grad, indices],
            {"use_locking": self._use_locking},
        )


class ProximalAdagradOptimizer(_Proximal):
    def __init__(
        self,
        learning_rate: Any,
        initial_accumulator_value: float = 0.1,
        l1_regularization_strength: Any = 0.0,
        l2_regularization_strength: Any = 0.0,
        use_locking: bool = False,
        name: str = "ProximalAdagrad",
    ) -> None:
        if initial_accumulator_value <= 0.0:
            raise ValueError(
                f"initial_accumulator_value must be positive: {initial_accumulator_value}"
            )
        super().__init__(
            learning_rate, l1_regularization_strength, l2_regularization_strength, use_locking, name
        )
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._constant_slot(v, "accumulator", self._name, self._initial_accumulator_value)

    def _resource_apply_dense(self, grad: Any, var: Variable) -> Any:
        acc = self._slot(var, "accumulator")
        return apply_training_op(
            "ApplyProximalAdagrad",
            [var, acc],
            [*self._scalars(), grad],
            {"use_locking": self._use_locking},
        )

    def _resource_apply_sparse(self, grad: Any, var: Variable, indices: Any) -> Any:
        acc = self._slot(var, "accumulator")
        return apply_training_op(
            "SparseApplyProximalAdagrad",
            [var, acc],
            [*self._scalars(), grad, indices],
            {"use_locking": self._use_locking},
        )
