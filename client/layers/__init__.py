"""Client API: tf.compat.v1.layers."""

from client.layers.base import Layer  # noqa: F401
from client.layers.convolutional import (  # noqa: F401
    AveragePooling1D,
    AveragePooling2D,
    AveragePooling3D,
    Conv1D,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    MaxPooling1D,
    MaxPooling2D,
    MaxPooling3D,
    average_pooling1d,
    average_pooling2d,
    average_pooling3d,
    conv1d,
    conv2d,
    conv2d_transpose,
    conv3d,
    max_pooling1d,
    max_pooling2d,
    max_pooling3d,
)
from client.layers.core import Dense, Dropout, Flatten, dense, dropout, flatten  # noqa: F401
from client.layers.normalization import BatchNormalization  # noqa: F401
from client.layers.normalization import batch_normalization_fn as batch_normalization  # noqa: F401

# isort: split
from client.layers.separable_conv import (  # noqa: E402, F401
    Conv3DTranspose,
    SeparableConv1D,
    SeparableConv2D,
    conv3d_transpose,
    separable_conv1d,
    separable_conv2d,
)
