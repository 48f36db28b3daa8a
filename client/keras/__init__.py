"""Client API: tf.keras (tf_keras 2.x) for TF1 graph programs: layers, Sequential and
functional Models used as callables on tensors, initializers, activations, losses and
the backend's session and learning phase. Training goes through tf.compat.v1.train
optimizers; Model.compile/fit/evaluate/predict are not provided."""

from client.keras import activations, backend, initializers, layers, losses, models  # noqa: F401
from client.keras.engine import Input  # noqa: F401
from client.keras.models import Model, Sequential  # noqa: F401
