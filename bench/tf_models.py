"""Benchmark, models and many clients: training graphs built with TensorFlow's compat.v1
API and driven by TensorFlow's own client, against a master at `--target` (ours or
TensorFlow's; both clusters have jobs "worker" and "ps").

  * cnn_step_ms: two 5x5 conv layers (32 and 64 filters) with ReLU and 2x2 max pooling, a
    1024-unit dense layer, softmax cross entropy, Adam; a batch of 64 28x28x1 images fed;
  * lstm_step_ms: a 2-layer LSTM (128 units, 32 steps, batch 32) built with dynamic_rnn
    (a v1 while loop: Enter/Exit/NextIteration, TensorArrays), mean-square loss, Adam;
  * lstm_step_ms_optimized: the same LSTM with graph optimizations on for both runtimes
    (their defaults plus RewriterConfig.remapping ON: our elementwise fusion, TensorFlow's
    Grappler with its remapper), as chain1000_step_ms_optimized of bench.suite;
  * throughput_steps_per_s_{N}_clients: N client threads, one session each, running the
    small cross-worker step (bench.workloads.trivial) for a fixed time; steps per second;
    throughput_steps_per_s_32_clients_4_processes: the same 32 sessions from 4 client
    processes of 8 threads (the client's own GIL out of the way);
  * plan_ms_100k_control_inputs: one NoOp with 100,000 control inputs from NoOps on two
    worker tasks (bench.workloads.control_inputs); the first run (the client extends the
    session, the master plans and registers, the step runs) less a later step.

Variables are placed on /job:ps/task:0 and compute on /job:worker/task:0
(tf.compat.v1.train.replica_device_setter). Every step's loss is checked to be finite.
Prints one JSON object. Runs in a subprocess (`python -m bench.tf_models --target ...`):
TensorFlow is imported only there.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

THROUGHPUT_CLIENTS = (1, 8, 32)
# 32 clients as client processes, 8 sessions each: TensorFlow's client in one process
# serialises part of each call on the GIL; separate processes do not.
THROUGHPUT_PROCESSES = 4
THROUGHPUT_PROCESS_KEY = "throughput_steps_per_s_32_clients_4_processes"
MODELS = ("cnn_step_ms", "lstm_step_ms", "lstm_step_ms_optimized")
PLAN = "plan_ms_100k_control_inputs"


def _device_setter(tf: Any) -> Any:
    return tf.compat.v1.train.replica_device_setter(
        ps_tasks=1, ps_device="/job:ps/task:0", worker_device="/job:worker/task:0"
    )


def build_cnn(tf: Any, batch: int = 64) -> tuple[Any, dict, Any, Any]:
    """(graph, feeds by placeholder, loss, train op)."""
    v1 = tf.compat.v1
    g = tf.Graph()
    rng = np.random.default_rng(0)
    with g.as_default(), v1.device(_device_setter(tf)):
        v1.set_random_seed(1)
        x = v1.placeholder(tf.float32, [batch, 28, 28, 1], name="images")
        y = v1.placeholder(tf.int64, [batch], name="labels")

        def conv(h: Any, k: int, cin: int, cout: int, name: str) -> Any:
            w = v1.get_variable(
                f"{name}/w",
                [k, k, cin, cout],
                initializer=v1.truncated_normal_initializer(stddev=0.1),
            )
            b = v1.get_variable(f"{name}/b", [cout], initializer=v1.constant_initializer(0.1))
            h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, w, [1, 1, 1, 1], "SAME"), b))
            return tf.nn.max_pool2d(h, 2, 2, "SAME")

        h = conv(conv(x, 5, 1, 32, "conv1"), 5, 32, 64, "conv2")
        h = tf.reshape(h, [batch, 7 * 7 * 64])
        w3 = v1.get_variable(
            "fc1/w", [7 * 7 * 64, 1024], initializer=v1.truncated_normal_initializer(stddev=0.01)
        )
        b3 = v1.get_variable("fc1/b", [1024], initializer=v1.constant_initializer(0.1))
        h = tf.nn.relu(tf.matmul(h, w3) + b3)
        w4 = v1.get_variable(
            "fc2/w", [1024, 10], initializer=v1.truncated_normal_initializer(stddev=0.1)
        )
        b4 = v1.get_variable("fc2/b", [10], initializer=v1.constant_initializer(0.1))
        logits = tf.matmul(h, w4) + b4
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        )
        train = v1.train.AdamOptimizer(1e-4).minimize(loss)
    feeds = {
        x: rng.random((batch, 28, 28, 1), np.float32),
        y: rng.integers(0, 10, batch).astype(np.int64),
    }
    return g, feeds, loss, train


class _LSTMCell:
    """The LSTM cell of TF's LSTMCell (gates i, j, f, o; forget bias 1), written with core
    ops so it needs no Keras; dynamic_rnn accepts any object with these members."""

    def __init__(self, tf: Any, units: int, name: str) -> None:
        self.tf, self.units, self.name = tf, units, name

    @property
    def state_size(self) -> tuple[int, int]:
        return (self.units, self.units)

    @property
    def output_size(self) -> int:
        return self.units

    def zero_state(self, batch: int, dtype: Any) -> tuple[Any, Any]:
        z = self.tf.zeros([batch, self.units], dtype)
        return (z, z)

    def get_initial_state(
        self, inputs: Any = None, batch_size: Any = None, dtype: Any = None
    ) -> tuple[Any, Any]:
        return self.zero_state(batch_size, dtype)

    def __call__(self, x: Any, state: tuple[Any, Any], scope: Any = None) -> tuple[Any, Any]:
        tf, v1 = self.tf, self.tf.compat.v1
        c, h = state
        with v1.variable_scope(self.name, reuse=v1.AUTO_REUSE):
            w = v1.get_variable(
                "kernel",
                [x.shape[-1] + self.units, 4 * self.units],
                initializer=v1.glorot_uniform_initializer(seed=2),
            )
            b = v1.get_variable("bias", [4 * self.units], initializer=v1.zeros_initializer())
        z = tf.nn.bias_add(tf.matmul(tf.concat([x, h], 1), w), b)
        i, j, f, o = tf.split(z, 4, axis=1)
        c = tf.sigmoid(f + 1.0) * c + tf.sigmoid(i) * tf.tanh(j)
        h = tf.sigmoid(o) * tf.tanh(c)
        return h, (c, h)


def build_lstm(
    tf: Any, batch: int = 32, steps: int = 32, units: int = 128, layers: int = 2
) -> tuple[Any, dict, Any, Any]:
    v1 = tf.compat.v1
    v1.disable_control_flow_v2()  # dynamic_rnn as a v1 while loop (frames), as TF 1.x
    g = tf.Graph()
    rng = np.random.default_rng(0)
    with g.as_default(), v1.device(_device_setter(tf)):
        x = v1.placeholder(tf.float32, [batch, steps, units], name="inputs")
        h = x
        for layer in range(layers):
            h, _ = v1.nn.dynamic_rnn(
                _LSTMCell(tf, units, f"lstm{layer}"), h, dtype=tf.float32, scope=f"rnn{layer}"
            )
        loss = tf.reduce_mean(tf.square(h))
        train = v1.train.AdamOptimizer(1e-3).minimize(loss)
    return g, {x: rng.random((batch, steps, units), np.float32)}, loss, train


def time_model(tf: Any, target: str, build: Any, steps: int, config: Any) -> float:
    """Median ms of `steps` training steps (after init and 3 warm-up steps)."""
    g, feeds, loss, train = build(tf)
    with g.as_default():
        init = tf.compat.v1.global_variables_initializer()
    with tf.compat.v1.Session(target, graph=g, config=config) as sess:
        sess.run(init)
        times = []
        for k in range(steps + 3):
            t0 = time.perf_counter()
            value, _ = sess.run([loss, train], feed_dict=feeds)
            if k >= 3:
                times.append(time.perf_counter() - t0)
            if not np.isfinite(value):
                raise AssertionError(f"{build.__name__}: loss {value}")
    return statistics.median(times) * 1e3


def _open_sessions(tf: Any, target: str, clients: int, config: Any) -> tuple[Any, list]:
    """The trivial workload and `clients` sessions on it, each checked once."""
    from bench import workloads

    w = workloads.trivial()
    graph_def = tf.compat.v1.GraphDef.FromString(w.graph_def.SerializeToString())
    sessions = []
    for _ in range(clients):
        g = tf.Graph()
        with g.as_default():
            tf.compat.v1.import_graph_def(graph_def, name="")
        sess = tf.compat.v1.Session(target, graph=g, config=config)
        sess.run(w.init_targets)
        w.check(sess.run(w.fetch))
        sessions.append(sess)
    return w, sessions


def _drive(w: Any, sessions: list, seconds: float, ready: Any = None) -> tuple[int, float]:
    """(steps done, seconds elapsed): one thread per session for `seconds`. `ready`, when
    given, is called once every thread is waiting; it returns when they should start."""
    clients = len(sessions)
    counts = [0] * clients
    start = threading.Barrier(clients + 1)
    stop = threading.Event()
    errors: list[BaseException] = []

    def loop(k: int) -> None:
        try:
            start.wait()
            while not stop.is_set():
                w.check(sessions[k].run(w.fetch))
                counts[k] += 1
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=loop, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    if ready is not None:
        ready()
    start.wait()
    t0 = time.perf_counter()
    time.sleep(seconds)
    done = sum(counts)
    elapsed = time.perf_counter() - t0
    stop.set()
    for t in threads:
        t.join()
    for sess in sessions:
        sess.close()
    if errors:
        raise errors[0]
    return done, elapsed


def throughput(tf: Any, target: str, clients: int, seconds: float, config: Any) -> float:
    """Steps per second of `clients` threads, one session each, for `seconds`."""
    w, sessions = _open_sessions(tf, target, clients, config)
    done, elapsed = _drive(w, sessions, seconds)
    return done / elapsed


def throughput_processes(target: str, processes: int, clients: int, seconds: float) -> float:
    """Steps per second of `processes` client processes with `clients` threads each (one
    session per thread), started together: each child opens its sessions, says "ready",
    waits for "go" on stdin, runs for `seconds` and prints its steps."""
    cmd = [sys.executable, "-m", "bench.tf_models", "--target", target]
    cmd += ["--drive", str(clients), "--seconds", str(seconds)]
    children = [
        subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for _ in range(processes)
    ]
    try:
        for child in children:
            assert child.stdout is not None
            line = child.stdout.readline().strip()
            if line != "ready":
                raise RuntimeError(f"bench.tf_models --drive: expected 'ready', got {line!r}")
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        rates = []
        for child in children:
            out, _ = child.communicate(timeout=seconds + 120)
            if child.returncode != 0:
                raise RuntimeError(f"bench.tf_models --drive exited {child.returncode}")
            done, elapsed = json.loads(out.strip().splitlines()[-1])
            rates.append(done / elapsed)
        return sum(rates)
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()


def _drive_main(target: str, clients: int, seconds: float) -> None:
    """The child side of throughput_processes."""
    import tensorflow as tf

    from bench.workloads import config_proto

    config = tf.compat.v1.ConfigProto.FromString(config_proto().SerializeToString())
    w, sessions = _open_sessions(tf, target, clients, config)

    def ready() -> None:
        print("ready", flush=True)
        if sys.stdin.readline().strip() != "go":
            raise SystemExit("bench.tf_models --drive: no 'go' on stdin")

    done, elapsed = _drive(w, sessions, seconds, ready)
    print(json.dumps([done, elapsed]), flush=True)


def plan_ms(tf: Any, target: str, num_inputs: int, config: Any) -> float:
    from bench import workloads

    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.import_graph_def(
            tf.compat.v1.GraphDef.FromString(
                workloads.control_inputs(num_inputs).SerializeToString()
            ),
            name="",
        )
    with tf.compat.v1.Session(target, graph=g, config=config) as sess:
        t0 = time.perf_counter()
        sess.run("target")
        first = time.perf_counter() - t0
        later = []
        for _ in range(3):
            t0 = time.perf_counter()
            sess.run("target")
            later.append(time.perf_counter() - t0)
    return (first - statistics.median(later)) * 1e3


def wanted(only: Sequence[str] | None, key: str) -> bool:
    return not only or any(key.startswith(k) for k in only)


def keys(only: Sequence[str] | None) -> list[str]:
    """The figures of this module that `only` selects."""
    all_keys = [
        *MODELS,
        PLAN,
        *(f"throughput_steps_per_s_{n}_clients" for n in THROUGHPUT_CLIENTS),
        THROUGHPUT_PROCESS_KEY,
    ]
    return [k for k in all_keys if wanted(only, k)]


def run(target: str, only: Sequence[str] | None, quick: bool, repeat: int) -> dict[str, float]:
    import tensorflow as tf

    from bench.workloads import config_proto, optimized_config_proto

    config = tf.compat.v1.ConfigProto.FromString(config_proto().SerializeToString())
    out: dict[str, float] = {}
    steps = (5 if quick else 20) * repeat
    if wanted(only, "cnn_step_ms"):
        out["cnn_step_ms"] = time_model(tf, target, build_cnn, steps, config)
    if wanted(only, "lstm_step_ms"):
        out["lstm_step_ms"] = time_model(tf, target, build_lstm, steps, config)
    if wanted(only, "lstm_step_ms_optimized"):
        optimized = tf.compat.v1.ConfigProto.FromString(
            optimized_config_proto().SerializeToString()
        )
        out["lstm_step_ms_optimized"] = time_model(tf, target, build_lstm, steps, optimized)
    if wanted(only, PLAN):
        out[PLAN] = plan_ms(tf, target, 100_000, config)
    for n in THROUGHPUT_CLIENTS:
        key = f"throughput_steps_per_s_{n}_clients"
        if wanted(only, key):
            out[key] = throughput(tf, target, n, (1.0 if quick else 3.0) * repeat, config)
    if wanted(only, THROUGHPUT_PROCESS_KEY):
        per = 32 // THROUGHPUT_PROCESSES
        seconds = (1.0 if quick else 3.0) * repeat
        out[THROUGHPUT_PROCESS_KEY] = throughput_processes(
            target, THROUGHPUT_PROCESSES, per, seconds
        )
    return {k: round(v, 3) for k, v in out.items()}


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.tf_models")
    p.add_argument("--target", required=True)
    p.add_argument("--only", nargs="+", default=None)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--drive", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--seconds", type=float, default=3.0, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.drive:
        _drive_main(args.target, args.drive, args.seconds)
        return
    print(json.dumps(run(args.target, args.only, args.quick, args.repeat)))


if __name__ == "__main__":
    main()
