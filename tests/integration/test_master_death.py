"""Integration: when the master dies (SIGKILL), the graphs it registered on the workers are
freed once its session lease runs out (worker.session_leases), without any other process
restarting. Real processes started through the CLIs."""

from __future__ import annotations

import re
import time
import urllib.request

import numpy as np
from prometheus_client.parser import text_string_to_metric_families

import client as ours
from deploy.launcher import LocalCluster

W0, W1 = "/job:worker/task:0", "/job:worker/task:1"


def registered_graphs(url: str) -> float:
    with urllib.request.urlopen(url, timeout=10) as r:
        text = r.read().decode()
    return next(
        s.value
        for f in text_string_to_metric_families(text)
        if f.name == "flowrt_worker_registered_graphs"
        for s in f.samples
    )


def test_graphs_of_a_killed_master_are_freed():
    cluster = LocalCluster(
        {"worker": 2},
        master_args=["--session-lease", "2"],
        worker_args=["--metrics-port", "0"],
    ).start()
    try:
        urls = [
            re.search(
                r"metrics on (http://\S+)", "\n".join(cluster.tasks[f"worker{i}"].lines)
            ).group(1)
            for i in range(2)
        ]
        g = ours.Graph()
        with g.as_default():
            with ours.device(W0):
                x = ours.placeholder(ours.float32, [4], name="x")
                a = x + 1.0
            with ours.device(W1):
                y = a * 2.0
        sess = ours.Session(cluster.target, graph=g)
        got = sess.run(y, {x: np.arange(4, dtype=np.float32)})
        np.testing.assert_array_equal(got, (np.arange(4) + 1.0) * 2.0)
        assert [registered_graphs(u) for u in urls] == [1, 1], [
            cluster.tasks[f"worker{i}"].lines[-8:] for i in range(2)
        ]
        time.sleep(3.0)  # renewed leases keep an idle session's graphs
        assert [registered_graphs(u) for u in urls] == [1, 1]
        cluster.tasks["master"].kill()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(registered_graphs(u) for u in urls):
            time.sleep(0.2)
        assert [registered_graphs(u) for u in urls] == [0, 0], [
            cluster.tasks[f"worker{i}"].lines[-8:] for i in range(2)
        ]
        for i in range(2):
            assert any(
                "its master stopped renewing it" in line
                for line in cluster.tasks[f"worker{i}"].lines
            )
    finally:
        codes = cluster.stop()
    assert codes["worker0"] == codes["worker1"] == 0
