"""Client API: the tf.keras.layers namespace."""

from client.keras.engine import Input, InputLayer, Layer  # noqa: F401
from client.keras.layers_conv import (  # noqa: F401
    AveragePooling1D,
    AveragePooling2D,
    AvgPool1D,
    AvgPool2D,
    Conv1D,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Convolution1D,
    Convolution2D,
    Convolution3D,
    GlobalAveragePooling2D,
    GlobalAvgPool2D,
    GlobalMaxPool2D,
    GlobalMaxPooling2D,
    MaxPool1D,
    MaxPool2D,
    MaxPooling1D,
    MaxPooling2D,
)
from client.keras.layers_core import (  # noqa: F401
    Activation,
    Add,
    Concatenate,
    Dense,
    Dropout,
    Embedding,
    Flatten,
    Lambda,
    Multiply,
    Reshape,
    add,
    concatenate,
    multiply,
)
from client.keras.layers_norm import BatchNormalization  # noqa: F401
from client.keras.recurrent import (  # noqa: F401
    GRU,
    LSTM,
    RNN,
    GRUCell,
    LSTMCell,
    SimpleRNN,
    SimpleRNNCell,
)
