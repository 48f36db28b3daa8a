"""Client partitioned variables (get_variable with a partitioner) against
tensorflow.compat.v1: the shards "<name>/part_<i>" and their shapes, their placement by
replica_device_setter round-robin over the ps tasks, the graph nodes (ConcatPartitions, a
sharded embedding_lookup, the optimizer's per-shard updates), the values after SGD steps,
and checkpoints holding each shard as a slice of the whole, read by the other side."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import client

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1

TABLE = (np.arange(21, dtype=np.float32).reshape(7, 3) - 10) / 10
IDS = np.array([0, 6, 4, 1, 3, 3], np.int32)


def _model(t: Any, placed: bool) -> dict[str, Any]:
    """A sharded embedding (3 shards of 3, 2 and 2 rows), a dense layer cut by the scope's
    partitioner into one shard per row, a bias without partitioner, trained by SGD."""
    device = t.train.replica_device_setter(ps_tasks=2) if placed else None
    with t.device(device):
        emb = t.get_variable(
            "emb",
            [7, 3],
            initializer=TABLE,  # a value: each shard initialized from its slice
            partitioner=t.fixed_size_partitioner(3),
            use_resource=True,
        )
        with t.variable_scope("dense", partitioner=t.variable_axis_size_partitioner(8)):
            w = t.get_variable(
                "w", [3, 2], initializer=t.constant_initializer(0.5), use_resource=True
            )
            b = t.get_variable("b", [], initializer=t.constant_initializer(0.1), use_resource=True)
        ids = t.placeholder_with_default(IDS, [None], name="ids")
        looked_up = t.nn.embedding_lookup(emb, ids, partition_strategy="div")
        out = t.matmul(looked_up, w) + b
        loss = t.reduce_sum(out * out)
        train = t.train.GradientDescentOptimizer(0.01).minimize(loss)
    return {"emb": emb, "w": w, "b": b, "looked_up": looked_up, "loss": loss, "train": train}


def _nodes(t: Any) -> list[tuple[str, str, list[str], str, list[bytes]]]:
    """Every node (name, op, inputs, device, colocation groups) but the lookup's final
    Reshape gradient (TensorFlow 2.21 reshapes to a constant shape where the client takes
    the dynamic Shape: test_embedding_lookup.py). As TF's, a variable's initializer has no
    device but the variable's "_class" group, its IsInitialized takes the scope's device
    and its reads elsewhere none: the placer runs a resource's consumers with it."""
    g = t.Graph()
    with g.as_default():
        _model(t, placed=True)
    return [
        (n.name, n.op, list(n.input), n.device, list(n.attr["_class"].list.s))
        for n in g.as_graph_def().node
        if not n.name.startswith("gradients/embedding_lookup/Reshape_1_grad")
    ]


def test_shards_named_shaped_and_placed_like_tensorflow():
    def shards(t: Any) -> list[tuple[str, list[int], str, Any]]:
        with t.Graph().as_default():
            m = _model(t, placed=True)
            return [
                (v.name, v.shape.as_list(), v.device, v._get_save_slice_info().spec)
                for v in [*m["emb"], *m["w"]]
            ] + [(m["emb"].name, m["emb"].get_shape().as_list(), len(m["emb"]), None)]

    ours = shards(client)
    assert ours == shards(tf1)
    assert [s[:3] for s in ours[:3]] == [
        ("emb/part_0:0", [3, 3], "/job:ps/task:0"),
        ("emb/part_1:0", [2, 3], "/job:ps/task:1"),
        ("emb/part_2:0", [2, 3], "/job:ps/task:0"),
    ]


def test_graph_nodes_and_devices_match_tensorflow():
    ours = _nodes(client)
    assert ours == _nodes(tf1)
    names = [n[0] for n in ours]
    assert "dense/w/ConcatPartitions/concat" in names  # the dense layer reads the whole
    assert "emb/ConcatPartitions/concat" not in names  # the lookup reads shard by shard
    placed = {n[0]: n[3:] for n in ours}
    assert placed["emb/part_1"] == ("/job:ps/task:1", [b"loc:@emb/part_1"])
    assert placed["emb/part_1/IsInitialized/VarIsInitializedOp"] == ("/job:worker", [])
    assert placed["emb/part_1/Read/ReadVariableOp"] == ("/job:ps/task:1", [])
    assert placed["dense/w/part_0/Initializer/Const"] == ("", [b"loc:@dense/w/part_0"])
    assert placed["dense/w/ConcatPartitions/concat/ReadVariableOp"] == ("", [])
    assert placed["embedding_lookup/Gather_1"] == ("/job:ps/task:1", [b"loc:@emb/part_1"])


def _train(t: Any) -> tuple[list[Any], list[np.ndarray]]:
    with t.Graph().as_default():
        m = _model(t, placed=False)
        whole = t.convert_to_tensor(m["emb"])
        with t.Session() as sess:
            sess.run(t.global_variables_initializer())
            before = sess.run([m["looked_up"], m["loss"], whole])
            for _ in range(2):
                sess.run(m["train"])
            after = sess.run([whole, *m["emb"], *m["w"], m["b"], m["loss"]])
    return before, after


def test_lookup_concat_and_sgd_through_shards_match_tensorflow():
    ours, theirs = _train(client), _train(tf1)
    np.testing.assert_array_equal(ours[0][2], TABLE)
    for a, b in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert not np.allclose(ours[1][0], TABLE)  # training moved the shards


def _saved(t: Any, prefix: str, shards: int) -> np.ndarray:
    with t.Graph().as_default():
        emb = t.get_variable(
            "emb",
            [7, 3],
            initializer=TABLE,  # a value: each shard initialized from its slice
            partitioner=t.fixed_size_partitioner(shards),
            use_resource=True,
        )
        saver = t.train.Saver()
        with t.Session() as sess:
            sess.run(t.global_variables_initializer())
            sess.run(emb.assign(2 * TABLE))
            saver.save(sess, prefix, write_meta_graph=False)
    return tf.train.load_checkpoint(prefix).get_tensor("emb")


def _restored(t: Any, prefix: str, shards: int) -> list[np.ndarray]:
    with t.Graph().as_default():
        emb = t.get_variable(
            "emb", [7, 3], partitioner=t.fixed_size_partitioner(shards), use_resource=True
        )
        saver = t.train.Saver()
        with t.Session() as sess:
            saver.restore(sess, prefix)
            return sess.run(list(emb))


@pytest.mark.parametrize("writer,reader", [(client, tf1), (tf1, client)], ids=["ours", "tf"])
def test_checkpoint_holds_slices_of_the_whole_variable(tmp_path, writer, reader):
    prefix = str(tmp_path / "model")
    np.testing.assert_array_equal(_saved(writer, prefix, shards=3), 2 * TABLE)
    shards = _restored(reader, prefix, shards=2)  # another layout reads the same slices
    np.testing.assert_array_equal(np.concatenate(shards), 2 * TABLE)
    assert [s.shape for s in shards] == [(4, 3), (3, 3)]


def test_saver_graph_lists_each_slice_like_tensorflow():
    def slices(t: Any) -> tuple[list[bytes], list[bytes]]:
        g = t.Graph()
        with g.as_default():
            _model(t, placed=False)
            t.train.Saver()
        consts = {n.name: n.attr["value"].tensor.string_val for n in g.as_graph_def().node}
        return consts["save/SaveV2/tensor_names"], consts["save/SaveV2/shape_and_slices"]

    ours = slices(client)
    assert ours == slices(tf1)
    assert ours[1][1:4] == [b"3 2 0,1:0,2", b"3 2 1,1:0,2", b"3 2 2,1:0,2"]  # dense/w


@pytest.mark.parametrize(
    "partitioner,shape,dtype,expected",
    [
        (lambda t: t.fixed_size_partitioner(4, axis=1), [5, 3], "float32", [1, 3]),
        (lambda t: t.min_max_variable_partitioner(8, min_slice_size=64), [100, 4], "float32", [8, 1]),
        (lambda t: t.min_max_variable_partitioner(8, min_slice_size=1 << 20), [100, 4], "float32", [1, 1]),
        (lambda t: t.variable_axis_size_partitioner(100), [50, 4], "float32", [9, 1]),
        (lambda t: t.variable_axis_size_partitioner(100, max_shards=3), [50, 4], "float32", [3, 1]),
        (lambda t: t.variable_axis_size_partitioner(100, bytes_per_string_element=8), [10, 5], "string", [5, 1]),
    ],
)  # fmt: skip
def test_partitioners_cut_like_tensorflow(partitioner, shape, dtype, expected):
    ours = partitioner(client)(shape=client.TensorShape(shape), dtype=client.as_dtype(dtype))
    theirs = partitioner(tf1)(shape=tf1.TensorShape(shape), dtype=tf1.as_dtype(dtype))
    assert ours == theirs == expected


def test_reuse_and_mismatches_worded_like_tensorflow():
    def errors(t: Any) -> list[str]:
        found = []
        with t.Graph().as_default():
            p = t.fixed_size_partitioner(2)
            emb = t.get_variable("emb", [4, 2], partitioner=p, use_resource=True)
            with t.variable_scope("", reuse=True):
                assert t.get_variable("emb", [4, 2], use_resource=True) is emb
            for call in [
                lambda: t.get_variable("emb", [4, 2], use_resource=True),
                lambda: t.get_variable("emb/part_0", [4, 2], partitioner=p, use_resource=True),
                lambda: t.get_variable("x", [4, 2], partitioner=lambda shape, dtype: [2, 2]),
                lambda: t.get_variable("y", [None, 2], partitioner=p),
            ]:
                with pytest.raises(ValueError) as err:
                    call()
                found.append(str(err.value).split(":")[0])
        return found

    assert errors(client) == errors(tf1)


def _tf1_partitioner(shape: Any, dtype: Any) -> list[int]:
    """A partitioner written against TF1's TensorShape: Dimension objects and `.value`."""
    rows, cols = shape.dims[0].value, shape[1].value
    assert repr(shape.dims[0]) == f"Dimension({rows})"
    return [min(rows, 3) if cols > 1 else 1, 1]


def _custom_shards(t: Any) -> list[tuple[str, list[int], np.ndarray]]:
    with t.Graph().as_default():
        emb = t.get_variable("emb", [7, 3], initializer=TABLE, partitioner=_tf1_partitioner)
        with t.Session() as sess:
            sess.run(t.global_variables_initializer())
            return [(v.name, v.shape.as_list(), sess.run(v)) for v in emb]


def test_custom_partitioner_reads_dimensions_like_tensorflow():
    tf1.disable_v2_tensorshape()  # as a TF1 program's disable_v2_behavior: shape[i] a Dimension
    try:
        theirs = _custom_shards(tf1)
    finally:
        tf1.enable_v2_tensorshape()
    ours = _custom_shards(client)
    assert [s[:2] for s in ours] == [s[:2] for s in theirs]
    assert [s[:2] for s in ours] == [("emb/part_0:0", [3, 3]), ("emb/part_1:0", [2, 3]),
                                     ("emb/part_2:0", [2, 3])]  # fmt: skip
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a[2], b[2])


def _created(t: Any) -> tuple[list[str], list[str], list[np.ndarray]]:
    g = t.Graph()
    with g.as_default():
        shards = t.create_partitioned_variables(
            [7, 3], [3, 1], t.random_uniform_initializer(seed=1)
        )
        with t.variable_scope("outer"):
            value = t.constant(np.arange(4, dtype=np.float32))
            shards += t.create_partitioned_variables([4], [2], value, name="foo")
        with t.Session() as sess:
            sess.run(t.global_variables_initializer())
            values = sess.run(shards)
    return [v.name for v in shards], [n.name for n in g.as_graph_def().node], values


def test_create_partitioned_variables_like_tensorflow():
    names, nodes, values = _created(client)
    theirs = _created(tf1)
    assert (names, nodes) == theirs[:2]
    assert names == ["PartitionedVariable/part_0:0", "PartitionedVariable/part_1:0",
                     "PartitionedVariable/part_2:0", "outer/foo/part_0:0", "outer/foo/part_1:0"]  # fmt: skip
    for a, b in zip(values, theirs[2]):
        np.testing.assert_array_equal(a, b)

    def errors(t: Any) -> list[str]:
        found = []
        with t.Graph().as_default():
            for shape, slicing in [([4, 2], [2]), ([], [])]:
                with pytest.raises(ValueError) as err:
                    t.create_partitioned_variables(shape, slicing, t.zeros_initializer())
                found.append(str(err.value))
        return found

    assert errors(client) == errors(tf1)


def _var_list_uses(t: Any) -> dict[str, Any]:
    """What an optimizer and a Saver make of a PartitionedVariable in their var_list: TF's
    optimizers refuse it (each variable's op is read; list the shards instead), a Saver
    writes it as slices of the whole, under its own name or the dict's key."""
    found: dict[str, Any] = {}
    for how in ["list", "alone", "mixed", "shards", "compute", "apply"]:
        g = t.Graph()
        with g.as_default():
            emb = t.get_variable(
                "emb", [7, 3], initializer=TABLE, partitioner=t.fixed_size_partitioner(3)
            )
            b = t.get_variable("b", [3], initializer=t.zeros_initializer())
            looked_up = t.nn.embedding_lookup(emb, [0, 6, 4], partition_strategy="div")
            loss = t.reduce_sum(t.square(looked_up + b))
            opt = t.train.GradientDescentOptimizer(0.1)
            var_list = {"list": [emb], "alone": emb, "mixed": [emb, b], "shards": [*emb, b]}
            try:
                if how == "compute":
                    opt.compute_gradients(loss, var_list=[emb, b])
                elif how == "apply":
                    opt.apply_gradients([(t.ones([7, 3]), emb)])
                else:
                    opt.minimize(loss, var_list=var_list[how])
                    found[how] = sorted(
                        n.name for n in g.as_graph_def().node if "Gradient" in n.name
                    )
            except AttributeError as e:
                found[how] = str(e)
    for how, var_list in [("saver_list", "list"), ("saver_dict", "dict")]:
        g = t.Graph()
        with g.as_default():
            emb = t.get_variable(
                "emb", [7, 3], initializer=TABLE, partitioner=t.fixed_size_partitioner(3)
            )
            b = t.get_variable("b", [3], initializer=t.zeros_initializer())
            t.train.Saver([emb, b] if var_list == "list" else {"table": emb, "bias": b})
            consts = {n.name: n.attr["value"].tensor.string_val for n in g.as_graph_def().node}
            found[how] = [consts[f"save/SaveV2/{k}"] for k in ("tensor_names", "shape_and_slices")]
    return found


def test_partitioned_variable_in_var_list_like_tensorflow():
    ours = _var_list_uses(client)
    assert ours == _var_list_uses(tf1)
    refused = "'PartitionedVariable' object has no attribute 'op'"
    assert [ours[k] for k in ("list", "alone", "mixed", "compute", "apply")] == [refused] * 5
    assert "GradientDescent/update_emb/part_2/ResourceScatterAdd" in ours["shards"]
    assert ours["saver_dict"] == [
        [b"bias", b"table", b"table", b"table"],
        [b"", b"7 3 0,3:0,3", b"7 3 3,2:0,3", b"7 3 5,2:0,3"],
    ]
