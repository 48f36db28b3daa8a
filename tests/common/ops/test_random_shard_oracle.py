"""Random kernels whose work TensorFlow shards over its intra-op pool, against TensorFlow
2.21 for pool sizes 1, 2 and 3 (ConfigProto.intra_op_parallelism_threads): sizes large
enough for several shards. Multinomial's numbers depend on the cut (each shard restarts
its stream at a skip from its first row); the fill kernels, gamma and Poisson skip per
group or per output, so theirs must not. TensorFlow makes its CPU pool once per process,
so each pool size runs in a TensorFlow process of its own, which also writes the graph we
run. Skipped without TensorFlow."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from common.ops.random import shard
from common.session import Session
from deploy.launcher import LocalCluster
from protos import config_pb2, graph_pb2

pytest.importorskip("tensorflow")

# Builds the graph, runs each fetch twice (stateful kernels advance), saves graph + values.
_TF_PROGRAM = r"""
import sys
import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1
threads, out = int(sys.argv[1]), sys.argv[2]
r = np.random.RandomState(0)
g = tf.Graph()
with g.as_default():
    raw = tf1.raw_ops
    big = r.randn(1000, 100).astype(np.float32)
    wide = r.randn(40, 3000).astype(np.float64)
    raw.Multinomial(logits=big, num_samples=10, seed=3, seed2=1, name="mn_rows")
    raw.Multinomial(logits=wide, num_samples=4, seed=5, seed2=0, name="mn_wide",
                    output_dtype=tf.int32)
    raw.Multinomial(logits=r.randn(777, 50).astype(np.float32), num_samples=13, seed=9,
                    seed2=2, name="mn_odd")
    raw.StatelessMultinomial(logits=big, num_samples=10, seed=[7, 8], name="smn")
    shape = np.array([300, 1000], np.int32)
    raw.RandomUniform(shape=shape, dtype=tf.float32, seed=1, seed2=2, name="uniform")
    raw.RandomStandardNormal(shape=shape, dtype=tf.float64, seed=1, seed2=2, name="normal")
    raw.TruncatedNormal(shape=shape, dtype=tf.float32, seed=1, seed2=2, name="truncated")
    raw.RandomUniformInt(shape=shape, minval=np.int64(-5), maxval=np.int64(1 << 40), seed=1,
                         seed2=2, name="uniform_int")
    alpha = np.linspace(0.3, 9.0, 40).astype(np.float32)
    raw.RandomGamma(shape=np.array([2000], np.int32), alpha=alpha, seed=4, seed2=4,
                    name="gamma")
    raw.RandomPoissonV2(shape=np.array([2000], np.int32), rate=alpha.astype(np.float64),
                        seed=4, seed2=4, dtype=tf.int64, name="poisson")
    key, counter = raw.StatelessRandomGetKeyCounter(seed=[3, 4])
    raw.StatelessRandomNormalV2(shape=shape, key=key, counter=counter, alg=1,
                                dtype=tf.float32, name="stateless_normal")
    raw.StatelessTruncatedNormalV2(shape=shape, key=key, counter=counter, alg=1,
                                   dtype=tf.float64, name="stateless_truncated")
    raw.StatelessRandomGammaV2(shape=np.array([2000, 40], np.int32), seed=[1, 2],
                               alpha=alpha, name="stateless_gamma")
names = sys.argv[3].split(",")
config = tf1.ConfigProto(intra_op_parallelism_threads=threads)
with tf1.Session(graph=g, config=config) as sess:
    fetches = [n + ":0" for n in names]
    runs = [sess.run(fetches) for _ in range(2)]
values = {f"{n}/{i}": v for i, run in enumerate(runs) for n, v in zip(names, run)}
np.savez(out, graph=np.frombuffer(g.as_graph_def().SerializeToString(), np.uint8), **values)
"""

NAMES = [
    "mn_rows",
    "mn_wide",
    "mn_odd",
    "smn",
    "uniform",
    "normal",
    "truncated",
    "uniform_int",
    "gamma",
    "poisson",
    "stateless_normal",
    "stateless_truncated",
    "stateless_gamma",
]


def tensorflow_side(threads: int, tmp_path) -> tuple[graph_pb2.GraphDef, dict]:
    out = tmp_path / f"tf{threads}.npz"
    subprocess.run(
        [sys.executable, "-c", _TF_PROGRAM, str(threads), str(out), ",".join(NAMES)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    saved = np.load(out)
    graph = graph_pb2.GraphDef.FromString(saved["graph"].tobytes())
    return graph, {k: saved[k] for k in saved.files if k != "graph"}


def assert_same(ours: dict, theirs: dict) -> None:
    for key, want in theirs.items():
        got = ours[key]
        assert got.dtype == want.dtype and got.shape == want.shape, key
        np.testing.assert_array_equal(
            got.view(f"u{got.dtype.itemsize}"), want.view(f"u{want.dtype.itemsize}"), err_msg=key
        )


def test_the_cut_is_taken_from_the_pool_size():
    # Eigen's rule: one piece under ~2 threads' worth of cost, else at most 4 blocks a
    # thread, no smaller than 40000 cycles each, grown while no thread idles longer.
    cost = int(50 * (10 * np.log(100) / np.log(2) + 100))
    assert shard.shards(1000, cost, 1) == [(0, 1000)]
    assert shard.shards(1000, cost, 2) == [(s, s + 125) for s in range(0, 1000, 125)]
    assert shard.shards(3, 1000, 2) == [(0, 3)]
    assert shard.shards(0, 1000, 2) == []


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_sharded_random_kernels_match_tensorflow(threads, tmp_path):
    graph, theirs = tensorflow_side(threads, tmp_path)
    config = config_pb2.ConfigProto(intra_op_parallelism_threads=threads)
    with Session(graph, config=config) as sess:
        runs = [sess.run([n + ":0" for n in NAMES]) for _ in range(2)]
    ours = {f"{n}/{i}": np.asarray(v) for i, run in enumerate(runs) for n, v in zip(NAMES, run)}
    assert_same(ours, theirs)


# TensorFlow's runtime: one worker task whose server config sets the pool size, run by a
# client session asking for another; saves the values of two runs of each fetch.
_TF_SERVER_PROGRAM = r"""
import socket
import sys
import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1
server_threads, client_threads = int(sys.argv[1]), int(sys.argv[2])
graph_path, out, names = sys.argv[3], sys.argv[4], sys.argv[5].split(",")
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
server = tf.distribute.Server(
    tf.train.ClusterSpec({"worker": [f"localhost:{port}"]}), job_name="worker", task_index=0,
    config=tf1.ConfigProto(intra_op_parallelism_threads=server_threads))
g = tf.Graph()
with g.as_default():
    with open(graph_path, "rb") as f:
        tf1.import_graph_def(tf1.GraphDef.FromString(f.read()), name="")
config = tf1.ConfigProto(intra_op_parallelism_threads=client_threads)
with tf1.Session(server.target, graph=g, config=config) as sess:
    runs = [sess.run([n + ":0" for n in names]) for _ in range(2)]
np.savez(out, **{f"{n}/{i}": v for i, run in enumerate(runs) for n, v in zip(names, run)})
"""


def tensorflow_server_side(
    server_threads: int, client_threads: int, graph: graph_pb2.GraphDef, names, tmp_path
) -> dict:
    graph_path, out = tmp_path / "graph.pb", tmp_path / f"server{server_threads}.npz"
    graph_path.write_bytes(graph.SerializeToString())
    subprocess.run(
        [sys.executable, "-c", _TF_SERVER_PROGRAM, str(server_threads), str(client_threads),
         str(graph_path), str(out), ",".join(names)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    saved = np.load(out)
    return {k: saved[k] for k in saved.files}


def _run_with_one_thread(target: str, graph: graph_pb2.GraphDef, names) -> dict:
    """TensorFlow's client on `target`, its session asking for an intra-op pool of 1."""
    import tensorflow as tf

    tf1 = tf.compat.v1
    g = tf.Graph()
    with g.as_default():
        tf1.import_graph_def(tf1.GraphDef.FromString(graph.SerializeToString()), name="")
    config = tf1.ConfigProto(intra_op_parallelism_threads=1)
    with tf1.Session(target, graph=g, config=config) as sess:
        runs = [sess.run([n + ":0" for n in names]) for _ in range(2)]
    return {f"{n}/{i}": np.asarray(v) for i, run in enumerate(runs) for n, v in zip(names, run)}


def test_a_worker_shards_for_its_own_server_config_as_tensorflow(tmp_path):
    """TensorFlow's worker shards over the pool its server was started with
    (ServerDef.default_session_config), not the client session's ConfigProto: a server
    of 3 threads run by a client asking for 1 gives the 3-thread numbers. Ours followed
    the client's setting (sent in CreateWorkerSession) and gave the 1-thread numbers.
    (Stateless kernels on constants are folded by the master before any worker runs.)"""
    from tests.in_process import in_process_cluster

    names = ["mn_rows", "mn_odd"]
    graph, three = tensorflow_side(3, tmp_path)
    theirs = tensorflow_server_side(3, 1, graph, names, tmp_path)
    assert_same(theirs, {k: v for k, v in three.items() if k.split("/")[0] in names})
    with in_process_cluster({"worker": 1}, intra_op_threads=3) as master:
        assert_same(_run_with_one_thread(master.target, graph, names), theirs)
    # The same through the worker's command line (--intra-op-threads).
    cluster = LocalCluster({"worker": 1}, worker_args=["--intra-op-threads", "3"]).start()
    try:
        assert_same(_run_with_one_thread(cluster.target, graph, names), theirs)
    finally:
        cluster.stop()
    one = Session(graph, config=config_pb2.ConfigProto(intra_op_parallelism_threads=1))
    assert not np.array_equal(one.run(["mn_rows:0"])[0], theirs["mn_rows/0"])  # the cut shows
