"""Client, graph building: CTC as TensorFlow's python/ops/ctc_ops.py builds it in TF1
programs — tf.compat.v1.nn.ctc_loss (one CTCLoss node; batch-major logits transposed
first), tf.compat.v1.nn.ctc_loss_v2 with SparseTensor labels (the blank column moved last
and the labels shifted when blank_index is not the last class) or dense labels (made a
SparseTensor first; TF's own dense path differs, see _ctc_loss_dense), tf.nn.ctc_greedy_decoder
and tf.compat.v1.nn.ctc_beam_search_decoder (decoded SparseTensors and log
probabilities). CTCLoss's gradient is its second output scaled by the loss gradient, as
TF's _CTCLossGrad; TF's C++ shape functions for the four ops."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.gradient_registry import NotDifferentiable, RegisterGradient
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.sparse_tensor import SparseTensor
from client.framework.tensor_shape import TensorShape, dimension_value
from client.ops import array_ops, math_ops, tf1_extras

_HALF_TYPES = (dtypes.float16, dtypes.bfloat16)
_SECOND_DERIVATIVE = (
    "Currently there is no way to take the second  derivative of ctc_loss due to the fused "
    "implementation's interaction  with tf.gradients()"
)


def ctc_loss(
    labels: Any,
    inputs: Any = None,
    sequence_length: Any = None,
    preprocess_collapse_repeated: bool = False,
    ctc_merge_repeated: bool = True,
    ignore_longer_outputs_than_inputs: bool = False,
    time_major: bool = True,
    logits: Any = None,
) -> _ops.Tensor:
    if not isinstance(labels, SparseTensor):
        raise TypeError(
            "Expected argument `labels` to be a SparseTensor. "
            f"Received labels={labels} of type: {type(labels).__name__}"
        )
    if logits is not None and inputs is not None:
        raise ValueError("Cannot specify both 'logits' and 'inputs'")
    inputs = convert_to_tensor(logits if logits is not None else inputs, name="logits")
    if not time_major:
        inputs = array_ops.transpose(inputs, [1, 0, 2])  # (B,T,N) => (T,B,N)
    orig_dtype = inputs.dtype
    if orig_dtype in _HALF_TYPES:
        inputs = math_ops.cast(inputs, dtypes.float32)
    loss = apply_op(
        "CTCLoss",
        [inputs, labels.indices, labels.values, sequence_length],
        {
            "preprocess_collapse_repeated": bool(preprocess_collapse_repeated),
            "ctc_merge_repeated": bool(ctc_merge_repeated),
            "ignore_longer_outputs_than_inputs": bool(ignore_longer_outputs_than_inputs),
        },
    ).outputs[0]
    if orig_dtype in _HALF_TYPES:
        loss = math_ops.cast(loss, orig_dtype)
    return loss


def _get_dim(tensor: Any, i: int) -> Any:
    return dimension_value(tensor.shape[i]) or array_ops.shape(tensor)[i]


def ctc_loss_v2(
    labels: Any,
    logits: Any,
    label_length: Any,
    logit_length: Any,
    logits_time_major: bool = True,
    unique: Any = None,
    blank_index: int | None = None,
    name: str | None = None,
) -> _ops.Tensor:
    if not isinstance(labels, SparseTensor):
        return _ctc_loss_dense(
            labels, logits, label_length, logit_length, logits_time_major, unique,
            0 if blank_index is None else blank_index, name,
        )  # fmt: skip
    if blank_index is None:
        raise ValueError("Argument `blank_index` must be provided when labels is a SparseTensor.")
    if blank_index < 0:
        blank_index += _get_dim(logits, 2)
    if blank_index != _get_dim(logits, 2) - 1:
        logits = array_ops.concat(
            [
                logits[:, :, :blank_index],
                logits[:, :, blank_index + 1 :],
                logits[:, :, blank_index : blank_index + 1],
            ],
            axis=2,
        )
        labels = SparseTensor(
            labels.indices,
            array_ops.where(labels.values < blank_index, labels.values, labels.values - 1),
            labels.dense_shape,
        )
    return ctc_loss(
        labels=labels, inputs=logits, sequence_length=logit_length, time_major=logits_time_major
    )


def _ctc_loss_dense(
    labels: Any,
    logits: Any,
    label_length: Any,
    logit_length: Any,
    logits_time_major: bool,
    unique: Any,
    blank_index: int,
    name: str | None,
) -> _ops.Tensor:
    """Dense [batch, max_label_length] labels with their lengths. TF computes these with
    ctc_loss_dense (log-space forward-backward scans under a custom gradient); the client
    takes each row's first label_length ids as a SparseTensor and builds the CTCLoss path
    above: the same loss and gradient, a different graph. `unique` (TF's speed-up for
    repeated labels) does not change the result and is not used."""
    del unique
    with _ops.name_scope(name, "ctc_loss_dense", [logits, labels, label_length, logit_length]):
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        label_length = convert_to_tensor(label_length, name="label_length")
        logit_length = convert_to_tensor(logit_length, name="logit_length")
        mask = tf1_extras.sequence_mask(label_length, array_ops.shape(labels)[1])
        indices = array_ops.where(mask)
        values = math_ops.cast(tf1_extras.gather_nd(labels, indices), dtypes.int32)
        shape = math_ops.cast(array_ops.shape(labels), dtypes.int64)
        return ctc_loss_v2(
            SparseTensor(indices, values, shape),
            logits,
            None,
            math_ops.cast(logit_length, dtypes.int32),
            logits_time_major,
            blank_index=blank_index,
        )


def ctc_greedy_decoder(
    inputs: Any, sequence_length: Any, merge_repeated: bool = True, blank_index: int | None = None
) -> tuple[list[SparseTensor], _ops.Tensor]:
    attrs: dict[str, Any] = {"merge_repeated": bool(merge_repeated)}
    if blank_index is not None:
        attrs["blank_index"] = int(blank_index)
    ix, vals, shape, log_probs = apply_op(
        "CTCGreedyDecoder", [inputs, sequence_length], attrs
    ).outputs
    return [SparseTensor(ix, vals, shape)], log_probs


def ctc_beam_search_decoder(
    inputs: Any,
    sequence_length: Any,
    beam_width: int = 100,
    top_paths: int = 1,
    merge_repeated: bool = True,
) -> tuple[list[SparseTensor], _ops.Tensor]:
    op = apply_op(
        "CTCBeamSearchDecoder",
        [inputs, sequence_length],
        {
            "beam_width": int(beam_width),
            "top_paths": int(top_paths),
            "merge_repeated": bool(merge_repeated),
        },
    )
    outs = op.outputs
    n = int(top_paths)
    decoded = [SparseTensor(outs[i], outs[n + i], outs[2 * n + i]) for i in range(n)]
    return decoded, outs[3 * n]


@RegisterGradient("CTCLoss")
def _ctc_loss_grad(op: Any, grad_loss: Any, _: Any) -> list[Any]:
    # The kernel's second output is d loss / d logits; a second derivative would need the
    # kernel's own gradient, so TF cuts it with PreventGradient.
    grad = apply_op("PreventGradient", [op.outputs[1]], {"message": _SECOND_DERIVATIVE})
    scale = array_ops.expand_dims(grad_loss, -1)
    return [scale * grad.outputs[0], None, None, None]


NotDifferentiable("CTCGreedyDecoder")
NotDifferentiable("CTCBeamSearchDecoder")


# -- shape functions (TF's ops/ctc_ops.cc) -----------------------------------------------


def _with_rank(s: TensorShape, rank: int) -> TensorShape:
    if s.ndims is None:
        return TensorShape([None] * rank)
    if s.ndims != rank:
        raise shape_fns.ShapeError(f"Shape must be rank {rank} but is rank {s.ndims}")
    return s


def _merge(a: int | None, b: int | None) -> int | None:
    if a is not None and b is not None and a != b:
        raise shape_fns.ShapeError(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def _ctc_loss_shape(op: Any) -> list[TensorShape]:
    inputs = _with_rank(op.inputs[0].shape, 3).as_list()
    ix = _with_rank(op.inputs[1].shape, 2).as_list()
    vals = _with_rank(op.inputs[2].shape, 1).as_list()
    seq_len = _with_rank(op.inputs[3].shape, 1).as_list()
    _merge(ix[0], vals[0])
    batch = _merge(inputs[1], seq_len[0])
    return [TensorShape([batch]), TensorShape([inputs[0], batch, inputs[2]])]


def _decoder_shapes(op: Any, top_paths: int) -> list[TensorShape]:
    inputs = _with_rank(op.inputs[0].shape, 3).as_list()
    seq_len = _with_rank(op.inputs[1].shape, 1).as_list()
    batch = _merge(inputs[1], seq_len[0])
    return [
        *[TensorShape([None, 2])] * top_paths,
        *[TensorShape([None])] * top_paths,
        *[TensorShape([2])] * top_paths,
        TensorShape([batch, top_paths]),
    ]


shape_fns.SHAPE_FNS["CTCLoss"] = _ctc_loss_shape
shape_fns.SHAPE_FNS["CTCLossV2"] = _ctc_loss_shape
shape_fns.SHAPE_FNS["CTCGreedyDecoder"] = lambda op: _decoder_shapes(op, 1)
shape_fns.SHAPE_FNS["CTCBeamSearchDecoder"] = lambda op: _decoder_shapes(
    op, int(op.get_attr("top_paths"))
)
