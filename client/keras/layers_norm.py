"""Client API: tf.keras.layers.BatchNormalization as tf_keras builds it in a graph.

With a Python training value it is the tf.compat.v1.layers one (in TensorFlow a thin
subclass of this). With a tensor (the learning phase, by default) tf_keras computes the
batch moments unconditionally and picks between them and the moving statistics with one
cond each ("cond", "cond_1"), and each moving-average update is a cond of its own
("cond_2", "cond_3": the update, or the variable's value): the layer's `updates` are
those conds' outputs, to run with the train op. Updates are not put in UPDATE_OPS.
"""

from __future__ import annotations

from typing import Any

from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
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
        if isinstance(training, bool) or self.fused:
            return _v1.BatchNormalization.call(self, inputs, training=training)
        return self._call_on_tensor(convert_to_tensor(inputs), convert_to_tensor(training))

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
