"""Gaps TensorFlow's own graph-mode kernel and session tests exposed, checked with an
unmodified tf.compat.v1 client against our master on a real cluster (CLIs on loopback),
against TensorFlow's in-process session as the oracle: CloseSession cancels a blocked
step with CancelledError; CountUpTo/ResourceCountUpTo; ref variables through
tf.tuple and with_dependencies (RefIdentity); the Igamma family; queue edge cases
(dequeue_many(0), a queue without shapes, conflicting shared queues)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from deploy.launcher import child_env

tf = pytest.importorskip("tensorflow")
tf1 = tf.compat.v1
HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def tf_runtime() -> Iterator[str]:
    """TensorFlow's own runtime (ps:0, worker:0, worker:1): worker 0's target."""
    server = subprocess.Popen(
        [sys.executable, str(HERE / "tf_runtime_cluster.py")], env=child_env(),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        yield server.stdout.readline().strip()
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=60)


def _run(target: str, build, feed=None):
    g = tf.Graph()
    with g.as_default():
        fetch = build()
        init = tf1.global_variables_initializer()
    config = tf1.ConfigProto(operation_timeout_in_ms=20000)
    with tf1.Session(target, graph=g, config=config) as sess:
        sess.run(init)
        return sess.run(fetch, feed)


def _error(target: str, build) -> tuple[type, str]:
    with pytest.raises(tf.errors.OpError) as e:
        _run(target, build)
    # TF's message: "Graph execution error:", traceback lines, "Node: 'x'", the message.
    lines = e.value.message.splitlines()
    found = [lines[i + 1] for i, line in enumerate(lines[:-1]) if line.startswith("Node:")]
    return type(e.value), (found or lines)[0]


def test_close_session_cancels_a_blocked_step(shared_cluster):
    g = tf.Graph()
    with g.as_default():
        q = tf1.FIFOQueue(2, tf.float32, shapes=[[]])
        dequeue = q.dequeue()
    sess = tf1.Session(shared_cluster.target, graph=g)
    seen: list[BaseException] = []

    def blocked() -> None:
        try:
            sess.run(dequeue)
        except BaseException as e:  # noqa: BLE001  (the test inspects it)
            seen.append(e)

    thread = threading.Thread(target=blocked)
    thread.start()
    time.sleep(1.0)  # the step is parked on the empty queue
    sess.close()
    thread.join(30)
    assert not thread.is_alive()
    assert len(seen) == 1 and isinstance(seen[0], tf.errors.CancelledError), seen


def _uid(name: str) -> str:
    return f"{name}_{time.monotonic_ns()}"  # variables persist on the cluster's ps


def test_count_up_to_and_ref_identity_as_tensorflow(shared_cluster):
    def build():
        ref = tf1.Variable(0, use_resource=False, name=_uid("ref"))
        res = tf1.Variable(5, use_resource=True, name=_uid("res"))
        gated = tf1.Variable(7, use_resource=False, name=_uid("gated"))
        # tf.tuple over a ref tensor gates it with RefIdentity.
        after = tf1.tuple([gated._ref(), tf.constant([2.0])])
        assert after[0].op.type == "RefIdentity"
        return [[tf1.count_up_to(ref, 3), tf1.count_up_to(res, 9)], after]

    assert str(_run(shared_cluster.target, build)) == str(_run("", build))

    def over_limit():
        ref = tf1.Variable(3, use_resource=False, name=_uid("ref"))
        return tf1.count_up_to(ref, 3)

    assert _error(shared_cluster.target, over_limit) == _error("", over_limit)


def test_igamma_family_as_tensorflow(shared_cluster):
    a = np.array([0.5, 2.0, 5.0, 30.0], np.float32)
    x = np.array([0.3, 1.0, 8.0, 28.0], np.float32)

    def build():
        return [
            tf.math.igamma(a, x),
            tf.math.igammac(a, x),
            tf.raw_ops.IgammaGradA(a=a, x=x),
            tf.raw_ops.RandomGammaGrad(alpha=a, sample=x),
        ]

    for ours, theirs in zip(_run(shared_cluster.target, build), _run("", build)):
        np.testing.assert_allclose(ours, theirs, rtol=2e-5)


def test_queue_edge_cases_as_tensorflow(shared_cluster):
    def dequeue_none():
        q = tf1.FIFOQueue(10, tf.float32, shapes=[[]])
        with tf.control_dependencies([q.enqueue_many([[1.0, 2.0]])]):
            return [q.dequeue_many(0), q.size()]

    ours, theirs = _run(shared_cluster.target, dequeue_none), _run("", dequeue_none)
    assert ours[0].shape == theirs[0].shape == (0,) and ours[1] == theirs[1] == 2

    def unshaped():
        q = tf1.FIFOQueue(10, tf.float32)
        with tf.control_dependencies([q.enqueue(1.0)]):
            return q.dequeue_many(1)

    assert _error(shared_cluster.target, unshaped) == _error("", unshaped)

    def conflicting():
        name = _uid("sq")
        q1 = tf1.FIFOQueue(10, tf.float32, shared_name=name, shapes=[[]])
        q2 = tf1.FIFOQueue(15, tf.float32, shared_name=name, shapes=[[]])
        with tf.control_dependencies([q1.size()]):
            return q2.size()

    ours, theirs = _error(shared_cluster.target, conflicting), _error("", conflicting)
    assert ours[0] is theirs[0] is tf.errors.InvalidArgumentError
    assert "has capacity 10 but requested capacity was 15" in ours[1]


def test_a_device_that_does_not_exist_names_the_node_as_tensorflow(shared_cluster):
    def build():
        with tf.device("/job:worker/task:7"):
            return tf.constant(1.0) + 1  # folded to a constant before placement here

    ours, theirs = _error(shared_cluster.target, build), _error("", build)
    assert ours[0] is theirs[0] is tf.errors.InvalidArgumentError
    prefix = (
        "Cannot assign a device for operation add: {{node add}} was explicitly assigned "
        "to /job:worker/task:7 but available devices are"
    )
    assert ours[1].startswith(prefix) and theirs[1].startswith(prefix), (ours, theirs)


def test_cond_v2_runs_only_the_fetched_branch_outputs_as_tensorflow(shared_cluster):
    """TensorFlow lowers a functional If before it prunes for the fetches: an output
    nothing fetched does not run, even when it would fail or has a side effect."""
    from tensorflow.python.ops import cond_v2

    def build(which: int):
        def fetch():
            v = tf1.Variable(0.0, name=_uid("v"))
            x = tf.constant([1.0, 2.0])

            def then():
                bad = tf.debugging.check_numerics(x / 0.0, "boom")
                return x * 2.0, bad, v.assign_add(1.0)

            def orelse():
                return x * 3.0, x, v.read_value()

            outs = cond_v2.cond_v2(tf.constant(True), then, orelse)
            with tf.control_dependencies([outs[which]]):
                return [outs[which], v.read_value()]

        return fetch

    for which in (0, 2):  # a plain output; the side effect alone
        assert str(_run(shared_cluster.target, build(which))) == str(_run("", build(which)))
    assert _error(shared_cluster.target, build(1)) == _error("", build(1))


def test_gradients_of_a_defun_on_the_cluster_as_tensorflow(shared_cluster):
    """TF1 tf.gradients through a Defun without a Python gradient emits SymbolicGradient;
    our runtime builds the gradient body and gets TensorFlow's values."""
    from tensorflow.python.framework import function

    def build():
        @function.Defun(tf.float32, tf.float32)
        def f(x, y):
            return tf.matmul(x, y) * tf.tanh(x), tf.reduce_mean(tf.square(y - x), axis=0)

        a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        b = tf.constant([[0.5, -1.0], [2.0, 0.25]])
        return tf1.gradients(f(a, b), [a, b])

    theirs = _run("", build)
    ours = _run(shared_cluster.target, build)
    for t, o in zip(theirs, ours, strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-6, atol=1e-6)


def _v1_loop(layout: str):
    """A TF1 while loop (while_v2 off) entered on worker 1 with its body on worker 0."""

    def build():
        with tf.device("/job:worker/task:1"):

            def body(i):
                with tf.device("/job:worker/task:0"):
                    return tf.constant(7) if layout == "constant" else i + 1

            limit = {"never": 0, "constant": 5}.get(layout, 10)
            cond = lambda i: i < limit  # noqa: E731
            return tf1.while_loop(cond, body, [tf.constant(0)])

    return build


@pytest.mark.parametrize(("layout", "want"), [("carried", 10), ("constant", 7), ("never", 0)])
def test_v1_loop_entered_on_another_task_than_its_body_returns(shared_cluster, layout, want):
    """The "Enter on another task hangs" report: TensorFlow's layouts (control flow v1,
    Enter on task 1, body on task 0; a body carrying only a constant; a loop that never
    runs) return at once, with TensorFlow's values, within the step's timeout."""
    from tensorflow.python.ops import control_flow_v2_toggles

    control_flow_v2_toggles.disable_control_flow_v2()
    try:
        assert _run(shared_cluster.target, _v1_loop(layout)) == want
    finally:
        control_flow_v2_toggles.enable_control_flow_v2()


def _tensor_array_in_loop(colocate: bool):
    """TensorFlow's tensor_array_ops_test ...GetsDeviceFromFirstWriteInWhileLoop and
    ...DisabledColocateWithFirstWriteCall: a TensorArray written in a v1 while loop whose
    body is on task 1; the handle's Enter sits on task 1, the loop on the default task."""

    def build():
        from tensorflow.python.ops import tensor_array_ops

        with tf.device("/job:worker/task:0/cpu:0"):
            ta = tensor_array_ops.TensorArray(
                tf.float32, size=2, colocate_with_first_write_call=colocate
            )

        def body(i, ta_i):
            with tf.device("/job:worker/task:1/cpu:0"):
                return i + 1, ta_i.write(i, tf.cast(i, tf.float32) + 0.5)

        _, out = tf1.while_loop(lambda i, ta: i < 2, body, loop_vars=[0, ta])
        return out.stack()

    return build


def _run_traced(target: str, build) -> tuple[np.ndarray, str]:
    """The fetched value and the task the TensorArray op ran on."""
    g = tf.Graph()
    with g.as_default():
        fetch = build()
    config = tf1.ConfigProto(operation_timeout_in_ms=20000)
    options = tf1.RunOptions(output_partition_graphs=True)
    metadata = tf1.RunMetadata()
    with tf1.Session(target, graph=g, config=config) as sess:
        value = sess.run(fetch, options=options, run_metadata=metadata)
    devices = [
        n.device for gd in metadata.partition_graphs for n in gd.node if n.name == "TensorArray"
    ]
    assert len(devices) == 1, devices
    return value, devices[0].split("/device:")[0]


@pytest.mark.parametrize("colocate", [True, False])
def test_tensor_array_written_in_a_loop_on_another_task_as_tensorflow(
    shared_cluster, tf_runtime, colocate
):
    """TensorFlow colocates a resource with the Enter (Identity, Switch, Merge, Exit,
    NextIteration) carrying its handle, so the TensorArray lives where it is written.
    Ours exempted those ops from resource colocation: the TensorArray went to task 0, its
    writes to task 1, and the step failed with NotFound for the per-step resource."""
    from tensorflow.python.ops import control_flow_v2_toggles

    control_flow_v2_toggles.disable_control_flow_v2()
    try:
        build = _tensor_array_in_loop(colocate)
        ours, theirs = _run_traced(shared_cluster.target, build), _run_traced(tf_runtime, build)
    finally:
        control_flow_v2_toggles.enable_control_flow_v2()
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[0], [0.5, 1.5])
    task = "/job:worker/replica:0/task:1" if colocate else "/job:worker/replica:0/task:0"
    assert ours[1] == theirs[1] == task


def _invariant_read_on_another_task():
    """A v1 loop on task 0 whose body adds, under task 1's device scope, a tensor from
    outside the loop to a resource variable on task 0: the update follows its variable
    to task 0, the loop-invariant Enter of the tensor stays on task 1, alone in its frame
    there."""
    w0, w1 = "/job:worker/task:0", "/job:worker/task:1"
    with tf.device(w0):
        v = tf1.Variable(0.0, use_resource=True, name=_uid("v"))
        step = tf1.Variable(2.0, use_resource=True, name=_uid("step")).read_value()

        def body(i):
            with tf.device(w1):
                update = v.assign_add(step)
            with tf.control_dependencies([update]):
                return i + 1

        done = tf1.while_loop(lambda i: i < 3, body, [tf.constant(0)])
        with tf.control_dependencies([done]):
            return [done, v.read_value()]


def test_v1_loop_invariant_entered_on_a_task_without_its_frame_returns(shared_cluster, tf_runtime):
    """TF's partition moves a loop-invariant Enter next to its first consumer
    (OptimizeControlFlowColocation) before adding control loops. Ours left it on task 1,
    the frame's only node there: it ran in iteration 0 only, and task 0's _Recv of
    iteration 1 waited until the step timed out."""
    from tensorflow.python.ops import control_flow_v2_toggles

    control_flow_v2_toggles.disable_control_flow_v2()
    try:
        t0 = time.monotonic()
        ours = _run(shared_cluster.target, _invariant_read_on_another_task)
        took = time.monotonic() - t0
        theirs = _run(tf_runtime, _invariant_read_on_another_task)
    finally:
        control_flow_v2_toggles.enable_control_flow_v2()
    assert ours == theirs == [3, 6.0]
    assert took < 15, took  # not the step's 20 s timeout
