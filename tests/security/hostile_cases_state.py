"""Hostile cases (see hostile_cases): Eig/Sqrtm/Logm, special functions at the edges,
queues, barriers, staging areas, tables and PyFunc."""

from __future__ import annotations

from typing import Any

import numpy as np

from .hostile_cases import NAME, Feed, case, f32, i32, i64


# -- linalg: Eig, Sqrtm, Logm --------------------------------------------------------------
@case("linalg", "Eig of a non-square matrix")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Eig(input=feed(np.ones((2, 3), np.float32)), Tout=tf.complex64, name=NAME)[0]


@case("linalg", "Eig of NaN")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Eig(
        input=feed(np.full((2, 2), np.nan, np.float32)),
        Tout=tf.complex64,
        compute_v=False,
        name=NAME,
    )[0]


@case("linalg", "Eig of an empty batch")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Eig(
        input=feed(np.zeros((0, 2, 2), np.float64)), Tout=tf.complex128, name=NAME
    )[0]


@case("linalg", "Sqrtm of a vector")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.MatrixSquareRoot(input=feed(f32(1, 2)), name=NAME)


@case("linalg", "Sqrtm of Inf")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.MatrixSquareRoot(input=feed(np.full((2, 2), np.inf, np.float64)), name=NAME)


@case("linalg", "Sqrtm of complex NaN")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.MatrixSquareRoot(input=feed(np.full((2, 2), np.nan, np.complex64)), name=NAME)


@case("linalg", "Logm of Inf")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.MatrixLogarithm(
        input=feed(np.array([[np.inf, 0], [0, 1]], np.complex128)), name=NAME
    )


@case("linalg", "Logm of a non-square matrix")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.MatrixLogarithm(input=feed(np.ones((2, 3), np.complex64)), name=NAME)


@case("linalg", "Logm of a 0x0 matrix")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.MatrixLogarithm(input=feed(np.ones((0, 0), np.complex128)), name=NAME)


# -- special functions: values at the edges -------------------------------------------------
EDGES = np.array([np.nan, np.inf, -np.inf, 0.0, -1.0, -0.5, 1e-30, 1e30], np.float64)


@case("special", "zeta at the edges")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Zeta(x=feed(EDGES), q=feed(EDGES[::-1].copy()), name=NAME)


@case("special", "polygamma at the edges")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Polygamma(
        a=feed(np.array([np.nan, -1, 0, 1, 2.5, 1e9, 3, 0], np.float64)), x=feed(EDGES), name=NAME
    )


@case("special", "igamma at the edges")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Igamma(a=feed(EDGES), x=feed(EDGES[::-1].copy()), name=NAME)


@case("special", "unary specials at the edges")
def _(tf: Any, feed: Feed) -> Any:
    x = feed(EDGES)
    return [
        tf.raw_ops.BesselI0(x=x, name=NAME),
        tf.raw_ops.Dawsn(x=x),
        tf.raw_ops.Expint(x=x),
        tf.raw_ops.FresnelCos(x=x),
        tf.raw_ops.Spence(x=x),
    ]


@case("special", "zeta of mismatched shapes")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Zeta(x=feed(f32(1, 2)), q=feed(f32(1, 2, 3)), name=NAME)


# -- stateful: queues, barriers, staging, tables (non-blocking hostile input) -------------
@case("dataflow", "priority queue enqueue without a priority")
def _(tf: Any, feed: Feed) -> Any:
    q = tf.raw_ops.PriorityQueueV2(
        component_types=[tf.float32], shapes=[[]], shared_name="hostile_pq1"
    )
    return tf.raw_ops.QueueEnqueueV2(handle=q, components=[feed(f32(1.0)[0])], name=NAME)


@case("dataflow", "priority queue priority of the wrong shape")
def _(tf: Any, feed: Feed) -> Any:
    q = tf.raw_ops.PriorityQueueV2(
        component_types=[tf.float32], shapes=[[]], shared_name="hostile_pq2"
    )
    return tf.raw_ops.QueueEnqueueV2(
        handle=q, components=[feed(i64(1, 2)), feed(f32(1.0)[0])], name=NAME
    )


@case("dataflow", "barrier insert keys and values of different lengths", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    b = tf.raw_ops.Barrier(component_types=[tf.float32], shapes=[[]], shared_name="hostile_b1")
    return tf.raw_ops.BarrierInsertMany(
        handle=b,
        keys=feed(np.array([b"a", b"b"])),
        values=feed(f32(1.0)),
        component_index=0,
        name=NAME,
    )


@case("dataflow", "barrier insert component out of range")
def _(tf: Any, feed: Feed) -> Any:
    b = tf.raw_ops.Barrier(component_types=[tf.float32], shapes=[[]], shared_name="hostile_b2")
    return tf.raw_ops.BarrierInsertMany(
        handle=b,
        keys=feed(np.array([b"a"])),
        values=feed(f32(1.0)),
        component_index=3,
        name=NAME,
    )


@case("dataflow", "barrier take a negative number", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    b = tf.raw_ops.Barrier(component_types=[tf.float32], shapes=[[]], shared_name="hostile_b3")
    return tf.raw_ops.BarrierTakeMany(
        handle=b, num_elements=feed(i32(-3)[0]), component_types=[tf.float32], name=NAME
    )[0]


@case("dataflow", "map stage of a value list of the wrong length")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.MapStage(
        key=feed(i64(1)[0]),
        indices=feed(i32(0, 1)),
        values=[feed(f32(1.0)[0])],
        dtypes=[tf.float32, tf.float32],
        shared_name="hostile_ms1",
        name=NAME,
    )


@case("dataflow", "staging area over its capacity in bytes")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.Stage(
        values=[feed(np.zeros(64, np.float32))],
        memory_limit=16,
        shared_name="hostile_st1",
        name=NAME,
    )


@case("tables", "text file table of a file that does not exist")
def _(tf: Any, feed: Feed) -> Any:
    t = tf.raw_ops.HashTableV2(key_dtype=tf.string, value_dtype=tf.int64, shared_name="hostile_t1")
    return tf.raw_ops.InitializeTableFromTextFileV2(
        table_handle=t,
        filename=feed(np.array(b"/nonexistent/vocab.txt")),
        key_index=-2,
        value_index=-1,
        name=NAME,
    )


@case("tables", "text file table of a vector of file names")
def _(tf: Any, feed: Feed) -> Any:
    t = tf.raw_ops.HashTableV2(key_dtype=tf.string, value_dtype=tf.int64, shared_name="hostile_t3")
    return tf.raw_ops.InitializeTableFromTextFileV2(
        table_handle=t,
        filename=feed(np.array([b"a", b"b"])),
        key_index=-2,
        value_index=-1,
        name=NAME,
    )


@case("tables", "dense hash table with the same empty and deleted keys")
def _(tf: Any, feed: Feed) -> Any:
    t = tf.raw_ops.MutableDenseHashTableV2(
        empty_key=feed(i64(0)[0]),
        deleted_key=feed(i64(0)[0]),
        value_dtype=tf.float32,
        shared_name="hostile_d1",
        name=NAME,
    )
    return tf.raw_ops.LookupTableSizeV2(table_handle=t)


@case("tables", "dense hash table insert of the empty key")
def _(tf: Any, feed: Feed) -> Any:
    t = tf.raw_ops.MutableDenseHashTableV2(
        empty_key=feed(i64(-1)[0]),
        deleted_key=feed(i64(-2)[0]),
        value_dtype=tf.float32,
        shared_name="hostile_d2",
    )
    return tf.raw_ops.LookupTableInsertV2(
        table_handle=t, keys=feed(i64(-1)), values=feed(f32(1.0)), name=NAME
    )


@case("tables", "dense hash table keys and values of different lengths")
def _(tf: Any, feed: Feed) -> Any:
    t = tf.raw_ops.MutableDenseHashTableV2(
        empty_key=feed(i64(-1)[0]),
        deleted_key=feed(i64(-2)[0]),
        value_dtype=tf.float32,
        shared_name="hostile_d3",
    )
    return tf.raw_ops.LookupTableInsertV2(
        table_handle=t, keys=feed(i64(1, 2)), values=feed(f32(1.0)), name=NAME
    )


@case("tables", "dense hash table huge initial buckets", tf_unsafe=True)
def _(tf: Any, feed: Feed) -> Any:
    t = tf.raw_ops.MutableDenseHashTableV2(
        empty_key=feed(i64(-1)[0]),
        deleted_key=feed(i64(-2)[0]),
        value_dtype=tf.float32,
        initial_num_buckets=2**40,
        shared_name="hostile_d4",
        name=NAME,
    )
    return tf.raw_ops.LookupTableSizeV2(table_handle=t)


# -- PyFunc: a token nobody registered ------------------------------------------------------
@case("pyfunc", "unregistered token")
def _(tf: Any, feed: Feed) -> Any:
    return tf.raw_ops.PyFunc(
        input=[feed(f32(1.0))], token="pyfunc_nobody", Tout=[tf.float32], name=NAME
    )
