"""Client API: tf.keras.layers SimpleRNN, LSTM and GRU (with their cells) in a graph.

Weights are named as tf_keras names them ("lstm/lstm_cell/kernel", "recurrent_kernel",
"bias"; GRU's bias is [2, 3 * units], reset_after) and the step math is tf_keras' cells'
(gates i, f, c, o for LSTM; z, r, h for GRU). The time loop follows tf_keras' backend.rnn:
inputs made time-major and unstacked into a TensorArray, one step at time zero for the
output's shape, then a tf.while_loop writing outputs into a TensorArray. LSTM and GRU add
tf_keras' "runtime" Const. In a TF1 program (disable_v2_behavior: v1 control flow, tf2
off) the graph is tf_keras' node for node; with tf2 and control flow v2 (TensorFlow's
default) tf_keras builds a functional While over a TensorList keeping only the last
output, where the client builds Enter/Exit frames, so there the values match, not the
nodes.
"""

from __future__ import annotations

from typing import Any

from client.framework import nest, tf2
from client.framework import ops as _ops
from client.framework.op_builder import constant, convert_to_tensor
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
    """tf_keras' LSTMCell; after disable_v2_behavior() its v1 defaults: hard_sigmoid
    gates and implementation 1 (a matmul per gate on kernel slices)."""

    def __init__(
        self,
        units: int,
        activation: Any = "tanh",
        recurrent_activation: Any = None,
        unit_forget_bias: bool = True,
        implementation: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(units, activation, **kwargs)
        v1 = not tf2.enabled()
        self.recurrent_activation = activations.get(
            recurrent_activation or ("hard_sigmoid" if v1 else "sigmoid")
        )
        self.implementation = implementation or (1 if v1 else 2)
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
        if self.implementation == 1:
            return self._call_per_gate(inputs, h_tm1, c_tm1)
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

    def _call_per_gate(self, inputs: Any, h_tm1: Any, c_tm1: Any) -> Any:
        kernels = array_ops.split(self.kernel, num_or_size_splits=4, axis=1)
        x = [math_ops.matmul(inputs, k) for k in kernels]
        if self.bias is not None:
            biases = array_ops.split(self.bias, num_or_size_splits=4, axis=0)
            x = [nn_ops.bias_add(xi, b) for xi, b in zip(x, biases)]
        u = self.units

        def recurrent(gate: int) -> Any:
            return math_ops.matmul(h_tm1, self.recurrent_kernel[:, gate * u : (gate + 1) * u])

        i = self.recurrent_activation(x[0] + recurrent(0))
        f = self.recurrent_activation(x[1] + recurrent(1))
        c = f * c_tm1 + i * self.activation(x[2] + recurrent(2))
        o = self.recurrent_activation(x[3] + recurrent(3))
        h = o * self.activation(c)
        return h, [h, c]


class GRUCell(_Cell):
    """tf_keras' GRUCell with reset_after (its v2 default). After disable_v2_behavior()
    tf_keras defaults to reset_after=False and hard_sigmoid gates; reset_after=False is
    not built by this client."""

    def __init__(
        self,
        units: int,
        activation: Any = "tanh",
        recurrent_activation: Any = None,
        reset_after: Any = None,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("implementation", None)
        v1 = not tf2.enabled()
        reset_after = not v1 if reset_after is None else reset_after
        if not reset_after:
            raise NotImplementedError(
                "GRU with reset_after=False (tf_keras' default after disable_v2_behavior) "
                "is not supported by this client: pass reset_after=True"
            )
        super().__init__(units, activation, **kwargs)
        self.recurrent_activation = activations.get(
            recurrent_activation or ("hard_sigmoid" if v1 else "sigmoid")
        )
        self.reset_after = reset_after

    def build(self, input_shape: Any) -> None:
        self._weights(int(input_shape[-1]), 3, (2, 3 * self.units), self.bias_initializer)

    def call(self, inputs: Any, states: Any) -> Any:
        h_tm1 = states[0]
        if self.bias is not None:
            input_bias, recurrent_bias = array_ops.unstack(self.bias)
        matrix_x = math_ops.matmul(inputs, self.kernel)
        if self.bias is not None:
            matrix_x = nn_ops.bias_add(matrix_x, input_bias)
        x_z, x_r, x_h = array_ops.split(matrix_x, 3, axis=-1)
        matrix_inner = math_ops.matmul(h_tm1, self.recurrent_kernel)
        if self.bias is not None:
            matrix_inner = nn_ops.bias_add(matrix_inner, recurrent_bias)
        r_z, r_r, r_h = array_ops.split(matrix_inner, [self.units, self.units, -1], axis=-1)
        z = self.recurrent_activation(x_z + r_z)
        r = self.recurrent_activation(x_r + r_r)
        hh = self.activation(x_h + r * r_h)
        h = z * h_tm1 + (1 - z) * hh
        return h, [h]


def _time_loop(cell: Any, inputs: Any, states: list[Any], go_backwards: bool) -> tuple:
    """tf_keras' backend.rnn as in a TF1 program: (last output, outputs [batch, time,
    ...], final states). Every step's output is kept, as tf_keras does with tf2 off; with
    tf2 on it keeps one element, rewritten each step, which a TensorArrayV3 (the client's
    TensorArray, TF's with v1 control flow) refuses."""
    inputs = array_ops.transpose(inputs, [1, 0, 2])
    steps = array_ops.shape(inputs)[0]
    input_ta = tensor_array_ops.TensorArray(
        inputs.dtype, size=steps, tensor_array_name="input_ta_0"
    )
    input_ta = input_ta.unstack(array_ops.reverse(inputs, [0]) if go_backwards else inputs)
    output_zero, _ = cell(inputs[0], list(states))
    output_ta = tensor_array_ops.TensorArray(
        output_zero.dtype,
        size=steps,
        element_shape=output_zero.shape,
        tensor_array_name="output_ta_0",
    )
    time = convert_to_tensor(0, name="time")

    def step(t: Any, out_ta: Any, *state: Any) -> Any:
        output, new_state = cell(input_ta.read(t), list(state))
        for s, new in zip(state, new_state):
            new.set_shape(s.shape)
        out_ta = out_ta.write(t, output)
        return (t + 1, out_ta, *new_state)

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
                array_ops.zeros([batch, n], inputs.dtype) for n in self.cell.state_size
            ]
        states = [convert_to_tensor(s) for s in nest.flatten(initial_state)]
        last, outputs, states = _time_loop(self.cell, inputs, states, self.go_backwards)
        if isinstance(self.cell, (LSTMCell, GRUCell)) and tf2.enabled():
            # tf_keras' LSTM and GRU report which implementation ran (0: the generic loop).
            constant(0.0, name="runtime")
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
