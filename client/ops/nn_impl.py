"""Client, graph building: the sampled losses of TF's nn_impl (tf.nn.nce_loss,
sampled_softmax_loss) over the candidate samplers of candidate_sampling_ops, as
nn_impl._compute_sampled_logits builds them."""

from __future__ import annotations

import math
from typing import Any

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.gradient_registry import NotDifferentiable
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, embedding_ops, math_ops, nn_ops
from client.ops.candidate_sampling_ops import (
    compute_accidental_hits,
    log_uniform_candidate_sampler,
)

for _t in (
    "UniformCandidateSampler",
    "LogUniformCandidateSampler",
    "FixedUnigramCandidateSampler",
    "AllCandidateSampler",
    "ComputeAccidentalHits",
):
    NotDifferentiable(_t)


def _sum_rows(x: Any) -> Any:
    cols = array_ops.shape(x)[1]
    ones = array_ops.ones(array_ops.stack([cols, 1]), x.dtype)
    return array_ops.reshape(math_ops.matmul(x, ones), [-1])


def _compute_sampled_logits(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int,
    sampled_values: Any,
    subtract_log_q: bool,
    remove_accidental_hits: bool,
    partition_strategy: str,
    name: Any,
    seed: Any = None,
) -> tuple[Any, Any]:
    # A list of shards (or a PartitionedVariable) goes to embedding_lookup whole, which
    # gathers each shard's rows where it lives, as TensorFlow's does.
    if hasattr(weights, "_get_variable_list"):
        weights = list(weights)
    weights = list(weights) if isinstance(weights, (list, tuple)) else [weights]
    with _ops.name_scope(name, "compute_sampled_logits", [*weights, biases, inputs, labels]):
        labels = convert_to_tensor(labels)
        if labels.dtype != dtypes.int64:
            labels = math_ops.cast(labels, dtypes.int64)
        labels_flat = array_ops.reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(
                labels, num_true, num_sampled, True, num_classes, seed=seed
            )
        sampled, true_expected, sampled_expected = (
            array_ops.stop_gradient(s) for s in sampled_values
        )
        sampled = math_ops.cast(sampled, dtypes.int64)
        all_ids = array_ops.concat([labels_flat, sampled], 0)
        inputs = convert_to_tensor(inputs)
        all_w = embedding_ops.embedding_lookup(
            weights, all_ids, partition_strategy=partition_strategy
        )
        if all_w.dtype != inputs.dtype:
            all_w = math_ops.cast(all_w, inputs.dtype)
        # TF takes the labels' Shape once for each slice.
        true_w = array_ops.slice(
            all_w, [0, 0], array_ops.stack([array_ops.shape(labels_flat)[0], -1])
        )
        sampled_w = array_ops.slice(
            all_w, array_ops.stack([array_ops.shape(labels_flat)[0], 0]), [-1, -1]
        )
        sampled_logits = math_ops.matmul(inputs, sampled_w, transpose_b=True)
        all_b = embedding_ops.embedding_lookup(
            biases, all_ids, partition_strategy=partition_strategy
        )
        if all_b.dtype != inputs.dtype:
            all_b = math_ops.cast(all_b, inputs.dtype)
        true_b = array_ops.slice(all_b, [0], array_ops.shape(labels_flat))
        sampled_b = array_ops.slice(all_b, array_ops.shape(labels_flat), [-1])
        dim = array_ops.shape(true_w)[1:2]
        new_true_w_shape = array_ops.concat([[-1, num_true], dim], 0)
        row_wise_dots = math_ops.multiply(
            array_ops.expand_dims(inputs, 1), array_ops.reshape(true_w, new_true_w_shape)
        )
        dots_as_matrix = array_ops.reshape(row_wise_dots, array_ops.concat([[-1], dim], 0))
        true_logits = array_ops.reshape(_sum_rows(dots_as_matrix), [-1, num_true])
        true_b = array_ops.reshape(true_b, [-1, num_true])
        true_logits += true_b
        sampled_logits += sampled_b
        if remove_accidental_hits:
            acc_indices, acc_ids, acc_weights = compute_accidental_hits(
                labels, sampled, num_true=num_true
            )
            acc_indices_2d = array_ops.reshape(acc_indices, [-1, 1])
            acc_ids_2d = array_ops.reshape(math_ops.cast(acc_ids, dtypes.int32), [-1, 1])
            sparse_indices = array_ops.concat([acc_indices_2d, acc_ids_2d], 1, "sparse_indices")
            logits_shape = array_ops.concat(
                [array_ops.shape(labels)[:1], array_ops.expand_dims(num_sampled, 0)], 0
            )
            if sampled_logits.dtype != acc_weights.dtype:
                acc_weights = math_ops.cast(acc_weights, sampled_logits.dtype)
            sampled_logits += apply_op(
                "SparseToDense",
                [sparse_indices, logits_shape, acc_weights, 0.0],
                {"validate_indices": False},
            ).outputs[0]
        if subtract_log_q:
            true_logits -= math_ops.log(true_expected)
            sampled_logits -= math_ops.log(sampled_expected)
        out_logits = array_ops.concat([true_logits, sampled_logits], 1)
        out_labels = array_ops.concat(
            [array_ops.ones_like(true_logits) / num_true, array_ops.zeros_like(sampled_logits)], 1
        )
        return out_logits, out_labels


def nce_loss(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int = 1,
    sampled_values: Any = None,
    remove_accidental_hits: bool = False,
    partition_strategy: str = "mod",
    name: str = "nce_loss",
) -> Any:
    logits, labels = _compute_sampled_logits(
        weights,
        biases,
        labels,
        inputs,
        num_sampled,
        num_classes,
        num_true,
        sampled_values,
        True,
        remove_accidental_hits,
        partition_strategy,
        name,
    )
    sampled_losses = nn_ops.sigmoid_cross_entropy_with_logits(
        labels=labels, logits=logits, name="sampled_losses"
    )
    return _sum_rows(sampled_losses)


def sampled_softmax_loss(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int = 1,
    sampled_values: Any = None,
    remove_accidental_hits: bool = True,
    partition_strategy: str = "mod",
    name: str = "sampled_softmax_loss",
    seed: Any = None,
) -> Any:
    logits, labels = _compute_sampled_logits(
        weights,
        biases,
        labels,
        inputs,
        num_sampled,
        num_classes,
        num_true,
        sampled_values,
        True,
        remove_accidental_hits,
        partition_strategy,
        name,
        seed,
    )
    labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
    return nn_ops.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)


# -- smaller tf.nn helpers TF1 programs use ----------------------------------------------
def l2_normalize(
    x: Any, axis: Any = None, epsilon: float = 1e-12, name: str | None = None, dim: Any = None
) -> Any:
    axis = dim if axis is None else axis
    with _ops.name_scope(name, "l2_normalize", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        square_sum = math_ops.reduce_sum(math_ops.square(x), axis, keepdims=True)
        x_inv_norm = math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
        return math_ops.multiply(x, x_inv_norm, name=scope)


def xw_plus_b(x: Any, weights: Any, biases: Any, name: str | None = None) -> Any:
    with _ops.name_scope(name, "xw_plus_b", [x, weights, biases]) as scope:
        mm = math_ops.matmul(convert_to_tensor(x, name="x"), weights)
        return nn_ops.bias_add(mm, biases, name=scope)


def relu_layer(x: Any, weights: Any, biases: Any, name: str | None = None) -> Any:
    with _ops.name_scope(name, "relu_layer", [x, weights, biases]) as scope:
        xw_b = nn_ops.bias_add(math_ops.matmul(convert_to_tensor(x, name="x"), weights), biases)
        return nn_ops.relu(xw_b, name=scope)


def weighted_cross_entropy_with_logits(
    labels: Any = None,
    logits: Any = None,
    pos_weight: Any = None,
    name: str | None = None,
    targets: Any = None,
) -> Any:
    labels = targets if labels is None else labels
    with _ops.name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, dtype=logits.dtype, name="labels")
        log_weight = 1 + (pos_weight - 1) * labels
        return math_ops.add(
            (1 - labels) * logits,
            log_weight
            * (math_ops.log1p(math_ops.exp(-math_ops.abs(logits))) + nn_ops.relu(-logits)),
            name=scope,
        )


def zero_fraction(value: Any, name: str | None = None) -> Any:
    with _ops.name_scope(name, "zero_fraction", [value]):
        value = convert_to_tensor(value, name="value")
        zero = math_ops.cast(math_ops.equal(value, array_ops.zeros_like(value)), dtypes.float32)
        return math_ops.reduce_mean(zero)


def _raw(op_type: str):
    def fn(features: Any, name: str | None = None) -> Any:
        return apply_op(op_type, [features], {}, name).outputs[0]

    fn.__name__ = op_type.lower()
    return fn


softsign = _raw("Softsign")
selu = _raw("Selu")


def swish(features: Any, beta: float = 1.0, name: str | None = None) -> Any:
    with _ops.name_scope(name, "swish", [features]) as scope:
        features = convert_to_tensor(features, name="features")
        return math_ops.multiply(features, math_ops.sigmoid(beta * features), name=scope)


silu = swish


def top_k(input: Any, k: Any = 1, sorted: bool = True, name: str | None = None) -> Any:
    import collections

    # A Python k becomes the op's own "TopKV2/k" Const, as TF's gen_nn_ops builds it.
    op = apply_op("TopKV2", [input, k], {"sorted": sorted}, name)
    return collections.namedtuple("TopKV2", ["values", "indices"])(*op.outputs)


@shape_fns._reg("TopKV2")
def _top_k_shape(op: Any) -> list[Any]:
    """TensorFlow's TopKV2 shape: the input's with the last dimension k (when known)."""
    shape = op.inputs[0].shape
    if shape.ndims is None:
        return [shape_fns.UNKNOWN, shape_fns.UNKNOWN]
    out = TensorShape(shape.as_list()[:-1] + [shape_fns._scalar_dim(op.inputs[1])])
    return [out, out]


def conv2d_transpose(
    value: Any = None,
    filter: Any = None,
    output_shape: Any = None,
    strides: Any = None,
    padding: str = "SAME",
    data_format: str = "NHWC",
    name: str | None = None,
    input: Any = None,
    filters: Any = None,
    dilations: Any = None,
) -> Any:
    value = input if value is None else value
    filter = filters if filter is None else filter
    with _ops.name_scope(name, "conv2d_transpose", [value, filter, output_shape]) as scope:
        s = [int(v) for v in ([strides] * 4 if isinstance(strides, int) else strides)]
        if len(s) == 2:
            s = [1, *s, 1] if data_format == "NHWC" else [1, 1, *s]
        attrs = {"strides": s, "padding": padding, "data_format": data_format}
        if dilations is not None:
            attrs["dilations"] = list(dilations)
        # output_shape converts under the op, as its input_sizes (TF's conv2d_transpose_v2).
        return apply_op("Conv2DBackpropInput", [output_shape, filter, value], attrs, scope).outputs[
            0
        ]


def conv3d(
    input: Any,
    filter: Any = None,
    strides: Any = None,
    padding: str = "SAME",
    data_format: str = "NDHWC",
    dilations: Any = (1, 1, 1, 1, 1),
    name: str | None = None,
    filters: Any = None,
) -> Any:
    filter = filters if filter is None else filter
    attrs = {
        "strides": list(strides),
        "padding": padding,
        "data_format": data_format,
        "dilations": list(dilations),
    }
    return apply_op("Conv3D", [input, filter], attrs, name).outputs[0]


def _pool3d(op_type: str):
    def fn(
        input: Any,
        ksize: Any,
        strides: Any,
        padding: str,
        data_format: str = "NDHWC",
        name: Any = None,
    ) -> Any:
        channel_index = 1 if data_format.startswith("NC") else 4
        attrs = {
            "ksize": nn_ops.get_sequence(ksize, 3, channel_index, "ksize"),
            "strides": nn_ops.get_sequence(strides, 3, channel_index, "strides"),
            "padding": padding,
            "data_format": data_format,
        }
        return apply_op(op_type, [input], attrs, name).outputs[0]

    fn.__name__ = op_type.lower()
    return fn


max_pool3d = _pool3d("MaxPool3D")
avg_pool3d = _pool3d("AvgPool3D")


def crelu(features: Any, name: str | None = None, axis: int = -1) -> Any:
    """Concatenated ReLU: relu of [features, -features] joined along `axis`."""
    with _ops.name_scope(name, "CRelu", [features]) as scope:
        features = convert_to_tensor(features, name="features")
        c = array_ops.concat([features, -features], axis, name=scope)
        return nn_ops.relu(c)


def log_poisson_loss(
    targets: Any, log_input: Any, compute_full_loss: bool = False, name: str | None = None
) -> Any:
    """exp(log_input) - log_input * targets, plus (compute_full_loss) Stirling's
    approximation of log(targets!) where targets > 1."""
    with _ops.name_scope(name, "log_poisson_loss", [log_input, targets]):
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, name="targets")
        if not targets.shape.is_compatible_with(log_input.shape):
            raise ValueError(
                "log_input and targets must have the same shape "
                f"({log_input.shape} vs {targets.shape})"
            )
        result = math_ops.exp(log_input) - log_input * targets
        if compute_full_loss:
            point_five = constant(0.5, dtype=targets.dtype)
            two_pi = constant(2 * math.pi, dtype=targets.dtype)
            stirling_approx = (
                (targets * math_ops.log(targets))
                - targets
                + (point_five * math_ops.log(two_pi * targets))
            )
            zeros = array_ops.zeros_like(targets, dtype=targets.dtype)
            ones = array_ops.ones_like(targets, dtype=targets.dtype)
            cond = math_ops.logical_and(targets >= zeros, targets <= ones)
            result += array_ops.where(cond, zeros, stirling_approx)
        return result
