"""Client tf.nn.embedding_lookup over a table split into shards ("mod" and "div"
partitioning) and with max_norm, against tensorflow.compat.v1: the same graph nodes
(forward and the DynamicPartition/ParallelDynamicStitch gradients), the same looked-up
values, and the same tables after SGD steps whose gradients reach each shard as
IndexedSlices."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import client

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1

IDS = np.array([[0, 3], [4, 1], [6, 2], [3, 3]], np.int32)  # id 3 twice


def _shards(t: Any, shapes: list[tuple[int, int]]) -> list[Any]:
    return [
        t.Variable(
            np.arange(np.prod(s), dtype=np.float32).reshape(s) / 10 - 0.3 * i,
            name=f"emb_{i}",
            use_resource=True,
        )
        for i, s in enumerate(shapes)
    ]


def _model(t: Any, shapes: list[tuple[int, int]], strategy: str, max_norm: Any) -> tuple:
    shards = _shards(t, shapes)
    ids = t.placeholder_with_default(IDS, [None, 2], name="ids")
    looked_up = t.nn.embedding_lookup(shards, ids, partition_strategy=strategy, max_norm=max_norm)
    loss = t.reduce_sum(looked_up * looked_up)
    grads = t.gradients(loss, shards)
    train = t.train.GradientDescentOptimizer(0.1).apply_gradients(list(zip(grads, shards)))
    return shards, looked_up, grads, train


def _run(t: Any, shapes: list[tuple[int, int]], strategy: str, max_norm: Any = None) -> tuple:
    """(graph nodes before the optimizer, whether each gradient is IndexedSlices, the
    lookup, the shards after two SGD steps). The generic Reshape gradient is left out:
    TensorFlow 2.21 reshapes to a constant shape with a -1 wildcard where the client
    takes the input's dynamic Shape (same values; that gradient is not this module's)."""
    g = t.Graph()
    with g.as_default():
        shards, looked_up, grads, train = _model(t, shapes, strategy, max_norm)
        nodes = [
            (n.name, n.op, list(n.input))
            for n in g.as_graph_def().node
            if not n.name.startswith(
                ("GradientDescent", "gradients/embedding_lookup/Reshape_1_grad")
            )
        ]
        kinds = [type(x).__name__ for x in grads]
        with t.Session() as sess:
            sess.run(t.global_variables_initializer())
            out = sess.run(looked_up)
            sess.run(train)
            sess.run(train)
            return nodes, kinds, out, sess.run(shards)


CASES = {
    "mod_two_shards": ([(4, 2), (3, 2)], "mod"),
    "div_two_shards": ([(4, 2), (3, 2)], "div"),
    "mod_three_shards": ([(3, 2), (3, 2), (2, 2)], "mod"),
    "div_three_shards": ([(3, 2), (3, 2), (2, 2)], "div"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_sharded_lookup_nodes_gradients_and_sgd_match_tensorflow(case):
    shapes, strategy = CASES[case]
    ours, theirs = _run(client, shapes, strategy), _run(tf1, shapes, strategy)
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1] == ["IndexedSlices"] * len(shapes)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
    for a, b in zip(ours[3], theirs[3]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "shapes,strategy", [([(7, 2)], "mod"), ([(4, 2), (3, 2)], "div"), ([(4, 2), (3, 2)], "mod")]
)
def test_max_norm_clips_rows_as_tensorflow_does(shapes, strategy):
    ours, theirs = _run(client, shapes, strategy, 1.0), _run(tf1, shapes, strategy, 1.0)
    # The forward graph node for node; clip_by_norm's own math gradients are the
    # generic binary-op gradients (compared elsewhere), so only their values here.
    forward = [n for n in theirs[0] if not n[0].startswith("gradients")]
    assert [n for n in ours[0] if not n[0].startswith("gradients")] == forward
    assert np.linalg.norm(ours[2], axis=-1).max() <= 1.0 + 1e-6
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
    for a, b in zip(ours[3], theirs[3]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_shards_given_as_tensors_are_converted_under_params_names():
    def build(t: Any) -> list[Any]:
        tables = [np.ones((2, 3), np.float32), 2 * np.ones((2, 3), np.float32)]
        return [n.name for n in _lookup_graph(t, tables).as_graph_def().node]

    assert build(client) == build(tf1)


def _lookup_graph(t: Any, tables: list[np.ndarray]) -> Any:
    g = t.Graph()
    with g.as_default():
        t.nn.embedding_lookup(tables, [1, 2, 3], partition_strategy="div")
    return g


def test_dynamic_partition_and_stitch_gradients_match_tensorflow():
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    parts = np.array([1, 0, 2, 1, 0, 1], np.int32)

    def run(t: Any) -> list[Any]:
        with t.Graph().as_default():
            x = t.constant(data)
            pieces = t.dynamic_partition(x, parts, 3)
            stitched = t.dynamic_stitch(
                [[5, 0], [1, 2, 3], [4]], [pieces[0] * 2.0, pieces[1], pieces[2]]
            )
            loss = t.reduce_sum(stitched * np.arange(12, dtype=np.float32).reshape(6, 2))
            with t.Session() as sess:
                return sess.run([stitched, *t.gradients(loss, [x])])

    for a, b in zip(run(client), run(tf1)):
        np.testing.assert_array_equal(a, b)


def test_unknown_partition_strategy_is_refused_as_tensorflow_does():
    tables = [np.ones((2, 2), np.float32)] * 2
    with (
        client.Graph().as_default(),
        pytest.raises(ValueError, match="Unrecognized partition strategy: roll"),
    ):
        client.nn.embedding_lookup(tables, [0], partition_strategy="roll")


# -- embedding_lookup_sparse ----------------------------------------------------------------
SP_INDICES = np.array([[0, 0], [0, 1], [1, 0], [2, 1], [2, 2]], np.int64)
SP_IDS = np.array([1, 3, 0, 1, 6], np.int64)
SP_WEIGHTS = np.array([2.0, 0.5, 1.0, 3.0, 1.5], np.float32)


def _sparse_run(t: Any, shapes: list, combiner: str, weighted: bool, max_norm: Any,
                strategy: str, table_as_constant: bool = False) -> tuple:  # fmt: skip
    g = t.Graph()
    with g.as_default():
        if table_as_constant:
            tables = [t.constant(np.arange(14, dtype=np.float32).reshape(7, 2) / 10)]
        else:
            tables = _shards(t, shapes)
        # Fed ids: with constant ids TensorFlow's C++ shape inference folds the whole
        # Unique/DynamicPartition/stitch chain into static shapes.
        ids = t.placeholder_with_default(SP_IDS, [None], name="sp_ids")
        sp_ids = t.SparseTensor(SP_INDICES, ids, [3, 3])
        sp_weights = t.SparseTensor(SP_INDICES, SP_WEIGHTS, [3, 3]) if weighted else None
        params = tables if len(tables) > 1 else tables[0]
        out = t.nn.embedding_lookup_sparse(
            params, sp_ids, sp_weights, partition_strategy=strategy, combiner=combiner,
            max_norm=max_norm,
        )  # fmt: skip
        grads = t.gradients(t.reduce_sum(out * out), tables)
        nodes = [(n.name, n.op, list(n.input)) for n in g.as_graph_def().node]
        kinds = [type(x).__name__ for x in grads]
        with t.Session() as sess:
            sess.run(t.global_variables_initializer())
            looked_up = sess.run(out)
            if table_as_constant:
                return nodes, kinds, looked_up, sess.run([grads[0].values, grads[0].indices])
            sess.run(t.train.GradientDescentOptimizer(0.1).apply_gradients(zip(grads, tables)))
            return nodes, kinds, looked_up, sess.run(tables)


SPARSE_CASES = {
    "mean": ([(7, 2)], "mean", False, None, "mod"),
    "sum": ([(7, 2)], "sum", False, None, "mod"),
    "sqrtn": ([(7, 2)], "sqrtn", False, None, "mod"),
    "mean_weighted": ([(7, 2)], "mean", True, None, "mod"),
    "sqrtn_weighted": ([(7, 2)], "sqrtn", True, None, "mod"),
    "sum_weighted_div_shards": ([(4, 2), (3, 2)], "sum", True, None, "div"),
    "mean_mod_shards_max_norm": ([(4, 2), (3, 2)], "mean", False, 1.0, "mod"),
}


@pytest.mark.parametrize("case", sorted(SPARSE_CASES))
def test_embedding_lookup_sparse_matches_tensorflow(case):
    ours = _sparse_run(client, *SPARSE_CASES[case])
    theirs = _sparse_run(tf1, *SPARSE_CASES[case])
    # The forward graph node for node (the generic Mul/DivNoNan/Sum gradients of the
    # weighted and clipped paths are compared by value only).
    forward = [n for n in theirs[0] if not n[0].startswith("gradients")]
    assert [n for n in ours[0] if not n[0].startswith("gradients")] == forward
    if not SPARSE_CASES[case][2] and SPARSE_CASES[case][3] is None:
        assert ours[0] == theirs[0]
    assert ours[1] == theirs[1] == ["IndexedSlices"] * len(SPARSE_CASES[case][0])
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
    for a, b in zip(ours[3], theirs[3]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_a_constant_table_takes_the_sparse_segment_fast_path_as_in_tensorflow(combiner):
    # A plain tensor (not a Variable) goes straight into SparseSegment* with
    # sparse_gradient=True: its gradient is SparseSegment*GradV2's IndexedSlices.
    ours = _sparse_run(client, [], combiner, False, None, "mod", table_as_constant=True)
    theirs = _sparse_run(tf1, [], combiner, False, None, "mod", table_as_constant=True)
    assert ours[0] == theirs[0]
    assert any(op.endswith("GradV2") for _, op, _ in ours[0])
    assert ours[1] == theirs[1]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
    np.testing.assert_allclose(ours[3][0], theirs[3][0], rtol=1e-6)
    np.testing.assert_array_equal(ours[3][1], theirs[3][1])


def test_ones_like_builds_tensorflows_nodes():
    # clip_by_norm (max_norm) uses it: Fill of a static shape's Const or of a Shape.
    def build(t: Any) -> list[tuple[str, str]]:
        g = t.Graph()
        with g.as_default():
            t.ones_like(t.constant(np.ones((2, 3), np.float32)))
            t.ones_like(t.placeholder(t.float32, [None, 3]), dtype=t.int32)
            t.ones_like(t.constant([1, 2]), name="o")
        return [(n.name, n.op) for n in g.as_graph_def().node]

    assert build(client) == build(tf1)
