"""Client API: tf.compat.v1.layers.BatchNormalization / batch_normalization.

Variables "<scope>/gamma", "beta", "moving_mean", "moving_variance" (the moving ones are
not trainable). 4-D inputs normalized on the channel axis use FusedBatchNormV3, others
nn.moments + the batch_normalization formula, as tf_keras does. In training the moving
averages are updated by "AssignMovingAvg" ops (moving -= (moving - batch) * (1 - momentum))
that the layer puts in UPDATE_OPS: run them with the train op, as TF1 programs do.
With `training` a boolean tensor each training-dependent quantity is its own cond, as
tf_keras' smart_cond builds them (batch or moving mean and variance, each update; fused:
the op and the momentum). `virtual_batch_size` gives tf_keras' ghost batch norm.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import constant, convert_to_tensor
from client.framework.shape_fns import constant_value
from client.layers import batch_renorm
from client.layers.base import Layer
from client.ops import array_ops, control_flow_ops, init_ops, math_ops, nn_ops, state_ops
from client.ops.ref_variable import is_ref


class BatchNormalization(Layer):
    def __init__(
        self,
        axis: int = -1,
        momentum: float = 0.99,
        epsilon: float = 1e-3,
        center: bool = True,
        scale: bool = True,
        beta_initializer: Any = None,
        gamma_initializer: Any = None,
        moving_mean_initializer: Any = None,
        moving_variance_initializer: Any = None,
        beta_regularizer: Any = None,
        gamma_regularizer: Any = None,
        beta_constraint: Any = None,
        gamma_constraint: Any = None,
        renorm: bool = False,
        renorm_clipping: Any = None,
        renorm_momentum: float = 0.99,
        fused: Any = None,
        trainable: bool = True,
        virtual_batch_size: Any = None,
        adjustment: Any = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(trainable=trainable, name=name, **kwargs)
        if adjustment is not None:
            raise ValueError("BatchNormalization: adjustment is not supported by this client")
        self.virtual_batch_size = virtual_batch_size
        self.renorm = renorm
        if renorm:
            self.renorm_clipping = batch_renorm.check_clipping(renorm_clipping)
            self.renorm_momentum = renorm_momentum
        self.axis = axis
        self.momentum, self.epsilon = momentum, epsilon
        self.center, self.scale = center, scale
        self.beta_initializer = beta_initializer or init_ops.zeros_initializer()
        self.gamma_initializer = gamma_initializer or init_ops.ones_initializer()
        self.moving_mean_initializer = moving_mean_initializer or init_ops.zeros_initializer()
        self.moving_variance_initializer = (
            moving_variance_initializer or init_ops.ones_initializer()
        )
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.fused = fused

    def build(self, input_shape: Any) -> None:
        ndims = input_shape.ndims
        if ndims is None:
            raise ValueError(f"Input has undefined rank. Received: input_shape={input_shape}.")
        axis = self.axis % ndims
        self._axis = axis
        vbs = self.virtual_batch_size
        if vbs is not None:
            if vbs <= 0:
                raise ValueError(
                    "`virtual_batch_size` must be a positive integer that divides the true "
                    f"batch size of the input tensor. Received: virtual_batch_size={vbs}"
                )
            if axis == 0:
                raise ValueError(
                    "When using `virtual_batch_size`, the batch dimension must be 0 and thus "
                    f"axis cannot include 0. Received axis=[{axis}]"
                )
        if self.renorm or vbs is not None:  # TF 1.x layers fall back to the unfused graph
            self.fused = False
        elif self.fused is None:
            self.fused = ndims == 4 and axis in (1, 3)
        elif self.fused and not (ndims == 4 and axis in (1, 3)):
            raise ValueError("fused batch norm needs 4-D inputs normalized on axis 1 or 3")
        dim = input_shape[axis]
        if dim is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension")
        shape = [int(dim)]
        if vbs is not None:
            # tf_keras: the parameters span the input's rank, plus the virtual batch
            # dimension inserted at 1 (so the channel axis moves one on).
            shape = [int(dim) if i == axis else 1 for i in range(ndims)]
            shape.insert(1, 1)
            self._axis = axis + 1
        dt = self.dtype if self.dtype not in (dtypes.float16, dtypes.bfloat16) else dtypes.float32
        self.gamma = (
            self.add_weight("gamma", shape, dt, self.gamma_initializer, self.gamma_regularizer)
            if self.scale
            else None
        )
        self.beta = (
            self.add_weight("beta", shape, dt, self.beta_initializer, self.beta_regularizer)
            if self.center
            else None
        )
        self.moving_mean = self.add_weight(
            "moving_mean", shape, dt, self.moving_mean_initializer, trainable=False
        )
        self.moving_variance = self.add_weight(
            "moving_variance", shape, dt, self.moving_variance_initializer, trainable=False
        )
        if self.renorm:
            batch_renorm.add_renorm_weights(self, shape, dt)

    def _assign_moving_average(self, variable: Any, value: Any, momentum: Any) -> Any:
        """tf_keras' update: moving -= (moving - value) * (1 - momentum), by
        tf.compat.v1.assign_sub (which names no op: "AssignMovingAvg/AssignSubVariableOp")
        and its read of the new value; the update op goes in UPDATE_OPS."""
        ref = is_ref(variable)  # resource variables off: AssignSub named by the scope
        with (
            _ops.name_scope(None, "AssignMovingAvg") as scope,
            _ops.colocate_with(variable if ref else variable.handle),
        ):
            decay = convert_to_tensor(1.0 - momentum, name="decay")
            if decay.dtype != variable.dtype.base_dtype:
                decay = math_ops.cast(decay, variable.dtype.base_dtype)
            delta = (variable - math_ops.cast(value, variable.dtype.base_dtype)) * decay
            if ref:
                return state_ops.assign_sub(variable, delta, name=scope)
            update = variable.assign_sub(delta, read_value=False)
            with _ops.control_dependencies([update]):
                variable._lazy_read()
            return update

    def call(self, inputs: Any, training: Any = False) -> Any:
        inputs = convert_to_tensor(inputs)
        is_constant = isinstance(training, (bool, np.bool_))
        original_shape = None
        if self.virtual_batch_size is not None:
            # Ghost batch norm as tf_keras: [virtual_batch_size, -1, ...] in training
            # ([-1, 1, ...] otherwise, and for a training tensor, as TF 2.x does).
            original_shape = array_ops.shape(inputs)
            original_shape = array_ops.concat([constant([-1]), original_shape[1:]], axis=0)
            leading = [self.virtual_batch_size, -1] if is_constant and training else [-1, 1]
            expanded = array_ops.concat([constant(leading), original_shape[1:]], axis=0)
            inputs = array_ops.reshape(inputs, expanded)
        if not is_constant:
            training = convert_to_tensor(training)
            known = constant_value(training)
            if known is not None:  # as tf_keras' smart_cond: a constant picks the branch
                is_constant, training = True, bool(known)
        if is_constant:
            outputs = self._call(inputs, bool(training))
        else:  # tf_keras: one cond per quantity
            outputs = self._call(inputs, training)
        if original_shape is not None:
            outputs = array_ops.reshape(outputs, original_shape)
        return outputs

    def _update(self, variable: Any, value: Any, training: Any) -> Any:
        """tf_keras' mean_update / variance_update: the moving average's update, under a
        cond on a training tensor (whose false branch reads the variable)."""
        if training is True:
            return self._assign_moving_average(variable, value, self.momentum)

        def do_update() -> Any:
            update = self._assign_moving_average(variable, value, self.momentum)
            if is_ref(variable):
                return update
            # The cond's output is TF's _UnreadVariable converted: a read after the update.
            with _ops.control_dependencies([update]):
                return variable._read_variable_op()

        return control_flow_ops.cond(training, do_update, lambda: convert_to_tensor(variable))

    def _call(self, inputs: Any, training: Any) -> Any:
        """training: True, False, or a boolean tensor (then each training-dependent
        quantity is its own cond, as tf_keras' smart_cond builds them)."""
        if self.fused:
            return self._fused(inputs, training)
        ndims = inputs.shape.ndims
        reduction_axes = [i for i in range(ndims) if i != self._axis]
        virtual = self.virtual_batch_size is not None
        if virtual:
            del reduction_axes[1]  # not across the virtual batches
        broadcast = [1] * ndims
        broadcast[self._axis] = int(inputs.shape[self._axis])

        def bcast(v: Any) -> Any:
            if v is None or v.shape.ndims == ndims or reduction_axes == list(range(ndims - 1)):
                return v
            return array_ops.reshape(v, broadcast)

        scale, offset = bcast(self.gamma), bcast(self.beta)  # first, as tf_keras
        if training is False:  # read inside batch_normalization's scope, where TF reads them
            mean, variance = self.moving_mean, self.moving_variance
            return batch_normalization(
                inputs, bcast(mean), bcast(variance), offset, scale, self.epsilon
            )
        mean, variance = nn_ops.moments(inputs, reduction_axes, keepdims=virtual)
        if training is not True:
            batch_mean, batch_variance = mean, variance
            moving_mean, moving_variance = self.moving_mean, self.moving_variance
            mean = control_flow_ops.cond(
                training, lambda: batch_mean, lambda: convert_to_tensor(moving_mean)
            )
            variance = control_flow_ops.cond(
                training, lambda: batch_variance, lambda: convert_to_tensor(moving_variance)
            )
        new_mean, new_variance = mean, variance
        if virtual:  # one update from the virtual batches' mean statistics, as tf_keras
            new_mean = math_ops.reduce_mean(mean, axis=1, keepdims=True)
            new_variance = math_ops.reduce_mean(variance, axis=1, keepdims=True)
        if self.renorm:
            r, d, new_mean, new_variance = batch_renorm.correction_and_moments(
                self, new_mean, new_variance, training
            )
            r = bcast(array_ops.stop_gradient(r, name="renorm_r"))
            d = bcast(array_ops.stop_gradient(d, name="renorm_d"))
            scale, offset = batch_renorm.compose(r, d, scale, offset)
        self.add_update(self._update(self.moving_mean, new_mean, training))
        if self.renorm:
            self.add_update(batch_renorm.update_variance(self, new_variance, training))
        else:
            self.add_update(self._update(self.moving_variance, new_variance, training))
        return batch_normalization(
            inputs, bcast(mean), bcast(variance), offset, scale, self.epsilon
        )

    def _fused(self, inputs: Any, training: Any) -> Any:
        """tf_keras' _fused_batch_norm in graph mode: the moving statistics feed the op in
        training too, and the momentum is a Const tensor the updates subtract from 1. A
        training tensor conds the op (training or inference) and the momentum (1 when not
        training, so the updates leave the averages as they are)."""
        shape = [int(inputs.shape[self._axis])]
        beta = self.beta if self.center else constant(np.zeros(shape, np.float32))
        gamma = self.gamma if self.scale else constant(np.ones(shape, np.float32))

        def fused(is_training: bool) -> Any:
            return nn_ops.fused_batch_norm(
                inputs,
                gamma,
                beta,
                mean=self.moving_mean,
                variance=self.moving_variance,
                epsilon=self.epsilon,
                data_format="NHWC" if self._axis == 3 else "NCHW",
                is_training=is_training,
            )

        if isinstance(training, bool):
            output, mean, variance = fused(training)
            if not training:
                return output
            momentum = convert_to_tensor(self.momentum)
        else:
            output, mean, variance = control_flow_ops.cond(
                training, lambda: fused(True), lambda: fused(False)
            )
            momentum = control_flow_ops.cond(training, lambda: self.momentum, lambda: 1.0)
        self.add_update(self._assign_moving_average(self.moving_mean, mean, momentum))
        self.add_update(self._assign_moving_average(self.moving_variance, variance, momentum))
        return output


def batch_normalization(
    x: Any,
    mean: Any,
    variance: Any,
    offset: Any,
    scale: Any,
    variance_epsilon: float,
    name: str | None = None,
) -> Any:
    """tf.nn.batch_normalization: x * inv + (offset - mean * inv), inv = scale / sqrt(var + eps)."""
    with _ops.name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        inv = math_ops.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        x = convert_to_tensor(x)
        return x * math_ops.cast(inv, x.dtype) + math_ops.cast(
            offset - mean * inv if offset is not None else -mean * inv, x.dtype
        )


def batch_normalization_fn(
    inputs: Any,
    axis: int = -1,
    momentum: float = 0.99,
    epsilon: float = 1e-3,
    center: bool = True,
    scale: bool = True,
    beta_initializer: Any = None,
    gamma_initializer: Any = None,
    moving_mean_initializer: Any = None,
    moving_variance_initializer: Any = None,
    beta_regularizer: Any = None,
    gamma_regularizer: Any = None,
    beta_constraint: Any = None,
    gamma_constraint: Any = None,
    training: Any = False,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
    renorm: bool = False,
    renorm_clipping: Any = None,
    renorm_momentum: float = 0.99,
    fused: Any = None,
    virtual_batch_size: Any = None,
    adjustment: Any = None,
) -> Any:
    layer = BatchNormalization(
        axis=axis,
        momentum=momentum,
        epsilon=epsilon,
        center=center,
        scale=scale,
        beta_initializer=beta_initializer,
        gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer,
        moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer,
        gamma_regularizer=gamma_regularizer,
        renorm=renorm,
        renorm_clipping=renorm_clipping,
        renorm_momentum=renorm_momentum,
        fused=fused,
        trainable=trainable,
        virtual_batch_size=virtual_batch_size,
        adjustment=adjustment,
        name=name,
        _reuse=reuse,
        _scope=name,
    )
    return layer(inputs, training=training)
