"""Client, training: the tf.train.Optimizer base (TF1's Optimizer with compute_gradients /
apply_gradients / minimize) and the helpers its subclasses share:
slots, gradient conversion, sparse deduplication.

A dense gradient goes to `_resource_apply_dense` (ResourceApply*); an IndexedSlices one
(a gather's gradient) to `_resource_apply_sparse_duplicate_indices`, which by default sums
the slices of repeated indices (Unique + UnsortedSegmentSum) and calls
`_resource_apply_sparse` (ResourceSparseApply*, ResourceScatterAdd), as TensorFlow's
optimizers do: only the touched rows travel to the variable and change."""

from __future__ import annotations

import abc
import contextlib
from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.indexed_slices import IndexedSlices, convert_to_tensor_or_indexed_slices
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.gradients import gradients
from client.ops import array_ops, control_flow_ops, state_ops
from client.ops.partitioned_variables import PartitionedVariable
from client.ops.variables import SaveSliceInfo, Variable, trainable_variables


def _refuse_partitioned(var_list: list[Any]) -> None:
    """TF's optimizers read each variable's op (_get_processor); a PartitionedVariable has
    none, so TF (1.15 as 2.21) fails there: a program lists the shards, list(pv), instead."""
    for v in var_list:
        if isinstance(v, PartitionedVariable):
            raise AttributeError("'PartitionedVariable' object has no attribute 'op'")


class Optimizer(abc.ABC):
    """TF1's tf.train.Optimizer over resource variables."""

    def __init__(self, use_locking: bool, name: str) -> None:
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots: dict[str, dict[Any, Variable]] = {}
        self._non_slot: dict[str, Variable] = {}

    def get_name(self) -> str:
        return self._name

    def minimize(
        self,
        loss: Any,
        global_step: Any = None,
        var_list: Any = None,
        gate_gradients: int = 1,
        aggregation_method: Any = None,
        colocate_gradients_with_ops: bool = False,
        name: str | None = None,
        grad_loss: Any = None,
    ) -> Any:
        grads_and_vars = self.compute_gradients(
            loss,
            var_list=var_list,
            gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops,
            grad_loss=grad_loss,
        )
        vars_with_grad = [v for g, v in grads_and_vars if g is not None]
        if not vars_with_grad:
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do "
                "not support gradients, between variables "
                f"{[str(v) for _, v in grads_and_vars]} and loss {loss}."
            )
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(
        self,
        loss: Any,
        var_list: Any = None,
        gate_gradients: int = 1,
        aggregation_method: Any = None,
        colocate_gradients_with_ops: bool = False,
        grad_loss: Any = None,
    ) -> list[tuple[Any, Any]]:
        if var_list is None:
            var_list = trainable_variables()
        elif isinstance(var_list, PartitionedVariable):
            var_list = [var_list]  # one leaf to TF's nest.flatten, not its shards
        var_list = list(var_list)
        _refuse_partitioned(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = gradients(
            loss,
            var_list,
            grad_ys=None if grad_loss is None else [grad_loss],
            gate_gradients=gate_gradients == 1,  # GATE_OP
            colocate_gradients_with_ops=colocate_gradients_with_ops,
        )
        if gate_gradients == 2:  # GATE_GRAPH
            grads = control_flow_ops.tuple(grads)
        return list(zip(grads, var_list))

    def apply_gradients(
        self, grads_and_vars: Any, global_step: Any = None, name: str | None = None
    ) -> Any:
        grads_and_vars = [(_as_gradient(g), v) for g, v in grads_and_vars]
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        _refuse_partitioned([v for _, v in grads_and_vars])
        var_list = [v for g, v in grads_and_vars if g is not None]
        if not var_list:
            raise ValueError(
                f"No gradients provided for any variable: {[str(v) for _, v in grads_and_vars]}."
            )
        with _ops.control_dependencies(None):
            self._create_slots(var_list)
        update_ops = []
        with _ops.name_scope(name, self._name) as scope:
            self._prepare()
            for g, v in grads_and_vars:
                if g is None:
                    continue
                with _ops.name_scope("update_" + v.op.name), _ops.colocate_with(v):
                    update_ops.append(self._update_op(g, v))
            if global_step is None:
                apply_updates = self._finish(update_ops, scope)
            else:
                finish = self._finish(update_ops, "update")
                with _ops.control_dependencies([finish]), _ops.colocate_with(global_step):
                    if global_step._is_resource_variable:
                        apply_updates = apply_op(
                            "AssignAddVariableOp",
                            [global_step.handle, convert_to_tensor(1, dtype=global_step.dtype)],
                            {},
                            scope,
                        )
                    else:
                        apply_updates = state_ops.assign_add(global_step, 1, name=scope).op
        # As TF: the train op joins the TRAIN_OP collection (a meta graph carries it).
        train_ops = _ops.get_collection_ref(_ops.GraphKeys.TRAIN_OP)
        if apply_updates not in train_ops:
            train_ops.append(apply_updates)
        return apply_updates

    def _update_op(self, grad: Any, var: Variable) -> Any:
        """TF's _DenseResourceVariableProcessor.update_op: sparse or dense apply."""
        if isinstance(grad, IndexedSlices):
            if getattr(var, "constraint", None) is not None:
                raise RuntimeError("Cannot use a constraint function on a sparse variable.")
            return self._resource_apply_sparse_duplicate_indices(grad.values, var, grad.indices)
        return self._resource_apply_dense(grad, var)

    def _resource_apply_sparse_duplicate_indices(
        self, grad: Any, handle: Variable, indices: Any
    ) -> Any:
        """Sum the rows of repeated `indices`, then `_resource_apply_sparse`."""
        summed_grad, unique_indices = deduplicate_indexed_slices(grad, indices)
        return self._resource_apply_sparse(summed_grad, handle, unique_indices)

    def _resource_apply_sparse(self, grad: Any, handle: Variable, indices: Any) -> Any:
        """The op applying rows `grad` at unique `indices` to `handle` (a Variable)."""
        raise NotImplementedError(
            f"{type(self).__name__} does not apply sparse (IndexedSlices) gradients"
        )

    # -- slots --------------------------------------------------------------------------------
    def _zeros_slot(self, var: Variable, slot_name: str, op_name: str) -> Variable:
        return self._initializer_slot(
            var,
            slot_name,
            op_name,
            lambda: array_ops.zeros(var.shape.as_list(), var.dtype.base_dtype),
        )

    def _initializer_slot(self, var: Variable, slot_name: str, op_name: str, init: Any) -> Variable:
        """TF's _get_or_make_slot_with_initializer: `init()` builds the initial value under
        the slot's Initializer scope (`<var>/<op>/Initializer/...`), colocated with var."""
        slots = self._slots.setdefault(slot_name, {})
        if var not in slots:
            g = var.graph
            with g.name_scope(None), g.colocate_with(var.op):
                slots[var] = _slot_variable(var, init, f"{var.op.name}/{op_name}")
        return slots[var]

    def _value_slot(self, var: Variable, slot_name: str, op_name: str, value: Any) -> Variable:
        """TF's _get_or_make_slot: a slot initialized from a tensor made beforehand."""
        slots = self._slots.setdefault(slot_name, {})
        if var not in slots:
            g = var.graph
            with g.name_scope(None), g.colocate_with(var.op):
                slots[var] = _slot_variable(var, value, f"{var.op.name}/{op_name}")
        return slots[var]

    def _constant_slot(
        self, var: Variable, slot_name: str, op_name: str, value: float, colocate: bool = True
    ) -> Variable:
        """A slot initialized from a Const of `value` in var's shape, made (as TF's
        `constant_op.constant(...)` + `_get_or_make_slot`) in the root scope, colocated
        with `var` when `colocate`."""
        slots = self._slots.setdefault(slot_name, {})
        if var not in slots:
            g = var.graph
            with g.name_scope(None):
                with g.colocate_with(var.op) if colocate else contextlib.nullcontext():
                    val = constant(value, dtype=var.dtype.base_dtype, shape=var.shape.as_list())
                with g.colocate_with(var.op):
                    slots[var] = _slot_variable(var, val, f"{var.op.name}/{op_name}")
        return slots[var]

    def get_slot(self, var: Variable, name: str) -> Variable | None:
        return self._slots.get(name, {}).get(var)

    def _slot(self, var: Variable, name: str) -> Variable:
        """A slot `_create_slots` made for `var` (apply_gradients makes them first)."""
        slot = self.get_slot(var, name)
        assert slot is not None, f"no slot {name!r} for {var.name}"
        return slot

    def get_slot_names(self) -> list[str]:
        return sorted(self._slots)

    def _create_non_slot_variable(
        self, initial_value: float, name: str, colocate_with: Variable
    ) -> Variable:
        if name not in self._non_slot:
            g = colocate_with.graph
            with g.name_scope(None), g.colocate_with(colocate_with.op):
                self._non_slot[name] = _slot_variable(colocate_with, initial_value, name)
        return self._non_slot[name]

    def variables(self) -> list[Variable]:
        out = list(self._non_slot.values())
        for slots in self._slots.values():
            out.extend(slots.values())
        return out

    def _create_slots(self, var_list: list[Variable]) -> None:
        """Hook: create the optimizer's slot variables (none by default)."""
        return None

    def _prepare(self) -> None:
        """Hook: build per-step tensors such as a learning-rate tensor (none by default)."""
        return None

    def _finish(self, update_ops: list[Any], name_scope: str) -> Any:
        return control_flow_ops.group(*update_ops, name=name_scope)

    @abc.abstractmethod
    def _resource_apply_dense(self, grad: Any, var: Variable) -> Any:
        """The op applying `grad` to resource variable `var` (ResourceApply*)."""


def _slot_variable(primary: Variable, initial_value: Any, name: str) -> Variable:
    """A non-trainable variable of the primary's kind (TF's slot_creator and
    _create_non_slot_variable: a reference variable's slots are reference variables)."""
    slot = Variable(
        initial_value, name=name, trainable=False, use_resource=primary._is_resource_variable
    )
    info = primary._get_save_slice_info()
    if info is not None and slot.op.name.startswith(primary.op.name + "/"):
        # As TF's slot_creator: a shard's slot is the same slice of "<full name>/<slot>",
        # so a checkpoint holds one whole slot per partitioned variable.
        real_slot_name = slot.op.name[len(primary.op.name) + 1 :]
        slot._set_save_slice_info(
            SaveSliceInfo(
                f"{info.full_name}/{real_slot_name}",
                info.full_shape,
                info.var_offset,
                info.var_shape,
            )  # fmt: skip
        )
    return slot


def _as_gradient(g: Any) -> Any:
    """TF's apply_gradients conversion: None, a Tensor or IndexedSlices."""
    if g is None:
        return None
    try:
        return convert_to_tensor_or_indexed_slices(g)
    except TypeError:
        raise TypeError(
            f"Gradient must be convertible to a Tensor or IndexedSlices, or None: {g}"
        ) from None


def deduplicate_indexed_slices(values: Any, indices: Any) -> tuple[Any, Any]:
    """TF's _deduplicate_indexed_slices: (rows of `values` summed per unique index, the
    unique indices), with Unique and UnsortedSegmentSum."""
    unique_indices, new_index_positions = apply_op(
        "Unique", [indices], {"out_idx": dtypes.int32}
    ).outputs
    summed_values = apply_op(
        "UnsortedSegmentSum",
        [values, new_index_positions, array_ops.shape(unique_indices)[0]],
        {},
    ).outputs[0]
    return summed_values, unique_indices


def apply_training_op(
    op_type: str, variables: list[Any], inputs: list[Any], attrs: dict[str, Any] | None = None
) -> Any:
    """TF's training_ops: `op_type` ("ApplyAdam", "SparseApplyAdagrad" ...) on the
    variable and its slots `variables`, then `inputs`. On resource variables the
    Resource* op on their handles, on reference variables the op on their refs."""
    if variables[0]._is_resource_variable:
        refs = [v.handle for v in variables]
        op_type = "Resource" + op_type
    else:
        refs = [v._ref() for v in variables]
    return apply_op(op_type, [*refs, *inputs], attrs or {})


def resource_scatter_add(handle: Any, indices: Any, updates: Any) -> Any:
    """Adds `updates` to the rows `indices` of the resource variable `handle`."""
    return apply_op("ResourceScatterAdd", [handle, indices, updates], {})


def as_tensor(value: Any, name: str) -> Any:
    """A hyperparameter (a value, a tensor or a callable returning one) as a tensor."""
    return convert_to_tensor(value() if callable(value) else value, name=name)
