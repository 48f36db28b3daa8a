"""Client, training: tf.train.AdagradOptimizer (ResourceApplyAdagrad and its sparse form)."""

from __future__ import annotations

from typing import Any

from client.framework.op_builder import constant
from client.ops import math_ops
from client.ops.variables import Variable
from client.training.optimizer import Optimizer, apply_training_op, as_tensor


class AdagradOptimizer(Optimizer):
    def __init__(
        self,
        learning_rate: Any,
        initial_accumulator_value: float = 0.1,
        use_locking: bool = False,
        name: str = "Adagrad",
    ) -> None:
        if initial_accumulator_value <= 0.0:
            raise ValueError(
                f"initial_accumulator_value must be positive: {initial_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            # TF's constant_initializer: one Const of the value in var's shape.
            self._initializer_slot(
                v,
                "accumulator",
                self._name,
                lambda v=v: constant(
                    self._initial_accumulator_value,
                    dtype=v.dtype.base_dtype,
                    shape=v.shape.as_list(),
                ),
            )

    def _prepare(self) -> None:
        self._lr_t = as_tensor(self._learning_rate, "learning_rate")

    def _resource_apply_dense(self, grad: Any, var: Variable) -> Any:
        acc = self._slot(var, "accumulator")
        return apply_training_op(
            "ApplyAdagrad",
            [var, acc],
            [math_ops.cast(self._lr_t, grad.dtype.base_dtype), grad],
            {"use_locking": self._use_locking},
        )

    def _resource_apply_sparse(self, grad: Any, var: Variable, indices: Any) -> Any:
        acc = self._slot(var, "accumulator")
        return apply_training_op(
            "SparseApplyAdagrad",
            [var, acc],
            [math_ops.cast(self._lr_t, grad.dtype), grad, indices],
            {"use_locking": self._use_locking},
        )
