"""Client, training: tf.train.FtrlOptimizer (ResourceApplyFtrl, ResourceApplyFtrlV2 with
l2 shrinkage, and their sparse forms; slots accum and linear)."""

from __future__ import annotations

from typing import Any

from client.ops import array_ops, math_ops
from client.ops.variables import Variable
from client.training.optimizer import Optimizer, apply_training_op, as_tensor


class FtrlOptimizer(Optimizer):
    def __init__(
        self,
        learning_rate: Any,
        learning_rate_power: float = -0.5,
        initial_accumulator_value: float = 0.1,
        l1_regularization_strength: float = 0.0,
        l2_regularization_strength: float = 0.0,
        use_locking: bool = False,
        name: str = "Ftrl",
        accum_name: str | None = None,
        linear_name: str | None = None,
        l2_shrinkage_regularization_strength: float = 0.0,
        beta: float | None = None,
    ) -> None:
        super().__init__(use_locking, name)
        for value, what, must in [
            (initial_accumulator_value, "initial_accumulator_value", "non-negative"),
            (-learning_rate_power, "learning_rate_power", "less than or equal to 0.0"),
            (l1_regularization_strength, "l1_regularization_strength", "non-negative"),
            (l2_regularization_strength, "l2_regularization_strength", "non-negative"),
            (
                l2_shrinkage_regularization_strength,
                "l2_shrinkage_regularization_strength",
                "non-negative",
            ),
        ]:
            if value < 0.0:
                raise ValueError(f"{what} {abs(value)} must be {must}")
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._l2_shrinkage = l2_shrinkage_regularization_strength
        self._beta = 0.0 if beta is None else beta
        self._accum_name, self._linear_name = accum_name, linear_name

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            # TF's _accum_initializer: ones(shape) * initial_accumulator_value.
            self._initializer_slot(
                v,
                "accum",
                self._accum_name or self._name,
                lambda v=v: (
                    array_ops.ones(v.shape.as_list(), v.dtype.base_dtype)
                    * self._initial_accumulator_value
                ),
            )
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self) -> None:
        self._lr_t = as_tensor(self._learning_rate, "learning_rate")
        self._l1_t = as_tensor(self._l1, "l1_regularization_strength")
        # TF folds beta into l2 so that the kernels need no beta input.
        self._l2_t = as_tensor(
            self._l2 + self._beta / (2.0 * math_ops.maximum(self._learning_rate, 1e-36)),
            "adjusted_l2_regularization_strength",
        )
        self._beta_t = as_tensor(self._beta, "beta")
        self._l2_shrinkage_t = as_tensor(self._l2_shrinkage, "l2_shrinkage_regularization_strength")
        self._lr_power_t = as_tensor(self._learning_rate_power, "learning_rate_power")

    def _apply(self, var: Variable, grad: Any, indices: Any, dtype: Any) -> Any:
        accum, linear = self._slot(var, "accum"), self._slot(var, "linear")
        v2 = self._l2_shrinkage > 0.0
        scalars = [self._lr_t, self._l1_t, self._l2_t]
        scalars += [self._l2_shrinkage_t] if v2 else []
        scalars += [self._lr_power_t]
        op = "SparseApplyFtrl" if indices is not None else "ApplyFtrl"
        grads = [grad] if indices is None else [grad, indices]
        return apply_training_op(
            op + ("V2" if v2 else ""),
            [var, accum, linear],
            [*grads, *(math_ops.cast(t, dtype) for t in scalars)],
            {"use_locking": self._use_locking},
        )

    def _resource_apply_dense(self, grad: Any, var: Variable) -> Any:
        return self._apply(var, grad, None, var.dtype.base_dtype)

    def _resource_apply_sparse(self, grad: Any, var: Variable, indices: Any) -> Any:
        return self._apply(var, grad, indices, grad.dtype)
