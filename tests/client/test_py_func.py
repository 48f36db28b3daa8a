"""tf.py_func / numpy_function / py_function: the same programs through tensorflow.compat.v1
and the client, each in a local session; values, error codes and messages compared
(tokens aside: ours carry a per-process tag)."""

from __future__ import annotations

import gc
import re
import threading

import numpy as np
import pytest

import client
from common.ops.py_func_ops import REGISTRY

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1


def _stop(_a):
    raise StopIteration()


def _not_implemented(_a):
    raise NotImplementedError("nope")


def _bad_literal(_a):
    return int("x")


# (name, func, inputs, Tout): what TF's FuncRegistry and py_func.cc accept and refuse.
CASES = [
    ("scalar_in", lambda a: a * np.float32(2), [3.0], "float32"),
    ("strings_in", lambda a: a, [["ab", "c"]], "string"),
    ("strings_concat", lambda a: np.array([x + b"!" for x in a], dtype=object), [["ab"]], "string"),
    ("int_result", lambda a: 5, [[1.0]], "int64"),
    ("unicode_result", lambda a: "h\u00e9llo", [[1.0]], "string"),
    ("two_outputs", lambda a: (a, np.int32(3)), [[1.0, 2.0]], ["float32", "int32"]),
    ("no_outputs", lambda a: None, [[1.0]], []),
    ("bool_result", lambda a: True, [[1.0]], "bool"),
    ("transposed", lambda a: np.zeros((2, 3), np.float32).T, [[1.0]], "float32"),
    ("strided", lambda a: np.arange(4, dtype=np.float32)[::2], [[1.0]], "float32"),
    ("no_inputs", lambda: np.float32(7), [], "float32"),
    ("wrong_dtype", lambda a: a * 2, [[1.0]], "float64"),
    ("int64_for_int32", lambda a: 5, [[1.0]], "int32"),
    ("too_many", lambda a: (a, a), [[1.0]], "float32"),
    ("too_few", lambda a: a, [[1.0]], ["float32", "float32"]),
    ("list_is_outputs", lambda a: [1.5, 2], [[1.0]], "float32"),
    ("none_for_one", lambda a: None, [[1.0]], "float32"),
    ("zero_division", lambda a: 1 / 0, [[1.0]], "float32"),
    ("value_error", _bad_literal, [[1.0]], "float32"),
    ("stop_iteration", _stop, [[1.0]], "float32"),
    ("not_implemented", _not_implemented, [[1.0]], "float32"),
]


def _tokenless(message: str) -> str:
    return re.sub(r"pyfunc_\d+(_[0-9a-f]{8})?", "pyfunc_N", message)


def _run(tf, func, inputs, tout):
    g = tf.Graph()
    with g.as_default():
        dtype = [getattr(tf, t) for t in tout] if isinstance(tout, list) else getattr(tf, tout)
        out = tf.py_func(func, [tf.constant(v) for v in inputs], dtype, name="pf")
        with tf.Session(graph=g) as sess:
            try:
                return "ok", sess.run(out)
            except tf.errors.OpError as e:
                # TF puts the function's exception (or its own check) first, after the node.
                lines = [ln for ln in str(e).splitlines() if ln.strip()]
                text = next(
                    ln
                    for ln in lines
                    if re.match(r"^\s*(\d+-th value|pyfunc_\d|\w+(Error|Iteration)\b)", ln)
                )
                return "error", (type(e).__name__, _tokenless(text.strip()))


def _same(ours, theirs) -> None:
    if isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
        return
    if theirs is None:
        assert ours is None
        return
    a, b = np.asarray(ours), np.asarray(theirs)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tolist() == b.tolist()


@pytest.mark.parametrize("name,func,inputs,tout", CASES, ids=[c[0] for c in CASES])
def test_py_func_matches_tensorflow(name, func, inputs, tout) -> None:
    theirs = _run(tf1, func, inputs, tout)
    ours = _run(client, func, inputs, tout)
    assert ours[0] == theirs[0], (ours, theirs)
    if theirs[0] == "ok":
        _same(ours[1], theirs[1])
    else:
        assert ours[1] == theirs[1]


def test_arguments_are_read_only_so_shared_tensors_stay_intact() -> None:
    # Our tensors may feed other consumers: a function writing into its argument is refused
    # (InvalidArgument, as any ValueError it raises) instead of changing what they read.
    def scribble(a):
        a[0] = 99.0
        return a

    x = client.constant([1.0, 2.0])
    y = client.py_func(scribble, [x], client.float32, name="scribble")
    z = x + 0.0
    with client.Session() as sess:
        with pytest.raises(client.errors.InvalidArgumentError, match="read-only") as info:
            sess.run([y, z])
        assert "scribble" in str(info.value)
        assert sess.run(z).tolist() == [1.0, 2.0]


def test_py_function_passes_values_with_numpy_and_converts_python_results() -> None:
    x = client.constant([1, 2], client.int32)
    y = client.py_function(lambda a: a.numpy().sum() * 1.5, [x], client.float32)
    t = tf1.Graph()
    with t.as_default():
        ty = tf1.py_function(lambda a: a.numpy().sum() * 1.5, [tf1.constant([1, 2])], tf1.float32)
        with tf1.Session() as sess:
            theirs = sess.run(ty)
    with client.Session() as sess:
        assert sess.run(y) == theirs == np.float32(4.5)
    assert y.op.type == "EagerPyFunc" and ty.op.type == "EagerPyFunc"


def test_graph_matches_tensorflow_but_for_the_token() -> None:
    def build(tf):
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.float32, [None], name="x")
            tf.py_func(np.square, [x], tf.float32)
            tf.py_func(np.square, [x], [tf.float32, tf.int64], stateful=False, name="pair")
            tf.numpy_function(np.square, [x], tf.float32)
            tf.py_function(np.square, [x], tf.float32)
        out = []
        for n in g.as_graph_def().node:
            attrs = {k: v for k, v in n.attr.items() if k != "token"}
            out.append((n.name, n.op, list(n.input), sorted((k, str(v)) for k, v in attrs.items())))
        return out

    assert build(client) == build(tf1)


def test_no_gradient_for_py_func_as_tensorflow() -> None:
    x = client.constant([1.0])
    y = client.py_func(lambda a: a, [x], client.float32)
    assert client.gradients(y, x) == [None]


def test_functions_live_as_long_as_their_graph() -> None:
    g = client.Graph()
    with g.as_default():
        y = client.py_func(lambda a: a, [client.constant(1.0)], client.float32)
    token = y.op.get_attr("token")
    token = token.decode() if isinstance(token, bytes) else token
    assert REGISTRY.get(token) is not None
    del g, y
    gc.collect()
    assert REGISTRY.get(token) is None


def test_functions_run_from_concurrent_steps() -> None:
    seen: list[int] = []
    lock = threading.Lock()

    def record(a):
        with lock:
            seen.append(int(a))
        return a

    x = client.placeholder(client.int64, [])
    y = client.py_func(record, [x], client.int64)
    with client.Session() as sess:
        threads = [threading.Thread(target=sess.run, args=(y, {x: i})) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert sorted(seen) == list(range(8))
