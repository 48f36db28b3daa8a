"""Remote recvs asked for as the step starts (GraphMgr prefetch): which _Recvs qualify (no
inputs at all, not fed by the client), one request per key (the _Recv takes the call in
flight), and calls no _Recv took are cancelled when the step ends. Two in-process workers
on port 0 where a peer is needed."""

from __future__ import annotations

import threading

import numpy as np

from common.dtypes import DataType
from common.graph.constructor import convert_graph_def_to_graph
from common.rendezvous import create_key
from tests.rpc.test_local_rpc import _count_grpc_recvs
from tests.worker import graphs as g
from tests.worker.test_recv_tensor import W0, W1, _inc
from worker.graph_mgr import _prefetch_keys

F = DataType.DT_FLOAT
T1 = "/job:worker/replica:0/task:1"


def test_only_input_less_recvs_not_fed_by_the_client_are_prefetched():
    gd = g.graph_def()
    g.recv(gd, "a", W0, "edge_a", F, send_device=W1, send_incarnation=7, client_terminated=False)
    g.recv(gd, "fed", W0, "x:0", F)  # from the client: RunGraph feeds it
    g.const(gd, "c", W0, np.float32(1))
    g.recv(gd, "b", W0, "edge_b", F, send_device=W1, send_incarnation=7, client_terminated=False)
    gd.node[-1].input.append("^c")  # a control input: may sit in a loop frame
    keys = _prefetch_keys([convert_graph_def_to_graph(gd, allow_internal_ops=True)])
    assert keys == (create_key(W1, 7, W0, "edge_a"),)


def test_prefetched_call_is_taken_by_the_recv(local_cluster, monkeypatch):
    calls = _count_grpc_recvs(monkeypatch)  # before the servers bind their handlers
    _, (w0, w1) = local_cluster({"worker": 2})
    key = create_key(W1, _inc(w1), W0, "t")
    rv = w0.worker.rendezvous_mgr.find_or_create(77)
    rv.prefetch([key])
    assert rv.num_calls_in_flight() == 1
    w1.worker.rendezvous_mgr.find_or_create(77).send(key, np.arange(3, dtype=np.float32))
    got: list = []
    done = threading.Event()
    rv.recv_async(key, lambda v, dead, err: (got.append((v, dead, err)), done.set()))
    assert done.wait(10.0)
    value, is_dead, error = got[0]
    assert error is None and not is_dead and value.tolist() == [0.0, 1.0, 2.0]
    assert calls == {"local": 1}  # one request, made by prefetch
    assert rv.num_calls_in_flight() == 0
    for w in (w0, w1):
        w.worker.cleanup_graph(77)


def test_prefetched_calls_no_recv_took_are_cancelled(local_cluster):
    _, (w0, w1) = local_cluster({"worker": 2})
    rv = w0.worker.rendezvous_mgr.find_or_create(78)
    rv.prefetch(
        [create_key(W1, _inc(w1), W0, "never_sent"), create_key(W0, _inc(w0), W1, "sent_from_here")]
    )  # ours: skipped
    assert rv.num_calls_in_flight() == 1
    rv.drop_prefetched()
    assert rv.num_calls_in_flight() == 0
    for w in (w0, w1):
        w.worker.cleanup_graph(78)
    assert T1 in w0.worker.recv_client.local._clients  # the socket path was used
