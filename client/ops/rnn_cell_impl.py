"""Client API: tf.nn.rnn_cell (TF's rnn_cell_impl / tf_keras legacy_cells): BasicRNNCell,
BasicLSTMCell, LSTMCell (peepholes, cell clip, projection), GRUCell, MultiRNNCell,
DropoutWrapper and LSTMStateTuple, with TF's variable names ("rnn/basic_lstm_cell/kernel",
"multi_rnn_cell/cell_0/gru_cell/gates/bias" ...) and gate layouts.

A cell is a layer: its variables are made at its first call, in the variable scope current
then, and shared by every later call (each time step). Graph building only.
"""

from __future__ import annotations

import collections
import hashlib
from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.nest import flatten as _flatten
from client.framework.nest import pack_sequence_as as _pack_as
from client.framework.op_builder import constant, convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.layers.base import Layer
from client.ops import array_ops, init_ops, math_ops, nn_ops
from client.ops import variable_scope as vs
from client.ops.partitioned_variables import fixed_size_partitioner

_WEIGHTS = "kernel"
_BIAS = "bias"


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """(c, h): the LSTM's cell state and output."""

    __slots__ = ()

    @property
    def dtype(self) -> Any:
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


def _map(fn: Any, structure: Any) -> Any:
    return _pack_as(structure, [fn(x) for x in _flatten(structure)])


def _concat(prefix: Any, suffix: Any, static: bool = False) -> Any:
    """TF's rnn_cell_impl._concat: [batch] + state size, as a shape tensor or TensorShape."""
    p: Any
    s: Any
    if isinstance(prefix, _ops.Tensor):
        p = prefix
        if p.shape.ndims == 0:
            p = array_ops.expand_dims(p, 0)
        p_static = None
    else:
        p_shape = TensorShape(prefix)
        p_static = p_shape.as_list() if p_shape.ndims is not None else None
        p = constant(p_static, dtype=dtypes.int32) if p_shape.is_fully_defined() else None
    s_shape = TensorShape(suffix)
    s_static = s_shape.as_list() if s_shape.ndims is not None else None
    s = constant(s_static, dtype=dtypes.int32) if s_shape.is_fully_defined() else None
    if static:
        if p_static is None or s_static is None:
            return None
        return TensorShape(p_static).concatenate(s_static)
    if p is None or s is None:
        raise ValueError(f"Provided a prefix or suffix of None: {prefix} and {suffix}")
    return array_ops.concat([p, s], 0)


def _zero_state_tensors(state_size: Any, batch_size: Any, dtype: Any) -> Any:
    def get(s: Any) -> Any:
        c = _concat(batch_size, s)
        size = array_ops.zeros(c, dtype=dtype)
        static = _concat(batch_size, s, static=True)
        if static is not None:
            size.set_shape(static)
        return size

    return _map(get, state_size)


class RNNCell(Layer):
    """An RNN cell: (output, new_state) = cell(inputs, state)."""

    def __init__(
        self, trainable: bool = True, name: str | None = None, dtype: Any = None, **kwargs: Any
    ) -> None:
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)
        self._rnncell_scope: Any = None

    @property
    def state_size(self) -> Any:
        raise NotImplementedError

    @property
    def output_size(self) -> Any:
        raise NotImplementedError

    def __call__(self, inputs: Any, state: Any, scope: Any = None, **kwargs: Any) -> Any:
        """TF's RNNCell.__call__: without a scope, re-enters the variable scope current at
        the first call, with its name scope opened under the current one (static_rnn's
        MultiRNNCell ops go in "rnn/rnn/multi_rnn_cell", its variables in
        "rnn/multi_rnn_cell")."""
        if scope is not None:
            with vs.variable_scope(scope) as s:
                return super().__call__(inputs, state, scope=s, **kwargs)
        if self._rnncell_scope is None:
            self._rnncell_scope = vs.get_variable_scope()
        with vs.variable_scope(self._rnncell_scope):
            return super().__call__(inputs, state, **kwargs)

    def get_initial_state(
        self, inputs: Any = None, batch_size: Any = None, dtype: Any = None
    ) -> Any:
        if inputs is not None:
            inputs = convert_to_tensor(inputs)
            batch_size = (
                inputs.shape[0] if inputs.shape[0] is not None else array_ops.shape(inputs)[0]
            )
            dtype = inputs.dtype
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with _ops.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            return _zero_state_tensors(self.state_size, batch_size, dtype)


class LayerRNNCell(RNNCell):
    """TF's LayerRNNCell (the built-in cells): a plain layer call, in the layer's own
    scope, without RNNCell's re-entered variable scope."""

    def __call__(self, inputs: Any, state: Any, scope: Any = None, **kwargs: Any) -> Any:
        return Layer.__call__(self, inputs, state, scope=scope, **kwargs)


def _input_depth(inputs_shape: Any, cls: str) -> int:
    if inputs_shape[-1] is None:
        raise ValueError(f"Expected inputs.shape[-1] to be known, saw shape: {inputs_shape}")
    return int(inputs_shape[-1])


def _linear(inputs: Any, state: Any, kernel: Any, bias: Any) -> Any:
    """A cell's gate inputs: bias_add(matmul(concat([inputs, state], 1), kernel), bias)."""
    return nn_ops.bias_add(math_ops.matmul(array_ops.concat([inputs, state], 1), kernel), bias)


def _add_kernel_and_bias(
    cell: RNNCell,
    kernel_shape: list[int],
    bias_shape: list[int],
    initializer: Any = None,
    partitioner: Any = None,
) -> tuple[Any, Any]:
    """The cell's "kernel" (by `initializer`, split by `partitioner` if any) and its
    "bias", which starts at zeros."""
    kernel = cell.add_weight(
        _WEIGHTS, kernel_shape, initializer=initializer, partitioner=partitioner
    )
    zeros = init_ops.zeros_initializer(dtype=cell.dtype)
    return kernel, cell.add_weight(_BIAS, bias_shape, initializer=zeros)


class BasicRNNCell(LayerRNNCell):
    def __init__(
        self,
        num_units: int,
        activation: Any = None,
        reuse: Any = None,
        name: str | None = None,
        dtype: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._activation = activation or math_ops.tanh

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape: Any) -> None:
        depth = _input_depth(inputs_shape, "BasicRNNCell")
        n = self._num_units
        self._kernel, self._bias = _add_kernel_and_bias(self, [depth + n, n], [n])

    def call(self, inputs: Any, state: Any) -> Any:
        output = self._activation(_linear(inputs, state, self._kernel, self._bias))
        return output, output


class GRUCell(LayerRNNCell):
    def __init__(
        self,
        num_units: int,
        activation: Any = None,
        reuse: Any = None,
        kernel_initializer: Any = None,
        bias_initializer: Any = None,
        name: str | None = None,
        dtype: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._activation = activation or math_ops.tanh
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape: Any) -> None:
        depth = _input_depth(inputs_shape, "GRUCell")
        n = self._num_units
        self._gate_kernel = self.add_weight(
            f"gates/{_WEIGHTS}", [depth + n, 2 * n], initializer=self._kernel_initializer
        )
        self._gate_bias = self.add_weight(
            f"gates/{_BIAS}",
            [2 * n],
            initializer=self._bias_initializer
            or init_ops.constant_initializer(1.0, dtype=self.dtype),
        )
        self._candidate_kernel = self.add_weight(
            f"candidate/{_WEIGHTS}", [depth + n, n], initializer=self._kernel_initializer
        )
        self._candidate_bias = self.add_weight(
            f"candidate/{_BIAS}",
            [n],
            initializer=self._bias_initializer or init_ops.zeros_initializer(dtype=self.dtype),
        )

    def call(self, inputs: Any, state: Any) -> Any:
        value = math_ops.sigmoid(_linear(inputs, state, self._gate_kernel, self._gate_bias))
        r, u = array_ops.split(value=value, num_or_size_splits=2, axis=1)
        r_state = r * state
        candidate = _linear(inputs, r_state, self._candidate_kernel, self._candidate_bias)
        c = self._activation(candidate)
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class BasicLSTMCell(LayerRNNCell):
    def __init__(
        self,
        num_units: int,
        forget_bias: float = 1.0,
        state_is_tuple: bool = True,
        activation: Any = None,
        reuse: Any = None,
        name: str | None = None,
        dtype: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self) -> Any:
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape: Any) -> None:
        depth = _input_depth(inputs_shape, "BasicLSTMCell")
        n = self._num_units
        self._kernel, self._bias = _add_kernel_and_bias(self, [depth + n, 4 * n], [4 * n])

    def call(self, inputs: Any, state: Any) -> Any:
        one = constant(1, dtype=dtypes.int32)
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = array_ops.split(value=state, num_or_size_splits=2, axis=one)
        gate_inputs = _linear(inputs, h, self._kernel, self._bias)
        i, j, f, o = array_ops.split(value=gate_inputs, num_or_size_splits=4, axis=one)
        forget_bias = constant(self._forget_bias, dtype=f.dtype)
        sigmoid, add, multiply = math_ops.sigmoid, math_ops.add, math_ops.multiply
        new_c = add(
            multiply(c, sigmoid(add(f, forget_bias))), multiply(sigmoid(i), self._activation(j))
        )
        new_h = multiply(self._activation(new_c), sigmoid(o))
        if self._state_is_tuple:
            return new_h, LSTMStateTuple(new_c, new_h)
        return new_h, array_ops.concat([new_c, new_h], 1)


def _fixed_size_partitioner(shards: int | None) -> Any:
    """LSTMCell's num_unit_shards / num_proj_shards: TF's fixed_size_partitioner(shards)."""
    return None if shards is None else fixed_size_partitioner(shards)


class LSTMCell(LayerRNNCell):
    def __init__(
        self,
        num_units: int,
        use_peepholes: bool = False,
        cell_clip: Any = None,
        initializer: Any = None,
        num_proj: Any = None,
        proj_clip: Any = None,
        num_unit_shards: Any = None,
        num_proj_shards: Any = None,
        forget_bias: float = 1.0,
        state_is_tuple: bool = True,
        activation: Any = None,
        reuse: Any = None,
        name: str | None = None,
        dtype: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._num_unit_shards, self._num_proj_shards = num_unit_shards, num_proj_shards
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self) -> Any:
        h = self._num_proj or self._num_units
        if self._state_is_tuple:
            return LSTMStateTuple(self._num_units, h)
        return self._num_units + h

    output_size = property(lambda self: self._num_proj or self._num_units)

    def build(self, inputs_shape: Any) -> None:
        depth = _input_depth(inputs_shape, "LSTMCell")
        n = self._num_units
        h_depth = self._num_proj or n
        self._kernel, self._bias = _add_kernel_and_bias(
            self,
            [depth + h_depth, 4 * n],
            [4 * n],
            self._initializer,
            _fixed_size_partitioner(self._num_unit_shards),
        )
        if self._use_peepholes:
            self._w_f_diag = self.add_weight("w_f_diag", [n], initializer=self._initializer)
            self._w_i_diag = self.add_weight("w_i_diag", [n], initializer=self._initializer)
            self._w_o_diag = self.add_weight("w_o_diag", [n], initializer=self._initializer)
        if self._num_proj is not None:
            self._proj_kernel = self.add_weight(
                f"projection/{_WEIGHTS}",
                [n, self._num_proj],
                initializer=self._initializer,
                partitioner=_fixed_size_partitioner(self._num_proj_shards),
            )

    def call(self, inputs: Any, state: Any) -> Any:
        n = self._num_units
        num_proj = self._num_proj or n
        sigmoid = math_ops.sigmoid
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = array_ops.slice(state, [0, 0], [-1, n])
            m_prev = array_ops.slice(state, [0, n], [-1, num_proj])
        lstm_matrix = _linear(inputs, m_prev, self._kernel, self._bias)
        i, j, f, o = array_ops.split(value=lstm_matrix, num_or_size_splits=4, axis=1)
        if self._use_peepholes:
            c = sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev + sigmoid(
                i + self._w_i_diag * c_prev
            ) * self._activation(j)
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = math_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sigmoid(o + self._w_o_diag * c) * self._activation(c)
        else:
            m = sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = math_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        if self._state_is_tuple:
            return m, LSTMStateTuple(c, m)
        return m, array_ops.concat([c, m], 1)


class MultiRNNCell(RNNCell):
    """Cells stacked: cell i runs in variable scope "cell_<i>"."""

    def __init__(self, cells: list[Any], state_is_tuple: bool = True) -> None:
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple

    @property
    def state_size(self) -> Any:
        if self._state_is_tuple:
            return tuple(c.state_size for c in self._cells)
        return sum(c.state_size for c in self._cells)

    output_size = property(lambda self: self._cells[-1].output_size)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with _ops.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            if self._state_is_tuple:
                return tuple(c.zero_state(batch_size, dtype) for c in self._cells)
            return super().zero_state(batch_size, dtype)

    def call(self, inputs: Any, state: Any) -> Any:
        cur_pos = 0
        cur_inp = inputs
        new_states = []
        for i, cell in enumerate(self._cells):
            with vs.variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    cur_state = state[i]
                else:
                    cur_state = array_ops.slice(state, [0, cur_pos], [-1, cell.state_size])
                    cur_pos += cell.state_size
                cur_inp, new_state = cell(cur_inp, cur_state)
                new_states.append(new_state)
        if self._state_is_tuple:
            return cur_inp, tuple(new_states)
        return cur_inp, array_ops.concat(new_states, 1)


def _default_dropout_state_filter_visitor(substate: Any) -> Any:
    """TF's default: no dropout on an LSTM's memory c, dropout everywhere else."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


def _dropout_flags(visitor: Any, structure: Any) -> list[bool]:
    """Per flattened leaf of `structure`, whether the visitor lets it drop out (TF's
    nest.get_traverse_shallow_structure: True on a sequence descends into it)."""
    verdict = visitor(structure)
    if isinstance(verdict, bool):
        if verdict and isinstance(structure, (list, tuple)):
            return [f for v in structure for f in _dropout_flags(visitor, v)]
        return [verdict] * len(_flatten(structure))
    return [bool(f) for f in _flatten(verdict)]


class DropoutWrapper(RNNCell):
    """Dropout on a cell's inputs, outputs and/or state: fresh masks per step, or with
    variational_recurrent=True one mask per session.run drawn when the wrapper is built
    (shape [1, size], shared by the batch and every time step), as TF's
    DropoutWrapperBase."""

    def __init__(
        self,
        cell: Any,
        input_keep_prob: Any = 1.0,
        output_keep_prob: Any = 1.0,
        state_keep_prob: Any = 1.0,
        variational_recurrent: bool = False,
        input_size: Any = None,
        dtype: Any = None,
        seed: Any = None,
        dropout_state_filter_visitor: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.cell = cell
        self._state_filter = dropout_state_filter_visitor or _default_dropout_state_filter_visitor
        with _ops.name_scope("DropoutWrapperInit"):

            def tensor_and_const(v: Any) -> Any:
                t = convert_to_tensor(v)
                return t, (float(v) if isinstance(v, (int, float)) else None)

            self._input_keep_prob, self._input_const = tensor_and_const(input_keep_prob)
            self._state_keep_prob, self._state_const = tensor_and_const(state_keep_prob)
            self._output_keep_prob, self._output_const = tensor_and_const(output_keep_prob)
        for const in (self._input_const, self._state_const, self._output_const):
            if const is not None and not 0 <= const <= 1:
                raise ValueError(f"Parameter keep_prob must be between 0 and 1: {const}")
        self._seed = seed
        self._variational = variational_recurrent
        self._input_noise = self._state_noise = self._output_noise = None
        if variational_recurrent:
            if dtype is None:
                raise ValueError("When variational_recurrent=True, dtype must be provided")
            if self._input_const is None or self._input_const < 1.0:
                if input_size is None:
                    raise ValueError(
                        "When variational_recurrent=True and input_keep_prob < 1.0 or is "
                        "unknown, input_size must be provided"
                    )
                self._input_noise = self._batch_noise(input_size, "input", dtype)
            self._state_noise = self._batch_noise(cell.state_size, "state", dtype)
            self._output_noise = self._batch_noise(cell.output_size, "output", dtype)

    state_size = property(lambda self: self.cell.state_size)
    output_size = property(lambda self: self.cell.output_size)

    def _batch_noise(self, sizes: Any, salt: str, dtype: Any) -> Any:
        """Uniform [0, 1) noise of shape [1, size] per leaf of `sizes`."""
        from client.ops.random_ops import random_uniform

        noise = []
        for i, size in enumerate(_flatten(sizes)):
            shape = array_ops.concat(([1], TensorShape(size).as_list()), 0)
            noise.append(random_uniform(shape, seed=self._gen_seed(salt, i), dtype=dtype))
        return _pack_as(sizes, noise)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        with _ops.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            return self.cell.zero_state(batch_size, dtype)

    def _gen_seed(self, salt_prefix: str, index: int) -> Any:
        if self._seed is None:
            return None
        digest = hashlib.md5((str(self._seed) + f"{salt_prefix}_{index}").encode("utf-8"))
        return int(digest.hexdigest()[:8], 16) & 0x7FFFFFFF

    @staticmethod
    def _variational_value(value: Any, noise: Any, keep_prob: Any) -> Any:
        """floor(keep_prob + noise) keeps with probability keep_prob; kept values scale."""
        binary = math_ops.floor(keep_prob + noise)
        out = math_ops.divide(value, keep_prob) * binary
        out.set_shape(value.shape)
        return out

    def _dropout(
        self, values: Any, salt: str, noise: Any, keep_prob: Any, flags: list | None = None
    ) -> Any:
        flat = _flatten(values)
        flags = flags if flags is not None else [True] * len(flat)
        flat_noise = _flatten(noise) if self._variational else [None] * len(flat)
        out = []
        for i, (v, drop, n) in enumerate(zip(flat, flags, flat_noise)):
            if not drop:
                out.append(v)
            elif self._variational:
                out.append(self._variational_value(v, n, keep_prob))
            else:
                out.append(nn_ops.dropout(v, rate=1.0 - keep_prob, seed=self._gen_seed(salt, i)))
        return _pack_as(values, out)

    def __call__(self, inputs: Any, state: Any, scope: Any = None, **kwargs: Any) -> Any:
        # A wrapper opens no variable scope of its own (TF's _RNNCellWrapperV1). A constant
        # keep probability enters the graph as TF's Python float does.
        def keep(const: float | None, tensor: Any) -> Any:
            return tensor if const is None else const

        if self._input_const is None or self._input_const < 1:
            p = keep(self._input_const, self._input_keep_prob)
            inputs = self._dropout(inputs, "input", self._input_noise, p)
        output, new_state = self.cell(inputs, state, scope=scope, **kwargs)
        if self._state_const is None or self._state_const < 1:
            p = keep(self._state_const, self._state_keep_prob)
            flags = _dropout_flags(self._state_filter, new_state)
            new_state = self._dropout(new_state, "state", self._state_noise, p, flags)
        if self._output_const is None or self._output_const < 1:
            p = keep(self._output_const, self._output_keep_prob)
            output = self._dropout(output, "output", self._output_noise, p)
        return output, new_state


class ResidualWrapper(RNNCell):
    """outputs = cell outputs + inputs."""

    def __init__(self, cell: Any, residual_fn: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cell, self._residual_fn = cell, residual_fn

    state_size = property(lambda self: self.cell.state_size)
    output_size = property(lambda self: self.cell.output_size)

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        return self.cell.zero_state(batch_size, dtype)

    def __call__(self, inputs: Any, state: Any, scope: Any = None, **kwargs: Any) -> Any:
        outputs, new_state = self.cell(inputs, state, scope=scope, **kwargs)
        fn = self._residual_fn or (lambda i, o: _map(lambda x: x, o) + i)
        return fn(inputs, outputs), new_state
