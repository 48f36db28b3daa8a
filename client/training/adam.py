"""Client, training: tf.train.AdamOptimizer (ResourceApplyAdam; sparse updates of the m and v
slots by scatter-add, beta powers as non-slot variables)."""

from __future__ import annotations

from typing import Any

from client.framework import ops as _ops
from client.ops import control_flow_ops, math_ops, state_ops
from client.ops.variables import Variable
from client.training.optimizer import (
    Optimizer,
    apply_training_op,
    as_tensor,
    resource_scatter_add,
)


class AdamOptimizer(Optimizer):
    def __init__(
        self,
        learning_rate: Any = 0.001,
        beta1: Any = 0.9,
        beta2: Any = 0.999,
        epsilon: Any = 1e-8,
        use_locking: bool = False,
        name: str = "Adam",
    ) -> None:
        super().__init__(use_locking, name)
        self._lr, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, epsilon

    def _create_slots(self, var_list: list[Variable]) -> None:
        first = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(self._beta1, "beta1_power", first)
        self._create_non_slot_variable(self._beta2, "beta2_power", first)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name + "_1")

    def _prepare(self) -> None:
        self._lr_t = as_tensor(self._lr, "learning_rate")
        self._beta1_t = as_tensor(self._beta1, "beta1")
        self._beta2_t = as_tensor(self._beta2, "beta2")
        self._epsilon_t = as_tensor(self._epsilon, "epsilon")

    def _resource_apply_dense(self, grad: Any, var: Variable) -> Any:
        m, v = self._slot(var, "m"), self._slot(var, "v")
        b1p, b2p = self._non_slot["beta1_power"], self._non_slot["beta2_power"]
        dt = var.dtype
        return apply_training_op(
            "ApplyAdam",
            [var, m, v],
            [
                math_ops.cast(b1p, dt),
                math_ops.cast(b2p, dt),
                math_ops.cast(self._lr_t, dt),
                math_ops.cast(self._beta1_t, dt),
                math_ops.cast(self._beta2_t, dt),
                math_ops.cast(self._epsilon_t, dt),
                grad,
            ],
            {"use_locking": self._use_locking, "use_nesterov": False},
        )

    def _resource_apply_sparse(self, grad: Any, var: Variable, indices: Any) -> Any:
        """TF's Adam._apply_sparse_shared: m and v decay everywhere, the scaled rows are
        scatter-added at `indices`, and the variable moves by lr * m / (sqrt(v) + eps)."""
        dt = var.dtype
        b1p, b2p = self._non_slot["beta1_power"], self._non_slot["beta2_power"]
        # A same-dtype cast passes the variables through: each use below reads them.
        beta1_power, beta2_power = math_ops.cast(b1p, dt), math_ops.cast(b2p, dt)
        lr_t, beta1_t = math_ops.cast(self._lr_t, dt), math_ops.cast(self._beta1_t, dt)
        beta2_t, epsilon_t = math_ops.cast(self._beta2_t, dt), math_ops.cast(self._epsilon_t, dt)
        lr = lr_t * math_ops.sqrt(1 - beta2_power) / (1 - beta1_power)
        m_t = self._decay_and_scatter_add(
            self._slot(var, "m"), beta1_t, indices, grad * (1 - beta1_t)
        )
        v_t = self._decay_and_scatter_add(
            self._slot(var, "v"), beta2_t, indices, (grad * grad) * (1 - beta2_t)
        )
        v_sqrt = math_ops.sqrt(v_t)
        var_update = var.assign_sub(
            lr * m_t / (v_sqrt + epsilon_t), self._use_locking, read_value=False
        )
        _unread(var, var_update)
        return control_flow_ops.group(var_update, m_t, v_t)

    def _decay_and_scatter_add(self, slot: Variable, decay: Any, indices: Any, rows: Any) -> Any:
        """slot = slot * decay, then rows added at indices; the slot's new value."""
        decayed = slot.assign(slot * decay, self._use_locking, read_value=False)
        if not slot._is_resource_variable:  # TF's ref path: the ScatterAdd's output
            with _ops.control_dependencies([decayed]):
                return state_ops.scatter_add(slot, indices, rows, self._use_locking)
        _unread(slot, decayed)
        with _ops.control_dependencies([decayed]):
            scatter = resource_scatter_add(slot.handle, indices, rows)
            with _ops.control_dependencies([scatter]):
                return slot.value()

    def _finish(self, update_ops: list[Any], name_scope: str) -> Any:
        b1p, b2p = self._non_slot["beta1_power"], self._non_slot["beta2_power"]
        with _ops.control_dependencies(update_ops), _ops.colocate_with(b1p):
            # TF's assign() reads the new value lazily (_UnreadVariable); the group waits
            # on the assignments themselves.
            update_beta1 = b1p.assign(b1p.value() * self._beta1_t, read_value=False)
            _unread(b1p, update_beta1)
            update_beta2 = b2p.assign(b2p.value() * self._beta2_t, read_value=False)
            _unread(b2p, update_beta2)
        return control_flow_ops.group(*update_ops, update_beta1, update_beta2, name=name_scope)


def _unread(var: Variable, update: Any) -> None:
    """The read TF's assign leaves behind on a resource variable (an _UnreadVariable's
    ReadVariableOp after the update); a reference variable's assign leaves none."""
    if var._is_resource_variable:
        with _ops.control_dependencies([update]):
            var._lazy_read()
