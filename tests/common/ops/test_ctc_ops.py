"""Tests (ops stage): CTCLoss, CTCGreedyDecoder and CTCBeamSearchDecoder against
TensorFlow (the oracle): their signatures; the loss and its gradient to a few ulps for
every attr combination and both dtypes; decoded paths exactly and their log probabilities
tightly, on random batches; and TF's errors (code and message) for the inputs it checks."""

from __future__ import annotations

import os

import numpy as np
import pytest

from common.errors import InvalidArgumentError
from tests.common.ops import run_kernel
from tests.common.ops.kernel_harness import assert_same_as_tf, op_def_mismatches, ours_run
from tests.common.ops.signatures import assert_signature_matches_tensorflow

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

I32, I64 = np.int32, np.int64
OPS = ["CTCLoss", "CTCLossV2", "CTCGreedyDecoder", "CTCBeamSearchDecoder"]
LOSS_ATTRS = [
    {},
    {"preprocess_collapse_repeated": True},
    {"ctc_merge_repeated": False},
    {"preprocess_collapse_repeated": True, "ctc_merge_repeated": False},
]


@pytest.mark.parametrize("op", OPS)
def test_signature_matches_tensorflow(op: str) -> None:
    assert_signature_matches_tensorflow(op)
    assert op_def_mismatches(op) == []  # allowed dtypes and statefulness too


def test_ctc_loss_v2_has_no_cpu_kernel_as_in_tensorflow() -> None:
    from client import Graph, Session, constant
    from client.framework.op_builder import apply_op

    inputs = _loss_inputs(np.zeros((4, 2, 5), np.float32), [[1], [2]], [4, 4])
    with Graph().as_default() as g:
        loss = apply_op("CTCLossV2", [constant(v) for v in inputs.values()]).outputs[0]
        with pytest.raises(InvalidArgumentError, match="No OpKernel was registered"):
            Session(graph=g).run(loss)


def _loss_inputs(x: np.ndarray, labels: list[list[int]], seq_len: list[int]) -> dict:
    ix = [[b, i] for b, seq in enumerate(labels) for i in range(len(seq))]
    return {
        "inputs": x,
        "labels_indices": np.array(ix, I64).reshape(-1, 2),
        "labels_values": np.array([v for seq in labels for v in seq], I32),
        "sequence_length": np.array(seq_len, I32),
    }


def _random_loss_inputs(rng: np.random.Generator, dtype: type, T: int, B: int, C: int) -> dict:
    x = (rng.standard_normal((T, B, C)) * 2).astype(dtype)
    seq_len = rng.integers(1, T + 1, B)
    labels = [
        rng.integers(0, C - 1, int(rng.integers(1, max(2, n // 2 + 1)))).tolist() for n in seq_len
    ]
    return _loss_inputs(x, labels, seq_len.tolist())


def _tf_raw(op: str, inputs: dict, attrs: dict) -> list[np.ndarray]:
    import tensorflow as tf

    out: list[np.ndarray] = []
    tensors = {k: tf.constant(v) for k, v in inputs.items()}  # keeps float64 (attr T)
    for part in getattr(tf.raw_ops, op)(**tensors, **attrs):
        out.extend(p.numpy() for p in part) if isinstance(part, list) else out.append(part.numpy())
    return out


def _assert_loss_close(inputs: dict, attrs: dict) -> None:
    want = _tf_raw("CTCLoss", inputs, attrs)
    got = ours_run("CTCLoss", inputs, attrs)
    rtol = 2e-5 if inputs["inputs"].dtype == np.float32 else 1e-6
    for g, w in zip(got, want):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)


def test_two_step_loss_by_hand() -> None:
    # Two steps of uniform logits over {a, blank}: paths "a-", "-a", "aa" give p = 3/4.
    x = np.zeros((2, 1, 2), np.float32)
    loss, grad = run_kernel("CTCLoss", list(_loss_inputs(x, [[0]], [2]).values()))
    np.testing.assert_allclose(loss, [-np.log(0.75)], rtol=1e-6)
    # d loss / d logit = softmax - posterior occupancy: a at step 0 has posterior 2/3.
    np.testing.assert_allclose(grad[0, 0], [0.5 - 2 / 3, 0.5 - 1 / 3], rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("attrs", LOSS_ATTRS)
def test_random_losses_and_gradients_match_tensorflow(dtype: type, attrs: dict) -> None:
    pytest.importorskip("tensorflow")
    rng = np.random.default_rng(11)
    for T, B, C in ((12, 4, 5), (7, 3, 3), (20, 2, 8), (1, 2, 4)):
        _assert_loss_close(_random_loss_inputs(rng, dtype, T, B, C), attrs)


@pytest.mark.parametrize(
    "labels, seq_len, attrs",
    [
        ([[1, 1, 2], [3, 3]], [4, 4], {}),  # repeats need a blank between them
        ([[1, 1, 2], [3, 3]], [4, 4], {"preprocess_collapse_repeated": True}),
        ([[1, 4], [4, 4]], [4, 4], {}),  # a blank-or-above label ends the sequence
        ([[1], [7]], [4, 4], {}),
        ([[0, 1, 2], [1, 2, 3, 0]], [4, 2], {"ignore_longer_outputs_than_inputs": True}),
        ([[0], [2]], [4, 0], {"ignore_longer_outputs_than_inputs": True}),
    ],
)
def test_edge_label_sequences_match_tensorflow(labels, seq_len, attrs) -> None:
    pytest.importorskip("tensorflow")
    x = np.random.default_rng(0).standard_normal((4, 2, 5)).astype(np.float32)
    _assert_loss_close(_loss_inputs(x, labels, seq_len), attrs)


def test_impossible_alignment_gives_infinite_loss_and_softmax_gradient() -> None:
    pytest.importorskip("tensorflow")
    x = np.zeros((3, 1, 3), np.float32)
    x[:, 0, 1] = -np.inf  # label 1 can never be emitted
    _assert_loss_close(_loss_inputs(x, [[1]], [3]), {})


def _loss_error_cases() -> dict[str, dict]:
    x = np.random.default_rng(0).standard_normal((4, 2, 5)).astype(np.float32)
    ok = _loss_inputs(x, [[1], [2]], [4, 4])
    return {
        "inputs_rank": {**ok, "inputs": x[0]},
        "seq_len_rank": {**ok, "sequence_length": np.array([[4, 4]], I32)},
        "indices_rank": {**ok, "labels_indices": np.array([0, 1], I64)},
        "indices_one_column": {**ok, "labels_indices": np.array([[0], [1]], I64)},
        "values_rank": {**ok, "labels_values": np.array([[1, 2]], I32)},
        "max_time_zero": {**ok, "inputs": x[:0]},
        "batch_mismatch": {**ok, "sequence_length": np.array([4, 4, 4], I32)},
        "rows_mismatch": {**ok, "labels_values": np.array([1, 2, 3], I32)},
        "batch_zero": {**ok, "inputs": x[:, :0], "sequence_length": np.zeros(0, I32)},
        "three_columns": {**ok, "labels_indices": np.array([[0, 0, 0], [1, 0, 0]], I64)},
        "out_of_order": _loss_inputs(x, [[1], [2]], [4, 4])
        | {"labels_indices": np.array([[1, 0], [0, 0]], I64)},
        "repeated": {**ok, "labels_indices": np.array([[0, 0], [0, 0]], I64)},
        "batch_out_of_bounds": {**ok, "labels_indices": np.array([[0, 0], [2, 0]], I64)},
        "negative_position": {**ok, "labels_indices": np.array([[0, -1], [1, 0]], I64)},
        "empty_labels": {**ok, "labels_indices": np.array([[0, 0], [0, 1]], I64)},
        "negative_label": {**ok, "labels_values": np.array([1, -1], I32)},
        "label_after_blank": _loss_inputs(x, [[1], [4, 2]], [4, 4]),
        "seq_len_too_long": {**ok, "sequence_length": np.array([5, 4], I32)},
        "seq_len_negative": {**ok, "sequence_length": np.array([-1, 4], I32)},
        "not_enough_time": _loss_inputs(x, [[1], [1, 1, 1]], [4, 2]),
        "zero_time_for_labels": {**ok, "sequence_length": np.array([4, 0], I32)},
    }


@pytest.mark.parametrize("case", sorted(_loss_error_cases()))
def test_loss_errors_match_tensorflow(case: str) -> None:
    pytest.importorskip("tensorflow")
    assert_same_as_tf("CTCLoss", _loss_error_cases()[case], {})


def test_zero_classes_is_refused_where_tensorflow_crashes() -> None:
    x = np.zeros((4, 2, 0), np.float32)
    with pytest.raises(InvalidArgumentError, match="num_classes must not be 0"):
        run_kernel("CTCLoss", list(_loss_inputs(x, [[1], [2]], [4, 4]).values()))


def _assert_decoded_equal(op: str, inputs: dict, attrs: dict) -> None:
    import tensorflow as tf

    try:
        want = _tf_raw(op, inputs, attrs)
    except tf.errors.InvalidArgumentError:  # e.g. fewer prefixes alive than top_paths
        assert_same_as_tf(op, inputs, attrs)
        return
    got = [np.asarray(v) for v in ours_run(op, inputs, attrs)]
    assert len(got) == len(want)
    for g, w in zip(got[:-1], want[:-1]):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_array_equal(g, w)
    assert got[-1].dtype == want[-1].dtype
    np.testing.assert_allclose(got[-1], want[-1], rtol=1e-6, atol=1e-6)


def test_greedy_decoder_by_hand() -> None:
    x = np.log(
        np.array(
            [[[0.1, 0.7, 0.2]], [[0.1, 0.7, 0.2]], [[0.1, 0.2, 0.7]], [[0.6, 0.3, 0.1]]],
            np.float32,
        )
    )
    ix, vals, shape, log_p = run_kernel(
        "CTCGreedyDecoder", [x, np.array([4], I32)], merge_repeated=True
    )
    assert (ix.tolist(), vals.tolist(), shape.tolist()) == ([[0, 0], [0, 1]], [1, 0], [1, 2])
    np.testing.assert_allclose(log_p, [[-np.log(0.7 * 0.7 * 0.7 * 0.6)]], rtol=1e-6)


def test_beam_search_finds_the_path_best_path_misses() -> None:
    # GravesTh Fig. 7.5: best path says "" (0.42) but "a" has probability 0.58.
    x = np.log(np.array([[[0.3, 0.7]], [[0.4, 0.6]]], np.float32))
    out = run_kernel("CTCBeamSearchDecoder", [x, np.array([2], I32)], beam_width=2, top_paths=2)
    assert [out[0].tolist(), out[1].tolist()] == [[[0, 0]], []]
    assert [out[2].tolist(), out[3].tolist()] == [[0], []]
    np.testing.assert_allclose(out[-1], [np.log([0.58, 0.42])], rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_decodes_match_tensorflow(dtype: type) -> None:
    pytest.importorskip("tensorflow")
    rng = np.random.default_rng(5)
    for trial in range(40):
        T, B, C = int(rng.integers(1, 25)), int(rng.integers(1, 4)), int(rng.integers(2, 9))
        x = (rng.standard_normal((T, B, C)) * rng.choice([0.5, 2.0, 4.0])).astype(dtype)
        seq_len = rng.integers(1, T + 1, B).astype(I32)
        merge = bool(trial % 3)
        beam_width = int(rng.integers(1, 16))
        inputs = {"inputs": x, "sequence_length": seq_len}
        _assert_decoded_equal(
            "CTCGreedyDecoder",
            inputs,
            {"merge_repeated": merge, "blank_index": int(rng.integers(-C, C))},
        )
        _assert_decoded_equal(
            "CTCBeamSearchDecoder",
            inputs,
            {
                "beam_width": beam_width,
                "top_paths": int(rng.integers(1, beam_width + 1)),
                "merge_repeated": merge,
            },
        )


@pytest.mark.parametrize("beam_width, top_paths", [(100, 5), (25, 25)])
def test_wide_beams_over_long_sequences_match_tensorflow(beam_width: int, top_paths: int) -> None:
    pytest.importorskip("tensorflow")
    x = np.random.default_rng(8).standard_normal((40, 2, 20)).astype(np.float32)
    inputs = {"inputs": x, "sequence_length": np.array([40, 33], I32)}
    _assert_decoded_equal(
        "CTCBeamSearchDecoder", inputs, {"beam_width": beam_width, "top_paths": top_paths}
    )


def _decoder_error_cases() -> dict[str, tuple[str, dict, dict]]:
    x = np.random.default_rng(0).standard_normal((4, 2, 5)).astype(np.float32)
    sl = np.array([4, 4], I32)
    beam = {"beam_width": 3, "top_paths": 2}
    return {
        "rank": ("CTCGreedyDecoder", {"inputs": x[0], "sequence_length": sl}, {}),
        "empty": ("CTCGreedyDecoder", {"inputs": x[:0], "sequence_length": sl}, {}),
        "seq_len_rank": ("CTCGreedyDecoder", {"inputs": x, "sequence_length": sl[None]}, {}),
        "batch_mismatch": ("CTCBeamSearchDecoder", {"inputs": x, "sequence_length": sl[:1]}, beam),
        "too_long": (
            "CTCGreedyDecoder",
            {"inputs": x, "sequence_length": np.array([5, 4], I32)},
            {},
        ),
        "blank_high": (
            "CTCGreedyDecoder",
            {"inputs": x, "sequence_length": sl},
            {"blank_index": 5},
        ),
        "blank_low": (
            "CTCGreedyDecoder",
            {"inputs": x, "sequence_length": sl},
            {"blank_index": -6},
        ),
        "paths_over_beam": (
            "CTCBeamSearchDecoder",
            {"inputs": x, "sequence_length": sl},
            {"beam_width": 3, "top_paths": 4},
        ),
        "too_few_leaves": (
            "CTCBeamSearchDecoder",
            {"inputs": x, "sequence_length": np.array([-1, 4], I32)},
            beam,
        ),
    }


@pytest.mark.parametrize("case", sorted(_decoder_error_cases()))
def test_decoder_errors_match_tensorflow(case: str) -> None:
    pytest.importorskip("tensorflow")
    op, inputs, attrs = _decoder_error_cases()[case]
    assert_same_as_tf(op, inputs, attrs)


def test_negative_sequence_length_decodes_nothing_like_tensorflow() -> None:
    pytest.importorskip("tensorflow")
    x = np.random.default_rng(3).standard_normal((4, 2, 5)).astype(np.float32)
    _assert_decoded_equal(
        "CTCGreedyDecoder", {"inputs": x, "sequence_length": np.array([-1, 4], I32)}, {}
    )
