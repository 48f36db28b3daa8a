"""Client API: tf.keras.layers SimpleRNN, LSTM and GRU (with their cells) in a graph.

Weights are named as tf_keras names them ("lstm/lstm_cell/kernel", "recurrent_kernel",
"bias"; GRU's bias is [2, 3 * units], reset_after) and the step math is tf_keras' cells'
(gates i, f, c, o for LSTM; z, r, h for GRU). The time loop follows tf_keras' backend.rnn:
inputs made time-major and unstacked into a TensorArray, one step at time zero for the
output's shape, then a tf.while_loop writing outputs into a TensorArray. tf_keras' LSTM
and GRU in a graph wrap that loop in functions chosen at run time (their cuDNN selection),
so those two match TensorFlow by value, not node for node.
"""

from __future__ import annotations

from typing import Any

from client.framework import nest
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.keras import activations, initializers
from client.keras.engine import Layer
from client.ops import array_ops, control_flow_ops, math_ops, nn_ops, tensor_array_ops


class _Cell(Layer):
    units: int

    def __init__(
        self,
        units: int,
        activation: Any = "tanh",
        use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform",
        recurrent_initializer: Any = "orthogonal",
        bias_initializer: Any = "zeros",
        **kwargs: Any,
    ) -> None:
        for unsupported in ("dropout", "recurrent_dropout"):
            if kwargs.pop(unsupported, 0.0):
                raise NotImplementedError(f"{unsupported} in Keras RNN cells (this client)")
        super().__init__(**kwargs)
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)

    @property
    def state_size(self) -> list[int]:
        return [self.units]

    def _weights(self, input_dim: int, gates: int, bias_shape: Any, bias_init: Any) -> None:
        self.kernel = self.add_weight(
            "kernel", (input_dim, gates * self.units), initializer=self.kernel_initializer
        )
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel",
            (self.units, gates * self.units),
            initializer=self.recurrent_initializer,
        )
        self.bias = (
            self.add_weight("bias", bias_shape, initializer=bias_init) if self.use_bias else None
        )


class SimpleRNNCell(_Cell):
    def build(self, input_shape: Any) -> None:
        self._weights(int(input_shape[-1]), 1, (self.units,), self.bias_initializer)

    def call(self, inputs: Any, states: Any) -> Any:
        h = math_ops.matmul(inputs, self.kernel)
        if self.bias is not None:
            h = nn_ops.bias_add(h, self.bias)
        output = self.activation(h + math_ops.matmul(states[0], self.recurrent_kernel))
        return output, [output]


class LSTMCell(_Cell):
    def __init__(
        self,
        units: int,
        activation: Any = "tanh",
        recurrent_activation: Any = "sigmoid",
        unit_forget_bias: bool = True,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("implementation", None)
        super().__init__(units, activation, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = unit_forget_bias

    @property
    def state_size(self) -> list[int]:
        return [self.units, self.units]

    def build(self, input_shape: Any) -> None:
        bias_init = self.bias_initializer
        if self.unit_forget_bias:
            zeros, units = self.bias_initializer, self.units

            def bias_init(shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
                # tf_keras: the forget gate's bias starts at one.
                return array_ops.concat(
                    [
                        zeros((units,), dtype=dtype),
                        initializers.Ones()((units,), dtype=dtype),
                        zeros((units * 2,), dtype=dtype),
                    ],
                    0,
                )

        self._weights(int(input_shape[-1]), 4, (4 * self.units,), bias_init)

    def call(self, inputs: Any, states: Any) -> Any:
        h_tm1, c_tm1 = states
        z = math_ops.matmul(inputs, self.kernel)
        z += math_ops.matmul(h_tm1, self.recurrent_kernel)
        if self.bias is not None:
            z = nn_ops.bias_add(z, self.bias)
        z0, z1, z2, z3 = array_ops.split(z, num_or_size_splits=4, axis=1)
        i = self.recurrent_activation(z0)
        f = self.recurrent_activation(z1)
        c = f * c_tm1 + i * self.activation(z2)
        o = self.recurrent_activation(z3)
        h = o * self.activation(c)
        return h, [h, c]


class GRUCell(_Cell):
    def __init__(
        self,
        units: int,
        activation: Any = "tanh",
        recurrent_activation: Any = "sigmoid",
        reset_after: bool = True,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("implementation", None)
        if not reset_after:
            raise NotImplementedError("GRU with reset_after=False (this client)")
        super().__init__(units, activation, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = reset_after

    def build(self, input_shape: Any) -> None:
        self._weights(int(input_shape[-1]), 3, (2, 3 * self.units), self.bias_initializer)

    def call(self, inputs: Any, states: Any) -> Any:
        h_tm1 = states[0]
        matrix_x = math_ops.matmul(inputs, self.kernel)
        matrix_inner = math_ops.matmul(h_tm1, self.recurrent_kernel)
        if self.bias is not None:
            input_bias, recurrent_bias = array_ops.unstack(self.bias)
            matrix_x = nn_ops.bias_add(matrix_x, input_bias)
            matrix_inner = nn_ops.bias_add(matrix_inner, recurrent_bias)
        x_z, x_r, x_h = array_ops.split(matrix_x, 3, axis=-1)
        r_z, r_r, r_h = array_ops.split(matrix_inner, [self.units, self.units, -1], axis=-1)
        z = self.recurrent_activation(x_z + r_z)
        r = self.recurrent_activation(x_r + r_r)
        hh = self.activation(x_h + r * r_h)
        h = z * h_tm1 + (1 - z) * hh
        return h, [h]


def _time_loop(cell: Any, inputs: Any, states: list[Any], go_backwards: bool) -> tuple:
    """tf_keras' backend.rnn: (last output, outputs [batch, time, ...], final states)."""
    inputs = array_ops.transpose(inputs, [1, 0, 2])
    steps = array_ops.shape(inputs)[0]
    input_ta = tensor_array_ops.TensorArray(
        inputs.dtype, size=steps, tensor_array_name="input_ta_0"
    )
    input_ta = input_ta.unstack(array_ops.reverse(inputs, [0]) if go_backwards else inputs)
    output_zero, _ = cell.call(inputs[0], list(states))
    output_ta = tensor_array_ops.TensorArray(
        output_zero.dtype,
        size=steps,
        element_shape=output_zero.shape,
        tensor_array_name="output_ta_0",
    )
    time = convert_to_tensor(0, name="time")

    def step(t: Any, out_ta: Any, *state: Any) -> Any:
        output, new_state = cell.call(input_ta.read(t), list(state))
        for s, new in zip(state, new_state):
            new.set_shape(s.shape)
        return (t + 1, out_ta.write(t, output), *new_state)

    final = control_flow_ops.while_loop(
        lambda t, *_: t < steps,
        step,
        (time, output_ta, *states),
        parallel_iterations=32,
        swap_memory=True,
    )
    outputs = final[1].stack()
    last = outputs[-1]
    return last, array_ops.transpose(outputs, [1, 0, 2]), list(final[2:])


class RNN(Layer):
    def __init__(
        self,
        cell: Any,
        return_sequences: bool = False,
        return_state: bool = False,
        go_backwards: bool = False,
        **kwargs: Any,
    ) -> None:
        for unsupported in ("stateful", "unroll", "time_major"):
            if kwargs.pop(unsupported, False):
                raise NotImplementedError(f"Keras RNN with {unsupported}=True (this client)")
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards = go_backwards

    def build(self, input_shape: Any) -> None:
        if not self.cell.built:
            with _ops.name_scope(self.cell.name):
                self.cell.build(input_shape[:1].concatenate(input_shape[2:]))
            self.cell.built = True

    @property
    def trainable_weights(self) -> list[Any]:
        return self.cell.trainable_weights if self.trainable else []

    @property
    def non_trainable_weights(self) -> list[Any]:
        return self.cell.non_trainable_weights if self.trainable else self.cell.weights

    @property
    def weights(self) -> list[Any]:
        return self.trainable_weights + self.non_trainable_weights

    variables = weights
    trainable_variables = trainable_weights

    def call(self, inputs: Any, initial_state: Any = None, training: Any = None) -> Any:
        inputs = convert_to_tensor(inputs)
        if initial_state is None:
            batch = array_ops.shape(inputs)[0]
            initial_state = [
                array_ops.zeros(array_ops.stack([batch, n]), inputs.dtype)
                for n in self.cell.state_size
            ]
        states = [convert_to_tensor(s) for s in nest.flatten(initial_state)]
        last, outputs, states = _time_loop(self.cell, inputs, states, self.go_backwards)
        output = outputs if self.return_sequences else last
        return [output, *states] if self.return_state else output


def _rnn_layer(name: str, cell_cls: type, cell_name: str) -> type:
    def __init__(self: Any, units: int, *args: Any, **kwargs: Any) -> None:
        layer_kwargs = {
            k: kwargs.pop(k)
            for k in (
                "return_sequences",
                "return_state",
                "go_backwards",
                "stateful",
                "unroll",
                "time_major",
                "name",
                "input_shape",
                "batch_input_shape",
                "input_dim",
                "dtype",
                "trainable",
            )
            if k in kwargs
        }
        cell = cell_cls(units, *args, name=cell_name, **kwargs)
        RNN.__init__(self, cell, **layer_kwargs)
        self.units = int(units)

    return type(name, (RNN,), {"__init__": __init__})


SimpleRNN = _rnn_layer("SimpleRNN", SimpleRNNCell, "simple_rnn_cell")
LSTM = _rnn_layer("LSTM", LSTMCell, "lstm_cell")
GRU = _rnn_layer("GRU", GRUCell, "gru_cell")
