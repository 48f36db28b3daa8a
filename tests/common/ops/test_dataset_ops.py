"""Tests (ops stage): tf.data in graph mode — pipelines TensorFlow's tf.compat.v1 builds,
run by our in-process Session and by TensorFlow's own (the oracle): every element equal
(dtype, shape, values) and the same OutOfRange end; plus signatures against TensorFlow's,
Philox known answers, iterator semantics, errors, thread safety and placement."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from common import tensor as tensor_util
from common.errors import (
    Code,
    FailedPreconditionError,
    InvalidArgumentError,
    OpError,
    OutOfRangeError,
)
from common.graph.constructor import convert_graph_def_to_graph
from common.ops import data as dataset_ops
from common.ops.data.base import IteratorContext, dataset_of, dataset_value
from common.ops.data.shuffle import Philox, SeedGenerator
from common.ops.data.sources import RangeDataset
from common.ops.data.transforms import BatchDataset
from common.placer import place
from common.session import Session
from tests.common.ops.kernel_harness import op_def_mismatches, run
from tests.common.ops.signatures import assert_signature_matches_tensorflow, module_ops

tf = pytest.importorskip("tensorflow")
tf.compat.v1.disable_eager_execution()
TF_GRAPH_MODE = True  # tests/conftest.py keeps TensorFlow in graph mode for this module

MODULES = tuple(
    f"common.ops.data.{m}"
    for m in ("base", "functions", "iterators", "shuffle", "sources", "transforms")
)
OPS = sorted(module_ops(*MODULES))
I64 = np.int64


# -- signatures ----------------------------------------------------------------------------
def test_the_family_registers_the_ops_tensorflow_emits() -> None:
    emitted = {"TensorSliceDataset", "ShuffleDataset", "MapDataset", "BatchDatasetV2",
               "RepeatDataset", "PrefetchDataset", "OneShotIterator", "IteratorToStringHandle",
               "IteratorGetNext", "RangeDataset", "FilterDataset", "IteratorV2",
               "MakeIterator"}  # fmt: skip
    assert emitted <= set(OPS)
    assert len(OPS) == 50


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name: str) -> None:
    assert op_def_mismatches(name) == []
    assert_signature_matches_tensorflow(name)


# -- the oracle ------------------------------------------------------------------------------
def _drain_ours(session: Session, names: list[str], limit: int) -> tuple[list, OpError]:
    out = []
    for _ in range(limit):
        try:
            out.append(session.run(names))
        except OpError as e:
            return out, e
    raise AssertionError(f"no end after {limit} elements")


def _drain_theirs(session: Any, fetch: Any, limit: int) -> list:
    out = []
    for _ in range(limit):
        try:
            out.append(tf.nest.flatten(session.run(fetch)))
        except tf.errors.OutOfRangeError:
            return out
    raise AssertionError(f"no end after {limit} elements")


def _assert_same(ours: list, theirs: list) -> None:
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert len(a) == len(b), i
        for x, y in zip(a, b):
            y = np.asarray(y)
            if y.dtype.kind == "S":  # TensorFlow fetches a string scalar as np.bytes_
                y = np.asarray(y.item(), dtype=object)
            assert (x.dtype, x.shape) == (y.dtype, y.shape), (i, x, y)
            assert np.array_equal(x, y), (i, x, y)


def run_both(build: Callable[[], tuple[Any, Any]], feeds: dict | None = None,
             limit: int = 1000) -> list:  # fmt: skip
    """Build (next element, initializer or None) with tf.compat.v1 in a fresh graph; drain it
    with our Session and with TensorFlow's; assert equal elements and OutOfRange at the end.
    Returns our elements."""
    g = tf.Graph()
    with g.as_default():
        nxt, init = build()
    names = [t.name for t in tf.nest.flatten(nxt)]
    ours_session = Session(g.as_graph_def().SerializeToString())
    tf_feeds = {g.get_tensor_by_name(k): v for k, v in (feeds or {}).items()}
    if init is not None:
        ours_session.run([], feeds=feeds, targets=[init.name])
    ours, end = _drain_ours(ours_session, names, limit)
    assert isinstance(end, OutOfRangeError) and end.code == Code.OUT_OF_RANGE
    assert end.message == "End of sequence"
    assert end.node_name == nxt_op_name(nxt)
    with tf.compat.v1.Session(graph=g) as theirs_session:
        if init is not None:
            theirs_session.run(init, feed_dict=tf_feeds)
        theirs = _drain_theirs(theirs_session, nxt, limit)
    _assert_same(ours, theirs)
    return ours


def nxt_op_name(nxt: Any) -> str:
    return tf.nest.flatten(nxt)[0].op.name


def one_shot(ds: Any) -> tuple[Any, None]:
    return tf.compat.v1.data.make_one_shot_iterator(ds).get_next(), None


def initializable(ds: Any) -> tuple[Any, Any]:
    it = tf.compat.v1.data.make_initializable_iterator(ds)
    return it.get_next(), it.initializer


X = np.arange(24, dtype=np.float32).reshape(12, 2)
Y = np.arange(12, dtype=np.int64)
D = tf.data.Dataset

PIPELINES: dict[str, Callable[[], Any]] = {
    "brief_pipeline": lambda: (
        D.from_tensor_slices((X[:6], Y[:6]))
        .shuffle(10, seed=1)
        .map(lambda a, b: (a * 2.0, b))
        .batch(4)
        .repeat(2)
        .prefetch(1)
    ),
    "range_filter": lambda: D.range(10).filter(lambda v: tf.equal(v % 2, 0)),
    "range_args": lambda: D.range(20, 3, -3),
    "reshuffle_each_epoch": lambda: D.range(100).shuffle(7, seed=3).repeat(3),
    "shuffle_fixed_big_buffer": lambda: (
        D.range(20).shuffle(50, seed=5, reshuffle_each_iteration=False).repeat(2)
    ),
    "shuffle_op_seed_only": lambda: D.range(30).shuffle(4, seed=11).batch(5),
    "from_tensors": lambda: D.from_tensors((X, b"s")).repeat(3),
    "take_skip": lambda: D.range(10).skip(2).take(5),
    "take_all_skip_none": lambda: D.range(4).take(-1).skip(0),
    "skip_all": lambda: D.range(4).skip(-1),
    "take_more": lambda: D.range(3).take(10),
    "repeat_zero": lambda: D.range(3).repeat(0),
    "repeat_forever_empty": lambda: D.range(0).repeat(),
    "repeat_forever_take": lambda: D.range(3).repeat().take(8),
    "batch_remainder": lambda: D.range(10).batch(4),
    "batch_drop_remainder": lambda: D.range(10).batch(4, drop_remainder=True),
    "padded_batch": lambda: D.range(1, 6).map(lambda n: tf.fill([n], n)).padded_batch(2),
    "padded_batch_shape_value": lambda: (
        D.range(1, 5)
        .map(lambda n: tf.fill([n], n))
        .padded_batch(3, padded_shapes=[6], padding_values=tf.constant(-1, tf.int64))
    ),
    "zip": lambda: D.zip((D.range(5), D.range(10, 20).map(lambda v: tf.cast(v, tf.float32)))),
    "concatenate": lambda: D.range(3).concatenate(D.range(7, 9)),
    "nested": lambda: D.from_tensor_slices({"x": X, "yz": (Y, Y * 10)}).map(
        lambda d: {"a": d["x"] + 1.0, "b": (d["yz"][0], tf.strings.as_string(d["yz"][1]))}
    ),
    "strings": lambda: D.from_tensor_slices([b"a", b"bc", b"def"]).repeat(2).batch(4),
    "captured_tensor": lambda: _captured_map(),
    "flat_map": lambda: D.range(4).flat_map(lambda n: D.range(n).map(lambda v: v * 10 + n)),
    "interleave": lambda: D.range(1, 5).interleave(
        lambda n: D.from_tensors(n).repeat(n), cycle_length=2, block_length=2
    ),
    "parallel_map": lambda: D.range(20).map(lambda v: v * v, num_parallel_calls=3),
    "cache": lambda: D.range(5).map(lambda v: v + 1).cache().repeat(2),
    "cardinality": lambda: D.from_tensors(
        tf.data.experimental.cardinality(D.range(10).batch(3).repeat(2))
    ),
    "batch_of_batches": lambda: D.range(9).batch(3).batch(2, drop_remainder=True),
}


def _captured_map() -> Any:
    scale = tf.constant(np.float32(3.0))
    offset = tf.constant(np.arange(2, dtype=np.float32))
    return D.from_tensor_slices(X).map(lambda a: a * scale + offset)


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_one_shot_iterator_matches_tensorflow(name: str) -> None:
    run_both(lambda: one_shot(PIPELINES[name]()))


@pytest.mark.parametrize("name", ["range_filter", "brief_pipeline", "nested", "flat_map"])
def test_initializable_iterator_matches_tensorflow(name: str) -> None:
    run_both(lambda: initializable(PIPELINES[name]()))


def test_brief_pipeline_values() -> None:
    ours = run_both(lambda: one_shot(PIPELINES["brief_pipeline"]()))
    assert [len(e[1]) for e in ours] == [4, 2, 4, 2]
    assert sorted(np.concatenate([e[1] for e in ours[:2]]).tolist()) == list(range(6))


def test_shuffle_and_repeat_matches_tensorflow() -> None:
    shuffle_and_repeat = tf.data.experimental.shuffle_and_repeat
    run_both(lambda: one_shot(D.range(10).apply(shuffle_and_repeat(4, count=3, seed=7))))
    run_both(lambda: one_shot(D.range(3).apply(shuffle_and_repeat(20, count=6, seed=2))))
    run_both(lambda: one_shot(D.range(5).apply(shuffle_and_repeat(3, seed=2)).take(40)))


def test_captured_placeholder_reinitializes_with_a_new_feed() -> None:
    def build() -> Any:
        n = tf.compat.v1.placeholder(tf.int64, [], name="n")
        k = tf.compat.v1.placeholder(tf.int64, [], name="k")
        return initializable(D.range(n).map(lambda v: v * k))

    assert [e[0] for e in run_both(build, {"n:0": 4, "k:0": 3})] == [0, 3, 6, 9]
    assert [e[0] for e in run_both(build, {"n:0": 2, "k:0": -1})] == [0, -1]


# -- iterator semantics in our session --------------------------------------------------------
def _session_for(build: Callable[[], Any]) -> tuple[Session, dict[str, str]]:
    g = tf.Graph()
    with g.as_default():
        names = build()
    return Session(g.as_graph_def().SerializeToString()), names


def test_make_iterator_reinitializes_and_get_next_before_init_fails() -> None:
    def build() -> dict[str, str]:
        it = tf.compat.v1.data.make_initializable_iterator(D.range(5))
        return {"next": it.get_next().name, "init": it.initializer.name}

    s, n = _session_for(build)
    with pytest.raises(FailedPreconditionError, match="has not been initialized") as e:
        s.run([n["next"]])
    assert e.value.node_name == "IteratorGetNext"
    s.run([], targets=[n["init"]])
    assert [int(s.run([n["next"]])[0]) for _ in range(3)] == [0, 1, 2]
    s.run([], targets=[n["init"]])
    assert [int(s.run([n["next"]])[0]) for _ in range(5)] == [0, 1, 2, 3, 4]
    with pytest.raises(OutOfRangeError, match="End of sequence"):
        s.run([n["next"]])
    with pytest.raises(OutOfRangeError):  # stays at the end
        s.run([n["next"]])


def test_two_iterators_over_one_dataset_are_independent() -> None:
    def build() -> dict[str, str]:
        ds = D.range(6).map(lambda v: v * 2)
        a = tf.compat.v1.data.make_initializable_iterator(ds)
        b = tf.compat.v1.data.make_initializable_iterator(ds)
        init = tf.group(a.initializer, b.initializer)
        return {"a": a.get_next().name, "b": b.get_next().name, "init": init.name}

    s, n = _session_for(build)
    s.run([], targets=[n["init"]])
    assert [int(s.run([n["a"]])[0]) for _ in range(4)] == [0, 2, 4, 6]
    assert [int(s.run([n["b"]])[0]) for _ in range(2)] == [0, 2]
    assert [int(v) for v in s.run([n["a"], n["b"]])] == [8, 4]


def test_one_shot_iterator_shared_by_two_fetch_signatures() -> None:
    def build() -> dict[str, str]:
        nxt = tf.compat.v1.data.make_one_shot_iterator(D.range(4)).get_next()
        return {"next": nxt.name, "plus": (nxt + 100).name}

    s, n = _session_for(build)
    assert int(s.run([n["next"]])[0]) == 0
    assert int(s.run([n["plus"]])[0]) == 101  # another executor, the same iterator
    assert int(s.run([n["next"]])[0]) == 2


def test_string_handle_feeds_a_from_string_handle_iterator() -> None:
    def build() -> dict[str, str]:
        it = tf.compat.v1.data.make_one_shot_iterator(D.range(3))
        handle = tf.compat.v1.placeholder(tf.string, [], name="handle")
        fed = tf.compat.v1.data.Iterator.from_string_handle(
            handle, tf.compat.v1.data.get_output_types(it),
            tf.compat.v1.data.get_output_shapes(it))  # fmt: skip
        return {"string_handle": it.string_handle().name, "next": fed.get_next().name}

    s, n = _session_for(build)
    handle = s.run([n["string_handle"]])[0]
    assert isinstance(handle.item(), bytes)
    got = [int(s.run([n["next"]], feeds={"handle:0": handle})[0]) for _ in range(3)]
    assert got == [0, 1, 2]
    with pytest.raises(OutOfRangeError):
        s.run([n["next"]], feeds={"handle:0": handle})


def test_get_next_as_optional() -> None:
    def build() -> dict[str, str]:
        it = tf.compat.v1.data.make_initializable_iterator(D.range(2))
        opt = tf.data.experimental.get_next_as_optional(it)
        return {"has": opt.has_value().name, "init": it.initializer.name}

    s, n = _session_for(build)
    s.run([], targets=[n["init"]])
    assert [bool(s.run([n["has"]])[0]) for _ in range(3)] == [True, True, False]


def test_map_function_error_fails_get_next_with_its_code() -> None:
    def build() -> dict[str, str]:
        ds = D.range(3).map(lambda v: tf.reshape(v, tf.stack([v + 2])))
        return {"next": tf.compat.v1.data.make_one_shot_iterator(ds).get_next().name}

    s, n = _session_for(build)
    with pytest.raises(InvalidArgumentError, match="Input to reshape is a tensor with 1 values, "
                       "but the requested shape has 2"):  # fmt: skip
        s.run([n["next"]])


# -- kernels and values ---------------------------------------------------------------------
def test_philox_known_answers() -> None:
    # Random123's known-answer vectors for Philox4x32-10.
    assert Philox(0, 0).block() == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)
    p = Philox(0x299F31D0A4093822, 0)
    p.counter = [0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344]
    assert p.block() == (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)
    assert p.counter == [0x243F6A89, 0x85A308D3, 0x13198A2E, 0x03707344]


def test_seed_generators_fixed_and_reshuffling() -> None:
    fixed = SeedGenerator(3, 4, reshuffle=False)
    assert [fixed.generate() for _ in range(2)] == [(3, 4), (3, 4)]
    again = SeedGenerator(3, 4, reshuffle=True)
    stream = Philox(3, 4)
    assert [again.generate() for _ in range(3)] == [(stream(), stream()) for _ in range(3)]
    assert SeedGenerator(0, 0, reshuffle=False).generate() != (0, 0)


def _drain(ds: Any, limit: int = 100) -> list:
    it = ds.make_iterator()
    ctx = IteratorContext(None)
    out = []
    while (element := it.get_next(ctx)) is not None:
        out.append(element)
        assert len(out) <= limit
    return out


def test_dataset_value_kernels_and_errors() -> None:
    ds = dataset_of(run("RangeDataset", [I64(0), I64(5), I64(2)],
                        {"output_types": [9], "output_shapes": [()]})[0], "n")  # fmt: skip
    assert isinstance(ds, RangeDataset) and ds.cardinality() == 3
    assert [int(e[0]) for e in _drain(ds)] == [0, 2, 4]
    with pytest.raises(InvalidArgumentError, match="step must be a non-zero integer."):
        run("RangeDataset", [I64(0), I64(5), I64(0)], {"output_types": [9], "output_shapes": [()]})
    with pytest.raises(InvalidArgumentError, match="Tensor must be a Dataset object."):
        dataset_of(np.asarray(1.0), "n")


def test_batch_size_zero_and_mismatched_shapes() -> None:
    value = dataset_value(RangeDataset(0, 3, 1, [9], [()]))
    attrs = {"output_types": [9], "output_shapes": [(None,)]}
    with pytest.raises(InvalidArgumentError, match="Batch size must be greater than zero."):
        run("BatchDatasetV2", [value, I64(0), np.bool_(False)], attrs, node_name="b")
    ds = BatchDataset(_Ragged(), 2, False, [1], [(None, None)], "b")
    with pytest.raises(InvalidArgumentError, match="Cannot batch tensors with different shapes "
                       r"in component 0. First element had shape \[2\] and element 1 had shape "
                       r"\[3\]."):  # fmt: skip
        _drain(ds)


class _Ragged(dataset_ops.Dataset):
    def __init__(self) -> None:
        super().__init__([1], [(None,)])

    def make_iterator(self) -> dataset_ops.DatasetIterator:
        return _ListIt([[np.zeros(2, np.float32)], [np.zeros(3, np.float32)]])


class _ListIt(dataset_ops.DatasetIterator):
    def __init__(self, items: list) -> None:
        super().__init__()
        self.items = list(items)

    def _next(self, ctx: IteratorContext) -> list | None:
        return self.items.pop(0) if self.items else None


def test_a_dataset_refuses_to_leave_its_process() -> None:
    value = dataset_value(RangeDataset(0, 3, 1, [9], [()]))
    with pytest.raises(InvalidArgumentError, match="cannot be sent to another process"):
        tensor_util.from_numpy(value)


def test_concurrent_get_next_hands_out_each_element_once() -> None:
    def build() -> dict[str, str]:
        nxt = tf.compat.v1.data.make_one_shot_iterator(D.range(400).map(lambda v: v + 1))
        return {"next": nxt.get_next().name}

    s, n = _session_for(build)
    got: list[int] = []
    lock = threading.Lock()

    def worker() -> None:
        while True:
            try:
                value = int(s.run([n["next"]])[0])
            except OutOfRangeError:
                return
            with lock:
                got.append(value)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == list(range(1, 401))


def test_make_iterator_type_mismatch() -> None:
    def build() -> dict[str, str]:
        it = tf.compat.v1.data.Iterator.from_structure(tf.float32, tf.TensorShape([]))
        return {"init": it.make_initializer(D.range(3).map(lambda v: tf.cast(v, tf.float32)))
                .name}  # fmt: skip

    s, n = _session_for(build)
    s.run([], targets=[n["init"]])  # matching spec: fine
    g = tf.Graph()
    with g.as_default():
        it = tf.compat.v1.data.Iterator.from_structure(tf.float32, tf.TensorShape([]))
        bad = tf.raw_ops.MakeIterator(dataset=D.range(3)._variant_tensor,
                                      iterator=it._iterator_resource, name="bad")  # fmt: skip
    s = Session(g.as_graph_def().SerializeToString())
    with pytest.raises(
        InvalidArgumentError,
        match="Data type mismatch at component 0: expected float but got int64.",
    ):
        s.run([], targets=[bad.name])


# -- placement --------------------------------------------------------------------------------
def _placed(build: Callable[[], Any], devices: list[str]) -> dict[str, str]:
    g = tf.Graph()
    with g.as_default():
        build()
    graph = convert_graph_def_to_graph(_ours(g.as_graph_def()))
    place(graph, devices, default_device=devices[0], allow_soft_placement=True)
    return {n.name: n.assigned_device for n in graph.op_nodes()}


def _ours(gd: Any) -> Any:
    from protos import graph_pb2

    return graph_pb2.GraphDef.FromString(gd.SerializeToString())


W0 = "/job:worker/replica:0/task:0/device:CPU:0"
W1 = "/job:worker/replica:0/task:1/device:CPU:0"


def test_unplaced_dataset_ops_follow_their_consumers() -> None:
    # TensorFlow colocates the iterator with the last dataset op (`_class`); the dataset
    # ops upstream of it follow their consumers here, so the variant never crosses tasks.
    def build() -> None:
        ds = D.range(10).map(lambda v: v + 1)
        with tf.device("/job:worker/task:1"):
            it = tf.compat.v1.data.make_initializable_iterator(ds.batch(2))
            it.get_next()

    placed = _placed(build, [W0, W1])
    for name in ("RangeDataset", "MapDataset", "BatchDatasetV2", "IteratorV2", "MakeIterator",
                 "IteratorGetNext"):  # fmt: skip
        assert placed[name] == W1, name


def test_dataset_ops_pinned_to_another_task_fail_naming_the_nodes() -> None:
    def build() -> None:
        with tf.device("/job:worker/task:0"):
            ds = D.range(10)
        with tf.device("/job:worker/task:1"):
            it = tf.compat.v1.data.make_initializable_iterator(ds.map(lambda v: v * 2))
            it.get_next()

    with pytest.raises(InvalidArgumentError) as e:
        _placed(build, [W0, W1])
    assert e.value.node_name == "RangeDataset"
    assert e.value.message == (
        "{{node RangeDataset}} produces a tf.data dataset on " + W0 + " that {{node "
        "MapDataset}} consumes on " + W1 + ": a dataset cannot leave its process; place the "
        "dataset ops on the task of the iterator that consumes them"
    )


CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"


def _split_over_two_cpus() -> tuple[Any, Any]:
    with tf.device(CPU1):
        ds = D.range(4)
    with tf.device(CPU0):
        return initializable(ds.map(lambda v: v * 3))


def test_dataset_ops_on_another_device_of_one_task_are_fine() -> None:
    placed = _placed(_split_over_two_cpus, [CPU0, CPU1])
    assert (placed["RangeDataset"], placed["MapDataset"]) == (CPU1, CPU0)
    g = tf.Graph()
    with g.as_default():
        nxt, init = _split_over_two_cpus()
    s = Session(g.as_graph_def().SerializeToString(), num_devices=2)
    s.run([], targets=[init.name])
    assert [int(s.run([nxt.name])[0]) for _ in range(4)] == [0, 3, 6, 9]
