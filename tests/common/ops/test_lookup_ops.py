"""Lookup tables (HashTableV2, MutableHashTableV2, MutableHashTableOfTensorsV2 and the
LookupTable*V2 ops on them): signatures, values and errors against TensorFlow's kernels,
and the (container, shared_name) sharing of TensorFlow's LookupTableOp."""

from __future__ import annotations

import numpy as np
import pytest

from common.dtypes import DataType
from common.errors import FailedPreconditionError, InvalidArgumentError, UnimplementedError
from common.resource_mgr import ResourceMgr, handle_of

from .kernel_harness import fake_step, run
from .signatures import assert_signature_matches_tensorflow, module_ops

OPS = module_ops("common.ops.lookup_ops")
S, I64, F32 = DataType.DT_STRING, DataType.DT_INT64, DataType.DT_FLOAT


def test_the_family_is_registered():
    assert OPS == [
        "HashTableV2",
        "InitializeTableV2",
        "LookupTableExportV2",
        "LookupTableFindV2",
        "LookupTableImportV2",
        "LookupTableInsertV2",
        "LookupTableRemoveV2",
        "LookupTableSizeV2",
        "MutableHashTableOfTensorsV2",
        "MutableHashTableV2",
    ]


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


def _table(step, op="HashTableV2", key=S, value=I64, node="table", **attrs):
    attrs = {"key_dtype": key, "value_dtype": value, **attrs}
    return run(op, [], attrs, step=step, node_name=node)[0]


def _strings(*xs: str) -> np.ndarray:
    return np.array([x.encode() for x in xs], object)


def test_hash_table_against_tensorflow():
    tf = pytest.importorskip("tensorflow")
    keys, values = _strings("a", "b", "c"), np.array([1, 2, 3], np.int64)
    queries = np.array([[b"c", b"z"], [b"a", b"b"]], object)
    default = np.int64(-1)
    th = tf.raw_ops.HashTableV2(key_dtype=tf.string, value_dtype=tf.int64)
    tf.raw_ops.InitializeTableV2(table_handle=th, keys=keys, values=values)
    want = tf.raw_ops.LookupTableFindV2(table_handle=th, keys=queries, default_value=default)
    step = fake_step()
    h = _table(step)
    run("InitializeTableV2", [h, keys, values], step=step)
    got = run("LookupTableFindV2", [h, queries, default], step=step)[0]
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want.numpy())
    assert run("LookupTableSizeV2", [h], step=step)[0] == 3
    k, v = run("LookupTableExportV2", [h], {"Tkeys": S, "Tvalues": I64}, step=step)
    assert dict(zip(k, v)) == {b"a": 1, b"b": 2, b"c": 3}


def test_hash_table_errors_as_tensorflow():
    step = fake_step()
    h = _table(step)
    keys, values = _strings("a", "b"), np.array([1, 2], np.int64)
    with pytest.raises(FailedPreconditionError, match="^Table not initialized.$"):
        run("LookupTableFindV2", [h, keys, np.int64(0)], step=step)
    run("InitializeTableV2", [h, keys, values], step=step)
    run("InitializeTableV2", [h, keys, values], step=step)  # the same data again: fine
    with pytest.raises(
        FailedPreconditionError, match="Table was already initialized with different data."
    ):
        run("InitializeTableV2", [h, _strings("a", "c"), values], step=step)
    with pytest.raises(
        InvalidArgumentError,
        match=r"Signature mismatch, have: resource, int32, int64->int64 expected: "
        r"resource, string, int64->int64",
    ):
        run("LookupTableFindV2", [h, np.array([1], np.int32), np.int64(0)], step=step)
    with pytest.raises(
        UnimplementedError,
        match="Insert not supported by InitializableLookupTable implementations",
    ) as e:
        run("LookupTableInsertV2", [h, keys, values], step=step, node_name="ins")
    assert e.value.node_name == "ins"
    with pytest.raises(
        UnimplementedError,
        match="Remove not supported by InitializableLookupTable implementations",
    ):
        run("LookupTableRemoveV2", [h, keys], step=step)
    other = _table(step, key=I64, value=F32, node="other")
    with pytest.raises(
        FailedPreconditionError,
        match="HashTable has different value for same key. Key 1 has 1 and trying to add value 2$",
    ):
        run(
            "InitializeTableV2",
            [other, np.array([1, 1], np.int64), np.array([1.0, 2.0], np.float32)],
            step=step,
        )
    with pytest.raises(
        InvalidArgumentError, match="Keys and values must have the same size 3 vs 2"
    ):
        run(
            "InitializeTableV2",
            [other, np.array([1, 2, 3], np.int64), np.array([1.0, 2.0], np.float32)],
            step=step,
        )


def test_hash_table_duplicate_key_message_is_tensorflows():
    tf = pytest.importorskip("tensorflow")
    th = tf.raw_ops.HashTableV2(key_dtype=tf.int64, value_dtype=tf.float32)
    with pytest.raises(tf.errors.FailedPreconditionError, match="Key 1 has 1 and trying to add"):
        tf.raw_ops.InitializeTableV2(
            table_handle=th,
            keys=np.array([1, 1], np.int64),
            values=np.array([1.0, 2.0], np.float32),
        )


def _tf_export(tf, handle, kt, vt) -> dict:
    k, v = tf.raw_ops.LookupTableExportV2(table_handle=handle, Tkeys=kt, Tvalues=vt)
    return {kk: tuple(np.atleast_1d(vv)) for kk, vv in zip(k.numpy(), v.numpy())}


def _export(step, h, kt, vt) -> dict:
    k, v = run("LookupTableExportV2", [h], {"Tkeys": kt, "Tvalues": vt}, step=step)
    return {kk: tuple(np.atleast_1d(vv)) for kk, vv in zip(k, v)}


def test_mutable_hash_table_against_tensorflow():
    tf = pytest.importorskip("tensorflow")
    r = tf.raw_ops
    th = r.MutableHashTableV2(key_dtype=tf.int64, value_dtype=tf.float32)
    step = fake_step()
    h = _table(step, "MutableHashTableV2", I64, F32)
    ins_k = np.array([[1, 2], [3, 1]], np.int64)
    ins_v = np.array([[1, 2], [3, 4]], np.float32)
    r.LookupTableInsertV2(table_handle=th, keys=ins_k, values=ins_v)
    run("LookupTableInsertV2", [h, ins_k, ins_v], step=step)
    rm_k = np.array([2, 9], np.int64)
    r.LookupTableRemoveV2(table_handle=th, keys=rm_k)
    run("LookupTableRemoveV2", [h, rm_k], step=step)
    assert _export(step, h, I64, F32) == _tf_export(tf, th, tf.int64, tf.float32)
    assert run("LookupTableSizeV2", [h], step=step)[0] == r.LookupTableSizeV2(table_handle=th)
    q = np.array([7, 1, 3], np.int64)
    for default in (np.float32(-1), np.array([-1, -2, -3], np.float32)):
        want = r.LookupTableFindV2(table_handle=th, keys=q, default_value=default).numpy()
        got = run("LookupTableFindV2", [h, q, default], step=step)[0]
        np.testing.assert_array_equal(got, want)
    imp_k, imp_v = np.array([7, 8], np.int64), np.array([1, 2], np.float32)
    r.LookupTableImportV2(table_handle=th, keys=imp_k, values=imp_v)
    run("LookupTableImportV2", [h, imp_k, imp_v], step=step)
    assert _export(step, h, I64, F32) == _tf_export(tf, th, tf.int64, tf.float32)
    with pytest.raises(InvalidArgumentError, match=r"Expected shape \[2\] for value, got \[1\]"):
        run("LookupTableInsertV2", [h, q[:2], np.ones(1, np.float32)], step=step)


def test_mutable_hash_table_of_tensors_against_tensorflow():
    tf = pytest.importorskip("tensorflow")
    r = tf.raw_ops
    attrs = {"value_shape": (2,)}
    th = r.MutableHashTableOfTensorsV2(key_dtype=tf.string, value_dtype=tf.int64, **attrs)
    step = fake_step()
    h = _table(step, "MutableHashTableOfTensorsV2", S, I64, **attrs)
    k, v = _strings("x", "y"), np.array([[1, 2], [3, 4]], np.int64)
    r.LookupTableInsertV2(table_handle=th, keys=k, values=v)
    run("LookupTableInsertV2", [h, k, v], step=step)
    q, default = _strings("y", "q"), np.array([0, -1], np.int64)
    want = r.LookupTableFindV2(table_handle=th, keys=q, default_value=default).numpy()
    np.testing.assert_array_equal(run("LookupTableFindV2", [h, q, default], step=step)[0], want)
    assert _export(step, h, S, I64) == _tf_export(tf, th, tf.string, tf.int64)


def test_tables_are_shared_by_container_and_shared_name():
    rm = ResourceMgr()
    a = _table(fake_step(rm), shared_name="vocab", container="c1")
    b = _table(fake_step(rm), shared_name="vocab", container="c1")
    c = _table(fake_step(rm), shared_name="vocab", container="c2")
    assert rm.find("c1", "vocab") is rm.find("c1", "vocab")
    assert handle_of(a) == handle_of(b) != handle_of(c)
    run("InitializeTableV2", [a, _strings("k"), np.array([5], np.int64)], step=fake_step(rm))
    got = run("LookupTableFindV2", [b, _strings("k"), np.int64(0)], step=fake_step(rm))[0]
    assert list(got) == [5]
    with pytest.raises(FailedPreconditionError, match="Table not initialized"):
        run("LookupTableFindV2", [c, _strings("k"), np.int64(0)], step=fake_step(rm))
    # use_node_name_sharing names an unnamed table after its node.
    shared = _table(fake_step(rm), use_node_name_sharing=True)
    assert handle_of(shared).name == "table" and rm.find("localhost", "table") is not None
    # Without it each node's table is private.
    p1, p2 = _table(fake_step(rm), node="p1"), _table(fake_step(rm), node="p2")
    assert handle_of(p1).name != handle_of(p2).name
