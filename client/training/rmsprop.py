"""Client, training: tf.train.RMSPropOptimizer (ResourceApplyRMSProp, or
ResourceApplyCenteredRMSProp when centered, and their sparse forms)."""

from __future__ import annotations

from typing import Any

from client.ops import array_ops, math_ops
from client.ops.variables import Variable
from client.training.optimizer import Optimizer, apply_training_op, as_tensor


class RMSPropOptimizer(Optimizer):
    def __init__(
        self,
        learning_rate: Any,
        decay: Any = 0.9,
        momentum: Any = 0.0,
        epsilon: Any = 1e-10,
        use_locking: bool = False,
        centered: bool = False,
        name: str = "RMSProp",
    ) -> None:
        super().__init__(use_locking, name)
        self._learning_rate, self._decay = learning_rate, decay
        self._momentum, self._epsilon, self._centered = momentum, epsilon, centered

    def _create_slots(self, var_list: list[Variable]) -> None:
        # TF's order, which numbers the slot variables: rms, (mg), momentum.
        for v in var_list:
            self._initializer_slot(
                v,
                "rms",
                self._name,
                lambda v=v: array_ops.ones(v.shape.as_list(), v.dtype.base_dtype),
            )
            if self._centered:
                self._zeros_slot(v, "mg", self._name + "_1")
            self._zeros_slot(v, "momentum", self._name + ("_2" if self._centered else "_1"))

    def _prepare(self) -> None:
        self._lr_t = as_tensor(self._learning_rate, "learning_rate")
        self._decay_t = as_tensor(self._decay, "decay")
        self._momentum_t = as_tensor(self._momentum, "momentum")
        self._epsilon_t = as_tensor(self._epsilon, "epsilon")

    def _variables(self, var: Variable) -> list[Variable]:
        slots = [self._slot(var, "rms"), self._slot(var, "momentum")]
        if self._centered:
            slots.insert(0, self._slot(var, "mg"))
        return [var, *slots]

    def _scalars(self, dtype: Any) -> list[Any]:
        scalars = [self._lr_t, self._decay_t, self._momentum_t, self._epsilon_t]
        return [math_ops.cast(t, dtype) for t in scalars]

    def _op(self, sparse: bool) -> str:
        kind = "CenteredRMSProp" if self._centered else "RMSProp"
        return ("SparseApply" if sparse else "Apply") + kind

    def _resource_apply_dense(self, grad: Any, var: Variable) -> Any:
        inputs = self._scalars(grad.dtype.base_dtype) + [grad]
        return apply_training_op(
            self._op(False), self._variables(var), inputs, {"use_locking": self._use_locking}
        )

    def _resource_apply_sparse(self, grad: Any, var: Variable, indices: Any) -> Any:
        inputs = self._scalars(grad.dtype) + [grad, indices]
        return apply_training_op(
            self._op(True), self._variables(var), inputs, {"use_locking": self._use_locking}
        )
