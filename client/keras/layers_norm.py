"""Client API: tf.keras.layers.BatchNormalization as tf_keras builds it in a graph."""

from __future__ import annotations

from typing import Any

from client.keras import initializers
from client.keras.engine import Layer, _training
from client.layers import normalization as _v1


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
        return _v1.BatchNormalization.call(self, inputs, training=training)
