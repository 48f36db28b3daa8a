"""Client API: tf.compat.v1.layers."""

from client.layers.base import Layer  # noqa: F401
from client.layers.core import Dense, Dropout, Flatten, dense, dropout, flatten  # noqa: F401
