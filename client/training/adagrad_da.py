"""Client, training: tf.train.AdagradDAOptimizer (ResourceApplyAdagradDA and its sparse
form): Adagrad dual averaging, which reads the global step every update."""

from __future__ import annotations

from typing import Any

from client.framework import ops as _ops
from client.framework.op_builder import constant
from client.ops import array_ops, math_ops
from client.ops.variables import Variable
from client.training.optimizer import Optimizer, apply_training_op, as_tensor


class AdagradDAOptimizer(Optimizer):
    def __init__(
        self,
        learning_rate: Any,
        global_step: Any,
        initial_gradient_squared_accumulator_value: float = 0.1,
        l1_regularization_strength: float = 0.0,
        l2_regularization_strength: float = 0.0,
        use_locking: bool = False,
        name: str = "AdagradDA",
    ) -> None:
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError(
                "initial_gradient_squared_accumulator_value must be positive: "
                f"{initial_gradient_squared_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_gradient_squared_accumulator_value = (
            initial_gradient_squared_accumulator_value
        )
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength
        self._global_step = global_step
        self._global_step_on_worker: Any = None

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            # As TF: both initial values first (root scope, colocated), then the slots.
            shape = v.shape.as_list()
            with v.graph.name_scope(None), v.graph.colocate_with(v.op):
                dtype = v.dtype.base_dtype
                g_val = constant(0.0, dtype=dtype, shape=shape)
                gg_val = constant(
                    self._initial_gradient_squared_accumulator_value, dtype=dtype, shape=shape
                )
            self._value_slot(v, "gradient_accumulator", self._name, g_val)
            self._value_slot(v, "gradient_squared_accumulator", self._name + "_1", gg_val)

    def _prepare(self) -> None:
        self._lr_t = as_tensor(self._learning_rate, "learning_rate")
        # As TF: the worker computing the update reads the step once, not once per variable.
        with _ops.colocate_with(self._lr_t):
            self._global_step_on_worker = array_ops.identity(self._global_step) + 1

    def _apply(self, var: Variable, grad: Any, indices: Any, dtype: Any) -> Any:
        g_acc = self._slot(var, "gradient_accumulator")
        gg_acc = self._slot(var, "gradient_squared_accumulator")
        with _ops.device(var.device):
            global_step = array_ops.identity(self._global_step_on_worker)
        scalars = [math_ops.cast(t, dtype) for t in (self._lr_t, self._l1, self._l2)]
        grads = [grad] if indices is None else [grad, indices]
        op = "ApplyAdagradDA" if indices is None else "SparseApplyAdagradDA"
        return apply_training_op(
            op,
            [var, g_acc, gg_acc],
            [*grads, *scalars, global_step],
            {"use_locking": self._use_locking},
        )

    def _resource_apply_dense(self, grad: Any, var: Variable) -> Any:
        return self._apply(var, grad, None, grad.dtype.base_dtype)

    def _resource_apply_sparse(self, grad: Any, var: Variable, indices: Any) -> Any:
        return self._apply(var, grad, indices, grad.dtype.base_dtype)
