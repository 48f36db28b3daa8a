"""Client, training: tf.train.ExponentialMovingAverage and assign_moving_average as TF
builds them: one shadow variable "<var>/<name>" per variable (a slot, colocated with it,
initialized from the variable's initialized value) or per tensor (starting at zeros,
as the CIFAR-10 tutorial's loss averages), and apply()'s
group of AssignSubVariableOps shadow -= (shadow - var) * (1 - decay), decay capped by
(1 + num_updates) / (10 + num_updates) when num_updates is given."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.ops import array_ops, control_flow_ops, math_ops
from client.ops import variables as _variables
from client.ops.variables import Variable

_MOVING_AVERAGE_VARIABLES = "moving_average_variables"  # TF's GraphKeys value
_FLOATS = (dtypes.bfloat16, dtypes.float16, dtypes.float32, dtypes.float64)


def _assign_moving_average(variable: Any, value: Any, decay: Any, name: str | None = None) -> Any:
    """assign_moving_average(zero_debias=False): "<scope>/AssignSubVariableOp" and the
    variable read after it (TF's _UnreadVariable, whose op, the one a group waits on,
    is the assign)."""
    with _ops.name_scope(name, "AssignMovingAvg", [variable, value, decay]):
        decay = convert_to_tensor(1.0 - decay, name="decay")
        if decay.dtype != variable.dtype.base_dtype:
            decay = math_ops.cast(decay, variable.dtype.base_dtype)
        with _ops.colocate_with(variable.op):
            op = variable.assign_sub((variable - value) * decay, read_value=False)
            with _ops.control_dependencies([op]):
                return op, variable._lazy_read()


def assign_moving_average(
    variable: Any, value: Any, decay: Any, zero_debias: bool = True, name: str | None = None
) -> Any:
    """variable -= (variable - value) * (1 - decay); the variable's value after it. Only
    the zero_debias=False form (what EMA.apply uses for variables) is built here."""
    if zero_debias:
        raise NotImplementedError(
            "assign_moving_average: zero_debias=True (biased/local_step variables) is not "
            "built by this client; pass zero_debias=False"
        )
    return _assign_moving_average(variable, value, decay, name)[1]


class ExponentialMovingAverage:
    """tf.train.ExponentialMovingAverage(decay, num_updates=None, zero_debias=False,
    name="ExponentialMovingAverage") over variables."""

    def __init__(
        self, decay: Any, num_updates: Any = None, zero_debias: bool = False,
        name: str = "ExponentialMovingAverage",
    ) -> None:  # fmt: skip
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict[Any, Variable] = {}

    @property
    def name(self) -> str:
        return self._name

    def _create_average(self, var: Any) -> Variable:
        # TF's init_scope: the shadow's initializer runs outside any control dependencies.
        with _ops.control_dependencies(None):
            if isinstance(var, Variable):
                return self._create_average_variable(var)
            return self._create_tensor_average(var)

    def _create_tensor_average(self, value: Any) -> Variable:
        """slot_creator.create_zeros_slot for a tensor: "<op>/<name>" starting at zeros,
        colocated with the tensor only when it is a variable's own output."""
        g = value.graph
        colocate = value.op.type in ("Variable", "VariableV2", "VarHandleOp")
        shape, dtype = value.shape, value.dtype.base_dtype
        if not shape.is_fully_defined():
            raise NotImplementedError(
                "ExponentialMovingAverage.apply: the average of a tensor of unknown shape "
                f"is not built by this client, got {value!r}"
            )
        with g.name_scope(None), g.colocate_with(value.op) if colocate else nullcontext():
            return Variable(
                lambda: array_ops.zeros(shape.as_list(), dtype),
                name=f"{value.op.name}/{self._name}",
                trainable=False,
            )

    def _create_average_variable(self, var: Variable) -> Variable:
        g = var.graph
        with g.device(var.device):
            initialized_value = var.initialized_value()
        # slot_creator.create_slot: variable_scope "<var>/<name>" (uniquified), colocated.
        with g.name_scope(None), g.colocate_with(var.op):
            avg = Variable(
                initialized_value,
                name=f"{var.op.name}/{self._name}",
                trainable=False,
                # The cond's Merge carries var's static shape (both branches have it).
                shape=var.shape if var.shape.is_fully_defined() else None,
                validate_shape=var.shape.is_fully_defined(),
            )
        _ops.add_to_collection(_MOVING_AVERAGE_VARIABLES, var)
        return avg

    def apply(self, var_list: Any = None) -> Any:
        """Creates the shadow variables (once per variable) and returns the op that
        updates them all."""
        if var_list is None:
            var_list = _variables.trainable_variables()
        var_list = list(var_list)
        for var in var_list:
            if var.dtype.base_dtype not in _FLOATS:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if self._zero_debias and not isinstance(var, Variable):
                raise NotImplementedError(
                    "ExponentialMovingAverage(zero_debias=True).apply: the debiased average "
                    f"of a tensor is not built by this client, got {var!r}"
                )
            if var not in self._averages:
                self._averages[var] = self._create_average(var)
        with _ops.name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay")
            if self._num_updates is not None:
                num_updates = math_ops.cast(self._num_updates, dtypes.float32, name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))
            updates = [
                _assign_moving_average(self._averages[var], var, decay)[0] for var in var_list
            ]
            return control_flow_ops.group(*updates, name=scope)

    def average(self, var: Any) -> Variable | None:
        return self._averages.get(var)

    def average_name(self, var: Any) -> str:
        if var in self._averages:
            return self._averages[var].op.name
        return _ops.get_default_graph().unique_name(
            f"{var.op.name}/{self._name}", mark_as_used=False
        )

    def variables_to_restore(self, moving_avg_variables: Any = None) -> dict[str, Any]:
        """Saver var_list restoring each averaged variable from its shadow's name (other
        global variables under their own)."""
        if moving_avg_variables is None:
            moving_avg_variables = _variables.trainable_variables()
            moving_avg_variables += _ops.get_collection(_MOVING_AVERAGE_VARIABLES)
        averaged = set(moving_avg_variables)
        name_map = {self.average_name(v): v for v in averaged}
        names = {v.name for v in averaged}
        for v in _variables.global_variables():
            if v.name not in names and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map
