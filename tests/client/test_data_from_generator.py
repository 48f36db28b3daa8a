"""tf.data.Dataset.from_generator: the same tf.compat.v1 programs built with our client and
with TensorFlow give the same elements, end at the same point, fail with TensorFlow's error
codes and messages, and build the same graph (outer nodes, library functions, the ops in
them); GeneratorDataset has TensorFlow's OpDef; on a worker of another process the
generator's PyFunc is TensorFlow's "Could not find callback"."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

import client
from tests.client.test_data import _assert_same_elements, _run
from tests.common.ops.signatures import assert_signature_matches_tensorflow

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1
tf1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module


# -- generators -----------------------------------------------------------------------------
def _pairs():
    for i in range(4):
        yield i, [i, 2 * i]


def _counted(n, word):
    for i in range(int(n)):
        yield {"i": i, "w": word * (i + 1)}


def _floats():
    yield from ([1.5], [2.5, 3.5], [])


def _scalars():
    yield from (7, 8, 9)


def _empty():
    return iter(())


# -- pipelines: body(tf) -> dataset ---------------------------------------------------------
def _tuple_types_and_shapes(tf):
    return tf.data.Dataset.from_generator(
        _pairs, (tf.int64, tf.int32), (tf.TensorShape([]), tf.TensorShape([2]))
    )


def _dict_with_args(tf):
    return tf.data.Dataset.from_generator(
        _counted,
        {"i": tf.int32, "w": tf.string},
        {"i": [], "w": []},
        args=(3, tf.constant("ab")),
    )


def _types_only_unknown_shape(tf):
    return tf.data.Dataset.from_generator(_floats, tf.float32)


def _output_signature(tf):
    return tf.data.Dataset.from_generator(
        _pairs,
        output_signature=(tf.TensorSpec([], tf.int64), tf.TensorSpec([None], tf.int32)),
    )


def _map_batch(tf):
    ds = tf.data.Dataset.from_generator(_scalars, tf.int64, tf.TensorShape([]))
    return ds.map(lambda x: x * 10).batch(2)


def _repeat_restarts_the_generator(tf):
    return tf.data.Dataset.from_generator(_pairs, (tf.int64, tf.int32)).repeat(2)


def _empty_generator(tf):
    return tf.data.Dataset.from_generator(_empty, tf.int64, []).concatenate(
        tf.data.Dataset.range(2)
    )


PIPELINES: dict[str, Callable[[Any], Any]] = {
    "tuple_types_and_shapes": _tuple_types_and_shapes,
    "dict_with_args": _dict_with_args,
    "types_only_unknown_shape": _types_only_unknown_shape,
    "output_signature": _output_signature,
    "map_batch": _map_batch,
    "repeat_restarts_the_generator": _repeat_restarts_the_generator,
    "empty_generator": _empty_generator,
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
@pytest.mark.parametrize("initializable", [False, True])
def test_elements_match_tensorflow(name, initializable):
    body = PIPELINES[name]
    ours, our_spec, our_static, our_kinds = _run(client, body, initializable)
    theirs, tf_spec, tf_static, tf_kinds = _run(tf1, body, initializable)
    assert (our_spec, our_static, our_kinds) == (tf_spec, tf_static, tf_kinds)
    assert len(theirs) > 0
    _assert_same_elements(ours, theirs)


def test_reinitializing_restarts_the_generator():
    seen = []
    for tf in (client, tf1):
        starts: list[int] = []

        def gen(starts=starts):
            starts.append(1)
            yield from range(3)

        g = tf.Graph()
        with g.as_default():
            ds = tf.data.Dataset.from_generator(gen, tf.int64, [])
            it = tf.data.make_initializable_iterator(ds)
            nxt = it.get_next()
            with tf.Session(graph=g) as sess:
                runs = []
                for _ in range(2):
                    sess.run(it.initializer)
                    runs.append([int(sess.run(nxt)) for _ in range(2)])  # not to the end
                sess.run(it.initializer)
                runs.append([int(sess.run(nxt)) for _ in range(3)])
                with pytest.raises(tf.errors.OutOfRangeError):
                    sess.run(nxt)
        seen.append((runs, len(starts)))
    assert seen[0] == seen[1] == ([[0, 1], [0, 1], [0, 1, 2]], 3)


# -- errors ---------------------------------------------------------------------------------
def _raises_midway():
    yield 1
    raise ValueError("boom")


def _bad_shape():
    yield [1, 2, 3]


def _bad_structure():
    yield 1


def _not_a_number():
    yield "x"


def _bad_signature_shape():
    yield [1, 2, 3]


ERRORS = {
    "raises_midway": (_raises_midway, lambda tf: (tf.int64, None), "ValueError: boom"),
    "bad_shape": (
        _bad_shape,
        lambda tf: (tf.int64, [2]),
        "TypeError: `generator` yielded an element of shape (3,) where an element of shape "
        "(2,) was expected.",
    ),
    "bad_structure": (
        _bad_structure,
        lambda tf: ((tf.int64, tf.int64), None),
        "TypeError: `generator` yielded an element that did not match the expected "
        "structure. The expected structure was (tf.int64, tf.int64), but the yielded element "
        "was 1.",
    ),
    "not_a_number": (
        _not_a_number,
        lambda tf: (tf.int64, None),
        "TypeError: `generator` yielded an element that did not match the expected "
        "structure. The expected structure was TensorSpec(shape=<unknown>, dtype=tf.int64, "
        "name=None), but the yielded element was x.",
    ),
}


def _first_error(tf, gen, types, shapes):
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.from_generator(gen, types, shapes)
        nxt = tf.data.make_one_shot_iterator(ds).get_next()
        with tf.Session(graph=g) as sess:
            got = []
            with pytest.raises(tf.errors.OpError) as info:
                for _ in range(5):
                    got.append(sess.run(nxt))
    return got, type(info.value).__name__, str(info.value)


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_generator_errors_are_tensorflows(name):
    gen, signature, message = ERRORS[name]
    ours = _first_error(client, gen, *signature(client))
    theirs = _first_error(tf1, gen, *signature(tf_real))
    assert ours[0] == theirs[0]  # the elements before the error
    assert ours[1] == theirs[1] == "InvalidArgumentError"
    assert message in theirs[2]
    assert message in ours[2]
    # Both name the function's node: PyFunc, or EagerPyFunc on the output_signature path.
    node = re.search(r"\{\{node (\w+)\}\}", theirs[2]).group(1)
    assert node in ours[2]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({}, "either the `output_signature` argument or the `output_types` argument"),
        (
            {"output_types": "int64", "output_signature": "spec"},
            "The `output_types` argument can not be used together with the "
            "`output_signature` argument.",
        ),
        (
            {"output_shapes": [], "output_signature": "spec"},
            "The `output_shapes` argument can not be used together with the "
            "`output_signature` argument.",
        ),
    ],
)
def test_signature_arguments_are_checked_as_tensorflow_checks_them(kwargs, message):
    for tf in (client, tf_real):
        args = dict(kwargs)
        if args.get("output_signature") == "spec":
            args["output_signature"] = tf.TensorSpec([], tf.int64)
        if "output_types" in args:
            args["output_types"] = tf.int64
        with tf.Graph().as_default(), pytest.raises(TypeError, match=re.escape(message)):
            tf.data.Dataset.from_generator(_scalars, **args)
    with pytest.raises(TypeError, match="`generator` must be a Python callable."):
        client.data.Dataset.from_generator(3, client.int64)


# -- graph ----------------------------------------------------------------------------------
def _dict_with_args_map(tf):
    ds = tf.data.Dataset.from_generator(
        _counted, {"i": tf.int32, "w": tf.string}, {"i": [], "w": []}, args=(3, "ab")
    )
    return ds.map(lambda e: e["i"])


GRAPHS = {
    "dict_with_args_map": _dict_with_args_map,  # the PyFunc path
    "types_only_unknown_shape": _types_only_unknown_shape,  # the EagerPyFunc path
    "output_signature": _output_signature,
}


def _graph(tf, body):
    g = tf.Graph()
    with g.as_default():
        tf.data.make_one_shot_iterator(body(tf)).get_next()
    return g.as_graph_def()


def _functions(gd):
    """Per library function (its name without the trailing uid): its arguments' types and
    its body's (op, inputs) pairs, arguments unnamed; the NoOp TensorFlow's automatic control dependencies
    add after a stateful op aside (our tracing adds none)."""
    out = {}
    for f in gd.library.function:
        name = re.sub(r"_\d+$", "", f.signature.name)
        if name.startswith("_make_dataset_"):
            name = "_make_dataset_"
        body = sorted(
            (n.op, tuple(_arg_or_output(i) for i in n.input if not i.startswith("^")))
            for n in f.node_def
            if n.op != "NoOp"
        )
        out[name] = ([a.type for a in f.signature.input_arg], body)
    return out


def _arg_or_output(name: str) -> str:
    """A node's output as it is; a function argument as "ARG": TensorFlow names a captured
    tensor's argument in the scope of the op first using it ("pyfunc_args_0"), ours
    after the tensor ("args_0_1")."""
    return name if ":" in name else "ARG"


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_graph_matches_tensorflow(name):
    ours, theirs = _graph(client, GRAPHS[name]), _graph(tf1, GRAPHS[name])
    assert [(n.name, n.op, list(n.input)) for n in ours.node] == [
        (n.name, n.op, list(n.input)) for n in theirs.node
    ]
    assert _functions(ours) == _functions(theirs)
    generator_ops = {
        f: [n for n in gd.library.function for n in n.node_def if n.op == "GeneratorDataset"][0]
        for f, gd in (("ours", ours), ("theirs", theirs))
    }
    for key in ("output_types", "output_shapes", "Tinit_func_args", "Tnext_func_args",
                "Tfinalize_func_args"):  # fmt: skip
        a, b = generator_ops["ours"].attr[key], generator_ops["theirs"].attr[key]
        assert a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True), (
            key
        )
    for key in ("init_func", "next_func", "finalize_func"):
        ours_f = generator_ops["ours"].attr[key].func.name
        theirs_f = generator_ops["theirs"].attr[key].func.name
        assert re.sub(r"_\d+$", "", ours_f) == re.sub(r"_\d+$", "", theirs_f)


def test_generator_dataset_signature_matches_tensorflow():
    assert_signature_matches_tensorflow("GeneratorDataset")


# -- cluster --------------------------------------------------------------------------------
def test_generator_on_a_worker_of_another_process_is_could_not_find_callback():
    from deploy.launcher import LocalCluster

    cluster = LocalCluster().start()
    try:
        g = client.Graph()
        with g.as_default():
            with client.device("/job:worker/task:1"):
                ds = client.data.Dataset.from_generator(_scalars, client.int64, [])
                nxt = client.data.make_one_shot_iterator(ds).get_next()
            with (
                client.Session(cluster.target, graph=g) as sess,
                pytest.raises(client.errors.InvalidArgumentError) as info,
            ):
                sess.run(nxt)
    finally:
        cluster.stop()
    message = str(info.value)
    assert "ValueError: Could not find callback with key=pyfunc_" in message
    assert "PyFunc" in message
