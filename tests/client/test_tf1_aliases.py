"""TF1 programs' top-level names: tf.compat.v1, tf.app/flags/logging, tf.assign and
tf.scatter_*, tf.arg_max, tf.to_int64 ..., tf.NodeDef/GraphDef, against TensorFlow."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import client
from tests.client.tf1_oracle import assert_close, run_both, tf1

TF_GRAPH_MODE = True


def test_compat_v1_is_the_client():
    import client.compat.v1 as tf

    assert tf is client and tf.compat.v1 is client
    assert tf.disable_eager_execution() is None and tf.disable_v2_behavior() is None
    node = tf.NodeDef(name="a", op="Const")
    assert tf.GraphDef(node=[node]).node[0].name == "a"
    assert tf.AttrValue(i=3).i == 3


def test_assign_and_scatter_like_tf():
    def build(tf):
        v = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="v")
        c = tf.Variable(1.0, name="c")
        ops = {
            "assign": tf.assign(c, 5.0),
            "add": tf.assign_add(c, 2.0),
            "sub": tf.assign_sub(c, 0.5, name="down"),
            "upd": tf.scatter_update(v, [0, 2], [[9.0, 9.0], [7.0, 7.0]]),
            "sadd": tf.scatter_add(v, [1], [[1.0, 1.0]]),
            "ssub": tf.scatter_sub(v, [1, 1], [[1.0, 2.0], [3.0, 4.0]]),
            "smul": tf.scatter_mul(v, [0], [[2.0, 3.0]]),
            "sdiv": tf.scatter_div(v, [2], [[2.0, 4.0]]),
            "smax": tf.scatter_max(v, [0], [[100.0, 0.0]]),
            "smin": tf.scatter_min(v, [2], [[0.0, 100.0]]),
        }

        def steps(sess):
            return [sess.run(ops[k]) for k in ops]

        return steps

    out, want, _, _ = run_both(build)
    assert_close(out, want)


def test_math_aliases_like_tf():
    x = np.array([[0.3, -1.2, 2.0], [0.5, 0.1, -0.7]], np.float32)

    def build(tf):
        p = tf.placeholder(tf.float32, [2, 3], name="p")
        fetches = [
            tf.arg_max(p, 1),
            tf.arg_min(p, 0, output_type=tf.int32),
            tf.to_int64(tf.to_float(tf.constant([1, 2]))),
            tf.to_double(p),
            tf.log_sigmoid(p),
            tf.div(p, 2.0),
            tf.mod(tf.constant([7, -7]), 3),
            tf.squared_difference(p, 1.0),
            tf.tan(p),
            tf.atan(p),
            tf.sinh(p),
            tf.cosh(p),
            tf.expm1(p),
            tf.erfc(p),
            tf.lgamma(tf.abs(p) + 1.0),
            tf.rint(p * 3.0),
            tf.truncatemod(tf.constant([7, -7]), 3),
            tf.segment_sum(p, [0, 0]),
            tf.unsorted_segment_sum(p, [1, 0], 3),
            tf.unique(tf.constant([3, 1, 3, 2])),
            tf.lin_space(0.0, 1.0, 5),
            tf.scalar_mul(2.0, p),
            tf.invert_permutation([2, 0, 1]),
        ]
        # tf.lin_space is a Python composite in TF 2.x (linspace/...): values only.
        names = [t.name for t in fetches if hasattr(t, "name") and "inspace" not in t.name.lower()]

        def steps(sess):
            return sess.run(fetches, {p: x}), names

        return steps

    (out, names), (want, want_names), _, _ = run_both(build)
    assert_close(out, want)
    assert [(a, b) for a, b in zip(names, want_names) if a != b] == []


def test_flags_and_app_run(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        textwrap.dedent(
            """
            import client.compat.v1 as tf

            flags = tf.app.flags
            flags.DEFINE_string("name", "world", "who")
            flags.DEFINE_integer("steps", 3, "how many")
            flags.DEFINE_float("lr", 0.1, "rate")
            flags.DEFINE_boolean("fast", False, "go fast")
            FLAGS = flags.FLAGS

            def main(argv):
                tf.logging.set_verbosity(tf.logging.INFO)
                print(FLAGS.name, FLAGS.steps * 2, FLAGS.lr, FLAGS.fast, argv[1:])
                return 0

            if __name__ == "__main__":
                tf.app.run()
            """
        )
    )
    out = subprocess.run(
        [sys.executable, str(script), "--name=tf", "--steps", "5", "--fast", "extra"],
        capture_output=True,
        text=True,
        check=True,
        cwd=str(tmp_path),
        env={"PYTHONPATH": str(__import__("pathlib").Path(client.__file__).parents[1])},
    )
    assert out.stdout.split() == ["tf", "10", "0.1", "True", "['extra']"]


def test_flags_parse_errors():
    fv = client.flags.FlagValues()
    client.flags.DEFINE_integer("n", 1, "", flag_values=fv)
    client.flags.DEFINE_bool("b", True, "", flag_values=fv)
    assert fv.n == 1
    assert fv(["prog", "--nob", "--n=4"]) == ["prog"] and (fv.n, fv.b) == (4, False)
    with pytest.raises(client.flags.IllegalFlagValueError, match="--n=x"):
        fv(["prog", "--n=x"])
    with pytest.raises(client.flags.UnrecognizedFlagError, match="'zz'"):
        fv(["prog", "--zz=1"])
    with pytest.raises(client.flags.Error, match="defined twice"):
        client.flags.DEFINE_integer("n", 1, "", flag_values=fv)


def test_logging_goes_to_the_tensorflow_logger(caplog):
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        client.logging.info("step %d", 3)
        for _ in range(5):
            client.logging.log_every_n(client.logging.WARN, "every", 2)
    assert [r.getMessage() for r in caplog.records] == ["step 3", "every", "every", "every"]
    assert client.logging.get_logger().name == tf1.get_logger().name == "tensorflow"


def test_more_tf1_names_like_tf():
    x = np.array([[0.3, -1.2, 2.0, 0.0], [0.5, 0.1, -0.7, 0.0]], np.float32)

    def build(tf):
        p = tf.placeholder(tf.float32, [2, 4], name="p")
        w = tf.Variable(np.arange(8, dtype=np.float32).reshape(4, 2) / 10, name="w")
        b = tf.Variable(np.array([0.5, -0.5], np.float32), name="b")
        img = tf.reshape(tf.range(2 * 4 * 4 * 3, dtype=tf.float32) / 50.0, [2, 4, 4, 3])
        kern = tf.reshape(tf.range(3 * 3 * 2 * 3, dtype=tf.float32) / 30.0, [3, 3, 2, 3])
        vol = tf.reshape(tf.range(2 * 4 * 4 * 4 * 1, dtype=tf.float32) / 40.0, [2, 4, 4, 4, 1])
        vals = {
            "l2n": tf.nn.l2_normalize(p, axis=1),
            "xwb": tf.nn.xw_plus_b(p, w, b),
            "relu_layer": tf.nn.relu_layer(p, w, b),
            "wce": tf.nn.weighted_cross_entropy_with_logits(
                labels=tf.ones_like(p), logits=p, pos_weight=2.0
            ),
            "zero_fraction": tf.nn.zero_fraction(p),
            "softsign": tf.nn.softsign(p),
            "selu": tf.nn.selu(p),
            "swish": tf.nn.swish(p),
            "top_k": tf.nn.top_k(p, 2),
            "deconv": tf.nn.conv2d_transpose(img, kern, [2, 8, 8, 2], [1, 2, 2, 1]),
            "conv3d": tf.nn.conv3d(vol, tf.ones([2, 2, 2, 1, 2]), [1, 1, 1, 1, 1], "VALID"),
            "max_pool3d": tf.nn.max_pool3d(vol, 2, 2, "SAME"),
            "avg_pool3d": tf.nn.avg_pool3d(vol, [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "VALID"),
            "mask": tf.sequence_mask([1, 3, 0], 4, dtype=tf.float32),
            "mask_auto": tf.sequence_mask(tf.constant([2, 1])),
            "gather_nd": tf.gather_nd(p, [[0, 1], [1, 2]]),
            "mt": tf.matrix_transpose(tf.reshape(p, [2, 2, 2])),
        }
        loss = (
            tf.reduce_sum(vals["l2n"] * vals["xwb"][:, :1])
            + tf.reduce_sum(vals["softsign"] + vals["selu"] + vals["swish"])
            + tf.reduce_sum(vals["gather_nd"] * 3.0)
        )
        grads = tf.gradients(loss, [p, w, b])
        with tf.control_dependencies([tf.Assert(tf.reduce_all(p < 5.0), [p])]):
            checked = tf.identity(p)
        local = tf.get_local_variable("counter", [], initializer=tf.zeros_initializer())
        flags = (tf.is_tensor(p), tf.is_tensor(3.0), local.name, len(tf.local_variables()))

        def steps(sess):
            sess.run(tf.tables_initializer())
            return sess.run([vals, grads, checked], {p: x}), flags

        return steps

    out, want, _, _ = run_both(build)
    assert_close(out, want, rtol=1e-5, atol=1e-6)
