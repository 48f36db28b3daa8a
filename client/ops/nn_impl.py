"""Client, graph building: the sampled losses of TF's nn_impl (tf.nn.nce_loss,
sampled_softmax_loss) over the candidate samplers of candidate_sampling_ops, as
nn_impl._compute_sampled_logits builds them."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.gradient_registry import NotDifferentiable
from client.framework.op_builder import apply_op, convert_to_tensor
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
    if isinstance(weights, (list, tuple)):
        if len(weights) != 1:
            raise NotImplementedError("sampled losses over partitioned weights are not supported")
        weights = weights[0]
    with _ops.name_scope(name, "compute_sampled_logits", [weights, biases, inputs, labels]):
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
        n_true = array_ops.shape(labels_flat)[0]
        true_w = array_ops.slice(all_w, [0, 0], array_ops.stack([n_true, -1]))
        sampled_w = array_ops.slice(all_w, array_ops.stack([n_true, 0]), [-1, -1])
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
            # TF uses SparseToDense (validate_indices=False); the hits are distinct
            # (row, column) pairs, so ScatterNd gives the same matrix.
            sampled_logits += apply_op(
                "ScatterNd", [sparse_indices, acc_weights, logits_shape], {}
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
