"""Client API: tf.keras.layers.BatchNormalization as tf_keras builds it in a graph.

With a Python training value it is the tf.compat.v1.layers one (in TensorFlow a thin
subclass of this). With a tensor (the learning phase, by default) tf_keras computes the
batch moments unconditionally and picks between them and the moving statistics with one
cond each ("cond", "cond_1"), and each moving-average update is a cond of its own
("cond_2", "cond_3": the update, or the variable's value): the layer's `updates` are
those conds' outputs, to run with the train op. Fused (4-D) it conds between the training
and inference FusedBatchNormV3 and the momentum (1 in inference), and updates
unconditionally. Updates are not put in UPDATE_OPS.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from client.framework import ops as _ops
from client.framework.op_builder import constant, convert_to_tensor
from client.keras import initializers
from client.keras.engine import Layer, _training
from client.layers import normalization as _v1
from client.ops import control_flow_ops, nn_ops


class BatchNormalization(Layer, _v1.BatchNormalization):
    def __init__(
        self,
        axis: int = -1,
        momentum: float = 0.99,
        epsilon: float = 1e-3,
        center: bool = True,
        scale: bool = True,
        beta_initializer: Any = "zeros",
        gamma_initializer: Any = "ones",
        moving_mean_initializer: Any = "zeros",
        moving_variance_initializer: Any = "ones",
        **kwargs: Any,
    ) -> None:
        super().__init__(
            axis=axis,
            momentum=momentum,
            epsilon=epsilon,
            center=center,
            scale=scale,
            beta_initializer=initializers.get(beta_initializer),
            gamma_initializer=initializers.get(gamma_initializer),
            moving_mean_initializer=initializers.get(moving_mean_initializer),
            moving_variance_initializer=initializers.get(moving_variance_initializer),
            **kwargs,
        )

    def call(self, inputs: Any, training: Any = None) -> Any:
        training = _training(training)
        if isinstance(training, int):
            training = bool(training)
        if not self.trainable:
            training = False
        if isinstance(training, bool):
            return _v1.BatchNormalization.call(self, inputs, training=training)
        inputs, training = convert_to_tensor(inputs), convert_to_tensor(training)
        if self.fused:
            return self._fused_on_tensor(inputs, training)
        return self._call_on_tensor(inputs, training)

    def _fused_on_tensor(self, inputs: Any, training: Any) -> Any:
        """tf_keras' _fused_batch_norm on a tensor: one cond between FusedBatchNormV3 in
        training and in inference, a cond for the momentum (1 in inference: no change),
        then the two moving-average updates outside any cond."""
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

        output, mean, variance = control_flow_ops.cond(
            training, lambda: fused(True), lambda: fused(False)
        )
        momentum = control_flow_ops.cond(
            training, lambda: constant(self.momentum), lambda: constant(1.0)
        )
        self.add_update(self._assign_moving_average(self.moving_mean, mean, momentum))
        self.add_update(self._assign_moving_average(self.moving_variance, variance, momentum))
        return output

    def _call_on_tensor(self, inputs: Any, training: Any) -> Any:
        ndims = inputs.shape.ndims
        reduction_axes = [i for i in range(ndims) if i != self._axis]
        if self._axis != ndims - 1:
            raise NotImplementedError(
                "BatchNormalization on a learning-phase tensor normalizes the last axis "
                "only in this client"
            )
        batch_mean, batch_variance = nn_ops.moments(inputs, reduction_axes)
        mean = control_flow_ops.cond(
            training, lambda: batch_mean, lambda: convert_to_tensor(self.moving_mean)
        )
        variance = control_flow_ops.cond(
            training, lambda: batch_variance, lambda: convert_to_tensor(self.moving_variance)
        )
        for var, value in ((self.moving_mean, mean), (self.moving_variance, variance)):
            self.add_update(self._update_on_tensor(training, var, value).op)
        return _v1.batch_normalization(inputs, mean, variance, self.beta, self.gamma, self.epsilon)

    def _update_on_tensor(self, training: Any, variable: Any, value: Any) -> Any:
        """tf_keras' smart_cond(training, update, variable): the variable's value after
        the update, or as it is."""

        def update() -> Any:
            op = self._assign_moving_average(variable, value, self.momentum)
            with _ops.control_dependencies([op]):
                return variable._read_variable_op()

        return control_flow_ops.cond(training, update, lambda: convert_to_tensor(variable))
