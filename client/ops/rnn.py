"""Client API: tf.nn.static_rnn, dynamic_rnn, bidirectional_dynamic_rnn,
static_bidirectional_rnn (TF's rnn.py, control flow v1).

dynamic_rnn runs the cell in a while loop over time: inputs are unstacked into a
TensorArray, each step's output is written into another, and sequence_length stops each
batch entry at its length (zero outputs, state copied through). Gradients flow back through
the loop and the TensorArrays (client/ops/gradients/tensor_array_grad.py).
"""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.nest import flatten as _flatten
from client.framework.nest import pack_sequence_as as _pack_as
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, control_flow_ops, math_ops
from client.ops import variable_scope as vs
from client.ops.rnn_cell_impl import _concat
from client.ops.tensor_array_ops import TensorArray


def _should_cache() -> bool:
    """TF's rnn._should_cache: outside a while loop, variables made by the cell get a
    caching device, so their values are read once, before the loop."""
    ctxt = _ops.get_default_graph()._get_control_flow_context()
    while ctxt is not None:
        if isinstance(ctxt, control_flow_ops.WhileContext):
            return False
        ctxt = ctxt.outer_context
    return True


def _cache(varscope: Any) -> None:
    if _should_cache() and varscope.caching_device is None:
        varscope.set_caching_device(lambda op: op.device)


def _map(fn: Any, structure: Any) -> Any:
    return _pack_as(structure, [fn(x) for x in _flatten(structure)])


def _infer_state_dtype(explicit_dtype: Any, state: Any) -> Any:
    if explicit_dtype is not None:
        return explicit_dtype
    flat = _flatten(state)
    if not flat:
        raise ValueError("Unable to infer dtype from empty state.")
    return flat[0].dtype


def _initial_state(cell: Any, initial_state: Any, batch_size: Any, dtype: Any, what: str) -> Any:
    if initial_state is not None:
        return initial_state
    if not dtype:
        raise ValueError(what)
    return cell.get_initial_state(inputs=None, batch_size=batch_size, dtype=dtype)


def reverse_sequence(
    input: Any,
    seq_lengths: Any,
    seq_axis: Any = None,
    batch_axis: Any = None,
    name: str | None = None,
    seq_dim: Any = None,
    batch_dim: Any = None,
) -> Any:
    seq_axis = seq_dim if seq_axis is None else seq_axis
    batch_axis = (batch_dim if batch_dim is not None else 0) if batch_axis is None else batch_axis
    return apply_op(
        "ReverseSequence",
        [input, seq_lengths],
        {"seq_dim": int(seq_axis), "batch_dim": int(batch_axis)},
        name,
    ).outputs[0]


# -- static (unrolled) --------------------------------------------------------------------
def _rnn_step(
    time: Any,
    sequence_length: Any,
    min_sequence_length: Any,
    max_sequence_length: Any,
    zero_output: Any,
    state: Any,
    call_cell: Any,
    skip_conditionals: bool = False,
) -> tuple[Any, Any]:
    """One step with sequence_length: entries past their length output zeros and keep
    their state (TF's _rnn_step)."""
    flat_state = _flatten(state)
    flat_zero_output = _flatten(zero_output)
    copy_cond = time >= sequence_length

    def copy_one_through(output: Any, new_output: Any) -> Any:
        if isinstance(output, TensorArray) or output.shape.ndims == 0:
            return new_output
        with _ops.colocate_with(new_output):
            return array_ops.where(copy_cond, output, new_output)

    def copy_some_through(flat_new_output: list[Any], flat_new_state: list[Any]) -> list[Any]:
        return [copy_one_through(z, n) for z, n in zip(flat_zero_output, flat_new_output)] + [
            copy_one_through(s, n) for s, n in zip(flat_state, flat_new_state)
        ]

    def maybe_copy_some_through() -> list[Any]:
        new_output, new_state = call_cell()
        flat_new_state, flat_new_output = _flatten(new_state), _flatten(new_output)
        return control_flow_ops.cond(
            time < min_sequence_length,
            lambda: flat_new_output + flat_new_state,
            lambda: copy_some_through(flat_new_output, flat_new_state),
        )

    if skip_conditionals:
        new_output, new_state = call_cell()
        final = copy_some_through(_flatten(new_output), _flatten(new_state))
    else:
        final = control_flow_ops.cond(
            time >= max_sequence_length,
            lambda: flat_zero_output + flat_state,
            maybe_copy_some_through,
        )
    final = list(final)
    n_out = len(flat_zero_output)
    final_output, final_state = final[:n_out], final[n_out:]
    for out, zero in zip(final_output, flat_zero_output):
        out.set_shape(zero.shape)
    for sub, old in zip(final_state, flat_state):
        if not isinstance(sub, TensorArray):
            sub.set_shape(old.shape)
    return _pack_as(zero_output, final_output), _pack_as(state, final_state)


def static_rnn(
    cell: Any,
    inputs: Any,
    initial_state: Any = None,
    dtype: Any = None,
    sequence_length: Any = None,
    scope: Any = None,
) -> tuple[list[Any], Any]:
    """The cell applied to each element of the list `inputs` in turn (unrolled)."""
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    outputs = []
    with vs.variable_scope(scope or "rnn") as varscope:
        _cache(varscope)
        first = inputs[0]
        while isinstance(first, (list, tuple)):
            first = first[0]
        first = convert_to_tensor(first)
        fixed_batch_size = first.shape[0] if first.shape.ndims else None
        batch_size = fixed_batch_size if fixed_batch_size else array_ops.shape(first)[0]
        state = _initial_state(
            cell,
            initial_state,
            batch_size,
            dtype,
            "If no initial_state is provided, dtype must be specified",
        )
        if sequence_length is not None:
            sequence_length = convert_to_tensor(sequence_length, name="sequence_length")

            def zero_output_for(size: Any) -> Any:
                out = array_ops.zeros(
                    array_ops.stack(_concat(batch_size, size)), _infer_state_dtype(dtype, state)
                )
                out.set_shape(TensorShape([fixed_batch_size]).concatenate(TensorShape(size)))
                return out

            zero_output = _map(zero_output_for, cell.output_size)
            sequence_length = math_ops.cast(sequence_length, dtypes.int32)
            min_len = math_ops.reduce_min(sequence_length)
            max_len = math_ops.reduce_max(sequence_length)
        for time, input_ in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()

            def call_cell(input_: Any = input_, state: Any = state) -> Any:
                return cell(input_, state)

            if sequence_length is not None:
                output, state = _rnn_step(
                    time, sequence_length, min_len, max_len, zero_output, state, call_cell
                )
            else:
                output, state = call_cell()
            outputs.append(output)
        return outputs, state


def _reverse_seq(input_seq: list[Any], lengths: Any) -> list[Any]:
    if lengths is None:
        return list(reversed(input_seq))
    flat_seq = [_flatten(x) for x in input_seq]
    flat_results: list[list[Any]] = [[] for _ in input_seq]
    for sequence in zip(*flat_seq):
        joined = array_ops.stack(list(sequence))
        reversed_ = reverse_sequence(joined, lengths, 0, 1)
        for r, out in zip(array_ops.unstack(reversed_), flat_results):
            r.set_shape(sequence[0].shape)
            out.append(r)
    return [_pack_as(x, r) for x, r in zip(input_seq, flat_results)]


def static_bidirectional_rnn(
    cell_fw: Any,
    cell_bw: Any,
    inputs: Any,
    initial_state_fw: Any = None,
    initial_state_bw: Any = None,
    dtype: Any = None,
    sequence_length: Any = None,
    scope: Any = None,
) -> tuple[Any, Any, Any]:
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(
                cell_fw, inputs, initial_state_fw, dtype, sequence_length, scope=fw_scope
            )
        with vs.variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_seq(list(inputs), sequence_length)
            tmp, state_bw = static_rnn(
                cell_bw, reversed_inputs, initial_state_bw, dtype, sequence_length, scope=bw_scope
            )
    output_bw = _reverse_seq(tmp, sequence_length)
    outputs = [
        _pack_as(fw, [array_ops.concat([a, b], 1) for a, b in zip(_flatten(fw), _flatten(bw))])
        for fw, bw in zip(output_fw, output_bw)
    ]
    return outputs, state_fw, state_bw


# -- dynamic (while loop) -----------------------------------------------------------------
def _transpose_batch_time(x: Any) -> Any:
    shape = x.shape
    if shape.ndims is not None and shape.ndims < 2:
        return x
    x_rank = array_ops.rank(x)
    x_t = array_ops.transpose(x, array_ops.concat([[1, 0], math_ops.range(2, x_rank)], axis=0))
    if shape.ndims is not None:
        x_t.set_shape(TensorShape([shape.dims[1], shape.dims[0]]).concatenate(shape[2:]))
    return x_t


def _best_effort_batch_size(flat_input: list[Any]) -> Any:
    for x in flat_input:
        if x.shape.ndims is None:
            continue
        if x.shape.ndims < 2:
            raise ValueError(f"Input tensor should have rank >= 2. Received input={x}")
        if x.shape[1] is not None:
            return x.shape[1]
    return array_ops.shape(flat_input[0])[1]


def dynamic_rnn(
    cell: Any,
    inputs: Any,
    sequence_length: Any = None,
    initial_state: Any = None,
    dtype: Any = None,
    parallel_iterations: Any = None,
    swap_memory: bool = False,
    time_major: bool = False,
    scope: Any = None,
) -> tuple[Any, Any]:
    with vs.variable_scope(scope or "rnn") as varscope:
        _cache(varscope)
        flat_input = [convert_to_tensor(x) for x in _flatten(inputs)]
        if not time_major:
            flat_input = [_transpose_batch_time(x) for x in flat_input]
        parallel_iterations = parallel_iterations or 32
        if sequence_length is not None:
            sequence_length = math_ops.cast(sequence_length, dtypes.int32)
            if sequence_length.shape.ndims not in (None, 1):
                raise ValueError(
                    "sequence_length must be a vector of length batch_size, but saw shape: "
                    f"{sequence_length.shape}"
                )
            sequence_length = array_ops.identity(sequence_length, name="sequence_length")
        batch_size = _best_effort_batch_size(flat_input)
        state = _initial_state(
            cell,
            initial_state,
            batch_size,
            dtype,
            "If there is no initial_state, you must give a dtype.",
        )
        inputs = _pack_as(inputs, flat_input)
        outputs, final_state = _dynamic_rnn_loop(
            cell, inputs, state, parallel_iterations, swap_memory, sequence_length, dtype
        )
        if not time_major:
            outputs = _map(_transpose_batch_time, outputs)
        return outputs, final_state


def _dynamic_rnn_loop(
    cell: Any,
    inputs: Any,
    initial_state: Any,
    parallel_iterations: int,
    swap_memory: bool,
    sequence_length: Any,
    dtype: Any,
) -> tuple[Any, Any]:
    state = initial_state
    flat_input = _flatten(inputs)
    flat_output_size = _flatten(cell.output_size)
    time_steps = array_ops.shape(flat_input[0])[0]
    batch_size = _best_effort_batch_size(flat_input)
    got_shapes = [x.shape for x in flat_input]
    shape0 = got_shapes[0]
    const_time_steps, const_batch_size = (
        shape0.as_list()[:2] if shape0.ndims is not None else (None, None)
    )
    out_dtype = _infer_state_dtype(dtype, state)
    flat_zero_output = [
        array_ops.zeros(array_ops.stack(_concat(batch_size, size)), out_dtype)
        for size in flat_output_size
    ]
    zero_output = _pack_as(cell.output_size, flat_zero_output)
    if sequence_length is not None:
        min_len = math_ops.reduce_min(sequence_length)
        max_len = math_ops.reduce_max(sequence_length)
    else:
        max_len = time_steps
    time = convert_to_tensor(0, dtype=dtypes.int32, name="time")
    with _ops.name_scope("dynamic_rnn") as base_name:
        pass

    def create_ta(name: str, element_shape: Any, dt: Any) -> TensorArray:
        return TensorArray(
            dt, size=time_steps, element_shape=element_shape, tensor_array_name=base_name + name
        )

    output_ta = tuple(
        create_ta(
            f"output_{i}",
            TensorShape([const_batch_size]).concatenate(TensorShape(size)),
            out_dtype,
        )
        for i, size in enumerate(flat_output_size)
    )
    input_ta = tuple(
        create_ta(f"input_{i}", x.shape[1:], x.dtype) for i, x in enumerate(flat_input)
    )
    input_ta = tuple(ta.unstack(x) for ta, x in zip(input_ta, flat_input))

    def time_step(time: Any, output_ta_t: Any, state: Any) -> Any:
        input_t = [ta.read(time) for ta in input_ta]
        for x, shape in zip(input_t, got_shapes):
            x.set_shape(shape[1:])
        packed = _pack_as(inputs, input_t)

        def call_cell() -> Any:
            return cell(packed, state)

        if sequence_length is not None:
            output, new_state = _rnn_step(
                time, sequence_length, min_len, max_len, zero_output, state, call_cell, True
            )
        else:
            output, new_state = call_cell()
        flat_out = _flatten(output)
        output_ta_t = tuple(ta.write(time, out) for ta, out in zip(output_ta_t, flat_out))
        return time + 1, output_ta_t, new_state

    loop_bound = math_ops.minimum(time_steps, math_ops.maximum(1, max_len))
    _, output_final_ta, final_state = control_flow_ops.while_loop(
        lambda time, *_: time < loop_bound,
        time_step,
        (time, output_ta, state),
        parallel_iterations=parallel_iterations,
        maximum_iterations=time_steps,
        swap_memory=swap_memory,
    )
    final_outputs = [ta.stack() for ta in output_final_ta]
    for out, size in zip(final_outputs, flat_output_size):
        # TF's _concat(..., static=True) (which also leaves its shape Consts behind)
        out.set_shape(_concat([const_time_steps, const_batch_size], size, static=True))
    return _pack_as(cell.output_size, final_outputs), final_state


def bidirectional_dynamic_rnn(
    cell_fw: Any,
    cell_bw: Any,
    inputs: Any,
    sequence_length: Any = None,
    initial_state_fw: Any = None,
    initial_state_bw: Any = None,
    dtype: Any = None,
    parallel_iterations: Any = None,
    swap_memory: bool = False,
    time_major: bool = False,
    scope: Any = None,
) -> tuple[Any, Any]:
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def reverse(x: Any) -> Any:
        if sequence_length is not None:
            return reverse_sequence(x, sequence_length, time_axis, batch_axis)
        return array_ops.reverse(x, axis=[time_axis])

    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw,
                inputs,
                sequence_length,
                initial_state_fw,
                dtype,
                parallel_iterations,
                swap_memory,
                time_major,
                scope=fw_scope,
            )
        with vs.variable_scope("bw") as bw_scope:
            inputs_reverse = _map(reverse, inputs)
            tmp, state_bw = dynamic_rnn(
                cell_bw,
                inputs_reverse,
                sequence_length,
                initial_state_bw,
                dtype,
                parallel_iterations,
                swap_memory,
                time_major,
                scope=bw_scope,
            )
    output_bw = _map(reverse, tmp)
    return (output_fw, output_bw), (state_fw, state_bw)
