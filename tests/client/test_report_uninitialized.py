"""tf.report_uninitialized_variables: TensorFlow's graph (names, ops, inputs, devices)
and the names it reports, under a replica_device_setter as between-graph programs use it."""

from __future__ import annotations

import pytest

import client

tf_real = pytest.importorskip("tensorflow")
tf1 = tf_real.compat.v1


def _build(tf, var_list_given: bool, setter: bool = True):
    g = tf.Graph()
    device = tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:1")
    with g.as_default(), tf.device(device if setter else None):
        a = tf.get_variable("a", [2], initializer=tf.zeros_initializer())
        b = tf.Variable(1.0, name="b")
        tf.Variable(2, name="c", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        report = tf.report_uninitialized_variables([a, b] if var_list_given else None)
    ops = [
        (o.name, o.type, [i.name for i in o.inputs], o.device)
        for o in g.get_operations()
        if o.name.startswith("report_uninitialized_variables")
    ]
    return g, a, report, ops


@pytest.mark.parametrize("var_list_given", [False, True])
def test_graph_matches_tensorflow(var_list_given: bool) -> None:
    assert _build(client, var_list_given)[3] == _build(tf1, var_list_given)[3]


def test_reports_what_tensorflow_reports() -> None:
    def reported(tf):
        g, a, report, _ = _build(tf, False, setter=False)  # the jobs exist on a cluster only
        with g.as_default(), tf.Session(graph=g) as sess:
            before = sess.run(report)
            sess.run(a.initializer)
            return before.tolist(), sess.run(report).tolist()

    assert reported(client) == reported(tf1) == ([b"a", b"b", b"c"], [b"b", b"c"])


def test_nothing_to_report_is_an_empty_string_vector() -> None:
    for tf in (client, tf1):
        with tf.Graph().as_default():
            report = tf.report_uninitialized_variables()
            assert report.op.type == "Const" and report.dtype == tf.string
            with tf.Session() as sess:
                assert sess.run(report).tolist() == []
