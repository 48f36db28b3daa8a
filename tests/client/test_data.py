"""Client tf.data vs TensorFlow: the same tf.compat.v1 pipeline bodies, built with our client
and run by our runtime (Session("")), give TensorFlow's elements in TensorFlow's order, end
with OutOfRangeError at the same point, have TensorFlow's element specs, and emit the same
graph ops; and a linear model on /job:worker/task:1 of an in-process cluster trains from an
iterator until OutOfRangeError with TensorFlow's own loss trajectory."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import client
from protos import graph_pb2
from tests.in_process import in_process_cluster

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

Pair = collections.namedtuple("Pair", "a b")
X = np.arange(12, dtype=np.float32).reshape(6, 2)
LABELS = np.array([0, 1, 0, 1, 1, 0], np.int64)


# -- pipelines: body(tf) -> dataset ---------------------------------------------------------
def _range(tf):
    return tf.data.Dataset.range(5)


def _range_start_stop_step_take(tf):
    return tf.data.Dataset.range(2, 20, 3).take(4)


def _slices_nested_map_capture(tf):
    scale = tf.constant(2.0, name="scale")
    offset = tf.constant([10.0, 20.0])
    ds = tf.data.Dataset.from_tensor_slices(({"x": X, "id": np.arange(6)}, LABELS))
    return ds.map(lambda d, y: {"f": d["x"] * scale + offset, "y": y + d["id"]})


def _from_tensors_repeat(tf):
    return tf.data.Dataset.from_tensors(([1, 2, 3], "abc", 2.5)).repeat(3)


def _zip_skip(tf):
    a = tf.data.Dataset.range(6)
    b = tf.data.Dataset.from_tensor_slices(X)
    return tf.data.Dataset.zip((a, (b, a))).skip(2)


def _concatenate_shapes(tf):
    a = tf.data.Dataset.from_tensors(np.ones((2, 3), np.int32))
    b = tf.data.Dataset.from_tensors(np.zeros((4, 3), np.int32)).repeat(2)
    return a.concatenate(b)


def _filter_map(tf):
    ds = tf.data.Dataset.range(20).filter(lambda x: tf.equal(x % 3, 0))
    return ds.map(lambda x: (x, tf.cast(x, tf.float32) * 0.5))


def _filter_capture(tf):
    limit = tf.constant(7, tf.int64)
    return tf.data.Dataset.range(12).filter(lambda x: x < limit)


def _flat_map(tf):
    return tf.data.Dataset.range(1, 5).flat_map(
        lambda x: tf.data.Dataset.from_tensors(x * 10).repeat(x)
    )


def _flat_map_slices_nested_map(tf):
    k = tf.constant(100, tf.int64)
    return tf.data.Dataset.range(4).flat_map(
        lambda x: tf.data.Dataset.range(x).map(lambda y: y + k * x)
    )


def _shuffle_op_seed(tf):
    return tf.data.Dataset.range(20).shuffle(7, seed=42).repeat(3)


def _shuffle_graph_seed(tf):
    tf.set_random_seed(1234)
    return tf.data.Dataset.range(15).shuffle(15).repeat(2)


def _shuffle_both_seeds_no_reshuffle(tf):
    tf.set_random_seed(9)
    ds = tf.data.Dataset.range(10).shuffle(4, seed=3, reshuffle_each_iteration=False)
    return ds.repeat(2)


def _batch(tf):
    return tf.data.Dataset.from_tensor_slices((X, LABELS)).batch(4)


def _batch_drop_remainder(tf):
    return tf.data.Dataset.range(11).batch(3, drop_remainder=True)


def _padded_batch(tf):
    ds = tf.data.Dataset.range(1, 6).map(lambda x: tf.fill([x], x))
    return ds.padded_batch(2, padded_shapes=[None])


def _padded_batch_values(tf):
    ds = tf.data.Dataset.range(1, 5).map(lambda x: (tf.fill([x], x), x))
    return ds.padded_batch(3, padded_shapes=([6], []), padding_values=(np.int64(-1), np.int64(0)))


def _cache_prefetch(tf):
    return tf.data.Dataset.range(4).map(lambda x: x * x).cache("").repeat(2).prefetch(2)


def _parallel_map_namedtuple(tf):
    ds = tf.data.Dataset.from_tensor_slices(Pair(a=X[:, 0], b=X[:, 1]))
    return ds.map(lambda p: Pair(a=p.b, b=p.a + p.b), num_parallel_calls=2)


def _map_single_and_python_constant(tf):
    return tf.data.Dataset.range(3).map(lambda x: (x, 7))


def _map_returns_list(tf):
    return tf.data.Dataset.range(3).map(lambda x: [x, x + 1])


def _everything(tf):
    tf.set_random_seed(5)
    c = tf.constant(3, tf.int64)
    ds = tf.data.Dataset.from_tensor_slices((np.arange(10), np.arange(10) * 2))
    ds = ds.map(lambda a, b: (a * c, b)).filter(lambda a, b: tf.equal(a % 2, 0))
    ds = ds.shuffle(5, seed=1).batch(2).repeat(2).skip(1).take(5).prefetch(1)
    return ds


PIPELINES = {
    f.__name__.lstrip("_"): f
    for f in [
        _range,
        _range_start_stop_step_take,
        _slices_nested_map_capture,
        _from_tensors_repeat,
        _zip_skip,
        _concatenate_shapes,
        _filter_map,
        _filter_capture,
        _flat_map,
        _flat_map_slices_nested_map,
        _shuffle_op_seed,
        _shuffle_graph_seed,
        _shuffle_both_seeds_no_reshuffle,
        _batch,
        _batch_drop_remainder,
        _padded_batch,
        _padded_batch_values,
        _cache_prefetch,
        _parallel_map_namedtuple,
        _map_single_and_python_constant,
        _map_returns_list,
        _everything,
    ]
}


# -- helpers --------------------------------------------------------------------------------
def _spec(tf, ds):
    """The element spec as plain values: (shape as a list or None, dtype name) per
    component, in the element's structure."""
    flat = tf_real.nest.flatten(ds.element_spec)
    out = [(s.shape.as_list() if s.shape.ndims is not None else None, s.dtype.name) for s in flat]
    return out, _kinds(ds.element_spec)


def _kinds(s):
    """The nesting of a structure: dict keys, tuple types, and leaves as '.'."""
    if isinstance(s, dict):
        return {k: _kinds(v) for k, v in s.items()}
    if isinstance(s, tuple):
        return (type(s).__name__, [_kinds(v) for v in s])
    return "."


def _run(tf, body, initializable=False):
    """Every element of body(tf)'s dataset through tf's Session, then the end."""
    g = tf.Graph()
    with g.as_default():
        ds = body(tf)
        if initializable:
            it = tf.data.make_initializable_iterator(ds)
        else:
            it = tf.data.make_one_shot_iterator(ds)
        nxt = it.get_next()
        spec = _spec(tf, ds)
        static = [t.shape.as_list() if t.shape.ndims is not None else None for t in
                  tf_real.nest.flatten(nxt)]  # fmt: skip
        elements = []
        with tf.Session(graph=g) as sess:
            if initializable:
                sess.run(it.initializer)
            while True:
                try:
                    elements.append(sess.run(nxt))
                except tf.errors.OutOfRangeError:
                    break
                assert len(elements) < 1000, "the dataset did not end"
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(nxt)  # stays at the end
    return elements, spec, static, _kinds(nxt)


def _assert_same_elements(ours, theirs):
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert _kinds(a) == _kinds(b), f"element {i}"
        fa, fb = tf_real.nest.flatten(a), tf_real.nest.flatten(b)
        assert len(fa) == len(fb)
        for x, y in zip(fa, fb):
            x, y = np.asarray(x), np.asarray(y)
            assert x.shape == y.shape, f"element {i}: {x!r} vs {y!r}"
            if y.dtype.kind in "OSU":
                assert x.tolist() == y.tolist(), f"element {i}"
            else:
                assert x.dtype == y.dtype, f"element {i}: {x.dtype} vs {y.dtype}"
                np.testing.assert_array_equal(x, y, err_msg=f"element {i}")


# -- tests ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_elements_match_tensorflow(name):
    body = PIPELINES[name]
    ours, our_spec, our_static, our_kinds = _run(client, body)
    theirs, tf_spec, tf_static, tf_kinds = _run(tf1, body)
    assert our_spec == tf_spec
    assert our_static == tf_static
    assert our_kinds == tf_kinds
    assert len(theirs) > 0
    _assert_same_elements(ours, theirs)


@pytest.mark.parametrize("name", ["everything", "shuffle_op_seed", "flat_map"])
def test_initializable_iterator_matches_tensorflow(name):
    ours = _run(client, PIPELINES[name], initializable=True)[0]
    theirs = _run(tf1, PIPELINES[name], initializable=True)[0]
    _assert_same_elements(ours, theirs)


def test_reinitializing_restarts_the_iterator():
    def body(tf):
        it = tf.data.make_initializable_iterator(tf.data.Dataset.range(3).shuffle(3, seed=1))
        return it, it.get_next()

    seen = []
    for tf in (client, tf1):
        g = tf.Graph()
        with g.as_default():
            it, nxt = body(tf)
            with tf.Session(graph=g) as sess:
                with pytest.raises(tf.errors.FailedPreconditionError):
                    sess.run(nxt)  # not initialized yet
                runs = []
                for _ in range(2):
                    sess.run(it.initializer)
                    runs.append([int(sess.run(nxt)) for _ in range(3)])
                seen.append(runs)
    assert seen[0] == seen[1]
    assert sorted(seen[0][0]) == [0, 1, 2]


def _graph_of(tf, body):
    g = tf.Graph()
    with g.as_default():
        nxt = tf.data.make_one_shot_iterator(body(tf)).get_next()
    return g.as_graph_def(), nxt


def _wire(message):
    return message.SerializeToString(deterministic=True)


def test_graph_ops_match_tensorflow():
    ours, _ = _graph_of(client, _everything)
    theirs, _ = _graph_of(tf1, _everything)
    assert [n.op for n in ours.node] == [n.op for n in theirs.node]
    assert [n.name for n in ours.node] == [n.name for n in theirs.node]
    for a, b in zip(ours.node, theirs.node):
        assert a.input == b.input, a.name
        for key in ("_class", "output_types", "output_shapes", "Toutput_types", "Targuments",
                    "reshuffle_each_iteration", "legacy_autotune", "value"):  # fmt: skip
            assert (key in a.attr) == (key in b.attr), (a.name, key)
            if key in a.attr:
                assert _wire(a.attr[key]) == _wire(b.attr[key]), (a.name, key)

    def bodies(gd):
        """Per library function: its arity and its body's op types (for the one-shot
        factory, which TensorFlow copies depth first and duplicating shared Consts, the
        set of op types and the order of its dataset ops)."""
        out = []
        for f in gd.library.function:
            ops = [n.op for n in f.node_def]
            if f.signature.name.startswith("_make_dataset_"):
                ops = (sorted(set(ops)), [op for op in ops if op.endswith("Dataset")])
            out.append((len(f.signature.input_arg), ops))
        return sorted(out, key=repr)

    assert bodies(ours) == bodies(theirs)
    assert len(ours.library.function) == 3  # map, filter and the one-shot factory
    factory = [f for f in ours.library.function if f.signature.name.startswith("_make_dataset_")]
    assert len(factory) == 1 and factory[0].signature.is_stateful
    assert [a.type for a in factory[0].signature.output_arg] == [client.variant.as_datatype_enum]


def test_map_function_def_uses_tensorflow_naming():
    def body(tf):
        c = tf.constant(2.0, name="scale")
        return tf.data.Dataset.from_tensor_slices(X).map(lambda x: x * c)

    ours, _ = _graph_of(client, body)
    theirs, _ = _graph_of(tf1, body)
    (ours_f,) = [f for f in ours.library.function if "map" in f.signature.name]
    (tf_f,) = [f for f in theirs.library.function if "map" in f.signature.name]
    assert [(a.type) for a in ours_f.signature.input_arg] == [
        a.type for a in tf_f.signature.input_arg
    ]
    assert ours_f.signature.input_arg[0].name == tf_f.signature.input_arg[0].name == "args_0"
    assert [a.name for a in ours_f.signature.output_arg] == ["identity"]
    assert dict(ours_f.ret) == dict(tf_f.ret) == {"identity": "Identity:output:0"}
    mul = [n for n in ours_f.node_def if n.op == "Mul"][0]
    assert list(mul.input) == ["args_0", ours_f.signature.input_arg[1].name]
    ident = [n for n in ours_f.node_def if n.op == "Identity"][0]
    assert list(ident.input) == ["mul:z:0"]
    (map_node,) = [n for n in ours.node if n.op == "MapDataset"]
    assert list(map_node.input) == ["TensorSliceDataset", "scale"]


def test_one_shot_iterator_refuses_a_captured_variable():
    g = client.Graph()
    with g.as_default():
        v = client.Variable(client.zeros([], client.int64), use_resource=True)
        ds = client.data.Dataset.range(3).map(lambda x: x + v.read_value())
        with pytest.raises(ValueError, match="Cannot capture a stateful node"):
            client.data.make_one_shot_iterator(ds)
        it = client.data.make_initializable_iterator(ds)  # the way that works
        nxt = it.get_next()
        with client.Session(graph=g) as sess:
            sess.run([v.initializer, it.initializer])
            assert [int(sess.run(nxt)) for _ in range(3)] == [0, 1, 2]


def test_compat_v1_aliases_and_legacy_accessors():
    ds = client.compat.v1.data.Dataset.range(4).batch(2, drop_remainder=True)
    assert client.compat.v1.data.get_output_types(ds) == client.int64
    assert client.compat.v1.data.get_output_shapes(ds).as_list() == [2]
    assert ds.element_spec == client.TensorSpec([2], client.int64)
    it = ds.make_one_shot_iterator()
    assert it.output_types == client.int64
    with pytest.raises(ValueError, match="does not have an initializer"):
        it.initializer  # noqa: B018


def test_reinitializable_iterator_from_structure_matches_tensorflow():
    def run(tf):
        g = tf.Graph()
        with g.as_default():
            train = tf.data.Dataset.range(6).map(lambda x: x * 2).batch(4)
            valid = tf.data.Dataset.range(100, 103).batch(4)
            it = tf.data.Iterator.from_structure(
                tf.data.get_output_types(train), tf.data.get_output_shapes(train)
            )
            nxt = it.get_next()
            inits = [it.make_initializer(train), it.make_initializer(valid)]
            out = []
            with tf.Session(graph=g) as sess:
                for init in inits + inits[:1]:
                    sess.run(init)
                    while True:
                        try:
                            out.append(sess.run(nxt).tolist())
                        except tf.errors.OutOfRangeError:
                            break
        return out

    ours = run(client)
    assert ours == run(tf1)
    assert ours == [[0, 2, 4, 6], [8, 10], [100, 101, 102], [0, 2, 4, 6], [8, 10]]


def test_imported_tensorflow_graph_def_with_functions_runs():
    """A GraphDef TensorFlow exported (dataset ops, map/filter functions, the one-shot
    factory in its library) imported by our client runs to TensorFlow's elements."""
    tf_gd, tf_next = _graph_of(tf1, _everything)
    theirs = _run(tf1, _everything)[0]
    g = client.Graph()
    with g.as_default():
        names = [t.name for t in tf_next]
        gd = graph_pb2.GraphDef.FromString(tf_gd.SerializeToString())
        nxt = client.import_graph_def(gd, return_elements=names, name="")
        assert len(g.as_graph_def().library.function) == len(tf_gd.library.function) == 3
        with client.Session(graph=g) as sess:
            ours = []
            while True:
                try:
                    ours.append(tuple(sess.run(nxt)))
                except client.errors.OutOfRangeError:
                    break
    _assert_same_elements(ours, theirs)


# -- cluster: a model fed by an iterator on worker 1, variables on ps ----------------------
CX = np.random.default_rng(3).normal(size=(20, 3)).astype(np.float32)
CY = (CX @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)


def _train_until_end(tf, target, devices):
    g = tf.Graph()
    with g.as_default():
        with tf.device(devices[0]):
            w = tf.Variable(np.zeros((3, 1), np.float32), name="w")
            b = tf.Variable(np.zeros(1, np.float32), name="b")
        with tf.device(devices[1]):
            ds = tf.data.Dataset.from_tensor_slices((CX, CY)).shuffle(8, seed=42).batch(6)
            x, y = tf.data.make_one_shot_iterator(ds.repeat(3)).get_next()
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
            train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        losses = []
        with tf.Session(target, graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            while True:
                try:
                    value, _ = sess.run([loss, train])
                except tf.errors.OutOfRangeError as e:
                    end = e
                    break
                losses.append(float(value))
            final = sess.run([w, b])
    return losses, final, end


def test_cluster_trains_from_iterator_until_out_of_range():
    with in_process_cluster({"worker": 2, "ps": 1}) as master:
        ours, (w, b), end = _train_until_end(
            client, master.target, ("/job:ps/task:0", "/job:worker/task:1")
        )
    theirs, (tw, tb), _ = _train_until_end(tf1, "", (None, None))
    assert len(ours) == len(theirs) == 12  # 20 rows in batches of 6: 4 per epoch, 3 epochs
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    np.testing.assert_allclose(w, tw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b, tb, rtol=1e-5, atol=1e-6)
    assert "IteratorGetNext" in str(end)


def test_two_open_sessions_over_one_graph_have_their_own_one_shot_iterators():
    """An iterator without a shared_name is private to its session's kernels (TensorFlow's
    ContainerInfo), even while the other session is still open on the same worker."""
    with in_process_cluster({"worker": 1}) as master:
        g = client.Graph()
        with g.as_default():
            nxt = client.data.make_one_shot_iterator(client.data.Dataset.range(3)).get_next()
        first = client.Session(master.target, graph=g)
        second = client.Session(master.target, graph=g)
        try:
            assert [int(first.run(nxt)) for _ in range(2)] == [0, 1]
            assert [int(second.run(nxt)) for _ in range(3)] == [0, 1, 2]
            assert int(first.run(nxt)) == 2
            with pytest.raises(client.errors.OutOfRangeError):
                second.run(nxt)
        finally:
            first.close()
            second.close()


@pytest.mark.parametrize("where", ["in_process", "cluster"])
def test_one_shot_iterator_goes_on_after_the_graph_grows(where):
    """A program that builds an op between runs (x[:, 0] inside its training loop) extends
    the session's graph each step: the one-shot iterator must go on where it was, as
    TensorFlow's session keeps its stateful kernels for its life (OpSegment). Before, the
    in-process session dropped its kernels on extend and every run restarted the dataset."""

    def first_elements(tf_mod, target):
        with tf_mod.Graph().as_default():
            x = tf_mod.data.Dataset.range(10).make_one_shot_iterator().get_next()
            with tf_mod.Session(target) as sess:
                return [int(sess.run([x, x + i])[0]) for i in range(4)]

    want = first_elements(tf1, "")
    assert want == [0, 1, 2, 3]
    if where == "in_process":
        assert first_elements(client, "") == want
    else:
        with in_process_cluster({"worker": 1}) as master:
            assert first_elements(client, master.target) == want
