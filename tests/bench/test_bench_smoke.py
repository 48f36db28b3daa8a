"""`python -m bench` smoke tests: tiny sizes, the JSON keys and sane values (never speed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from bench import workloads
from bench.__main__ import add_ratios, median_of_rounds

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_bench_prints_one_json_object_with_the_keys():
    cmd = [
        sys.executable,
        "-m",
        "bench",
        "--quick",
        "--only",
        "trivial",
        "transfer",
        "chain1000",
        "fanout_step_ms_1",
        "plan_ms_1k",
        "--transfer-sizes",
        "1",
        "--plan-sizes",
        "1000",
    ]
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1
    result = json.loads(lines[0])
    expected = {
        "trivial_step_ms",
        "trivial_step_ms_grpc_client",
        "transfer_GBps_1MB",
        "worker_peak_rss_mb_1MB",
        "chain1000_step_ms",
        "chain1000_step_ms_optimized",
        "chain1000_executor_step_ms",
        "fanout_step_ms_1_workers",
        "plan_ms_1k_nodes",
        "load_average_1m",
        "worker_openblas_coretype",
        "rounds",
    }
    assert set(result) == expected
    assert result["rounds"] == 1  # --quick
    for key in expected - {"load_average_1m", "worker_openblas_coretype", "rounds"}:
        assert isinstance(result[key], float) and result[key] > 0, key
    assert isinstance(result["worker_openblas_coretype"], str)


def test_tensorflow_client_figures_run_in_tensorflows_layout():
    """What an unmodified TensorFlow client measures on ours runs against `python -m
    server` tasks, the client dialing worker 0 (whose process hosts the master), as
    TensorFlow's side of the comparison does."""
    pytest.importorskip("tensorflow")
    cmd = [
        sys.executable,
        "-m",
        "bench",
        "--quick",
        "--vs-tensorflow",
        "--only",
        "trivial_step_ms_tf_client",
        "throughput_steps_per_s_1_clients",
    ]
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["tf_client_layout"] == "tensorflow"
    assert result["trivial_step_ms_tf_client"] > 0
    assert result["throughput_steps_per_s_1_clients"] > 0
    assert result["tf_throughput_steps_per_s_1_clients"] > 0
    assert "ratio_throughput_steps_per_s_1_clients" in result


def test_throughput_from_client_processes_adds_their_steps():
    """Client processes each open their sessions, start together on "go" and report their
    steps; the figure is the sum of their rates."""
    pytest.importorskip("tensorflow")
    from bench import tf_models
    from deploy.launcher import LocalCluster as TaskCluster

    with TaskCluster({"worker": 2, "ps": 1}, layout="tensorflow") as tasks:
        rate = tf_models.throughput_processes(tasks.target, processes=2, clients=2, seconds=0.5)
    assert rate > 0


def test_rounds_give_per_key_medians():
    rounds = [{"a": 1.0, "b": 5.0}, {"a": 3.0}, {"a": 2.0, "b": 7.0}]
    assert median_of_rounds(rounds) == {"a": 2.0, "b": 6.0}


def test_ratios_are_ours_over_tensorflow():
    ours = {"trivial_step_ms": 2.0, "transfer_GBps_64MB": 3.0}
    tf = {"trivial_step_ms": 1.0, "transfer_GBps_64MB": 1.5, "mlp_step_ms": 20.0}
    assert add_ratios(ours, tf) == {
        "tf_trivial_step_ms": 1.0,
        "tf_transfer_GBps_64MB": 1.5,
        "tf_mlp_step_ms": 20.0,
        "ratio_trivial_step": 2.0,
        "ratio_transfer_GBps_64MB": 2.0,
    }


@pytest.mark.parametrize(
    "make",
    [
        workloads.trivial,
        lambda: workloads.transfer(4096),
        lambda: workloads.chain(10),
        lambda: workloads.fanout(3),
        lambda: workloads.mlp(2, 8, 4),
    ],
)
def test_workload_graphs_compute_their_expected_value(make):
    """Each GraphDef, run in-process on one worker's devices, fetches its `expect`."""
    from common.session import Session

    w = make()
    graph_def = type(w.graph_def)()
    graph_def.CopyFrom(w.graph_def)
    for node in graph_def.node:
        node.device = ""
    sess = Session(graph_def)
    if w.init_targets:
        sess.run([], targets=w.init_targets)
    value = sess.run([w.fetch], feeds=w.feeds)[0]
    w.check(value)
    with pytest.raises(AssertionError, match="expected"):
        w.check(np.float32(w.expect + 1000))


def test_model_figures_are_picked_by_prefix():
    from bench import tf_models

    assert tf_models.keys(["throughput"]) == [
        "throughput_steps_per_s_1_clients",
        "throughput_steps_per_s_8_clients",
        "throughput_steps_per_s_32_clients",
        "throughput_steps_per_s_32_clients_4_processes",
    ]
    assert tf_models.keys(["cnn", "plan_ms"]) == ["cnn_step_ms", "plan_ms_100k_control_inputs"]
    assert tf_models.keys(["trivial"]) == []


def test_control_inputs_graph_has_one_target_waiting_on_all():
    gd = workloads.control_inputs(10)
    target = gd.node[-1]
    assert (target.name, list(target.input)) == ("target", [f"^c{i}" for i in range(10)])
    assert {n.device for n in gd.node[:10]} == {workloads.worker(0), workloads.worker(1)}


def test_mlp_overhead_is_the_step_over_its_kernels():
    from bench.__main__ import mlp_overhead, parse_args

    result = {"mlp_step_ms": 33.0, "mlp_kernels_ms": 30.0}
    mlp_overhead(result)
    assert result["mlp_overhead_pct"] == 10.0
    assert parse_args(["--only", "mlp_overhead"]).only == [
        "mlp_overhead",
        "mlp_step_ms",
        "mlp_kernels_ms",
    ]


def test_mlp_overhead_from_alternating_pairs_is_kept():
    from bench.__main__ import mlp_overhead

    result = {"mlp_step_ms": 33.0, "mlp_kernels_ms": 30.0, "mlp_overhead_pct": 4.2}
    mlp_overhead(result)
    assert result["mlp_overhead_pct"] == 4.2


def test_bench_kernels_pairs_the_mlp_step_with_its_kernels():
    from bench.cluster import LocalCluster

    with LocalCluster(2) as cluster:
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "bench.bench_kernels",
                "--target",
                cluster.master_address,
                "--pairs",
                "3",
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(result) == {"mlp_step_ms_paired", "mlp_kernels_ms", "mlp_overhead_pct"}
    assert result["mlp_step_ms_paired"] > 0 and result["mlp_kernels_ms"] > 0


def test_cross_host_bench_prints_both_runtimes_figures():
    from deploy import netns

    reason = netns.available()
    if reason is not None:
        pytest.skip(f"multi-host test bed unavailable: {reason}")
    out = subprocess.run(
        [sys.executable, "-m", "bench.cross_host", "--rounds", "1", "--quick"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    keys = {"trivial_step_ms_cross_host", "transfer_GBps_64MB_cross_host"}
    from bench import tf_runtime

    if tf_runtime.available():
        keys |= {f"{k}_{s}" for k in set(keys) for s in ("tf", "ratio")}
    assert set(result) == keys
    assert all(v > 0 for v in result.values())


def test_cpu_per_step_reads_this_process():
    """CPU seconds grow with work done; context switches are counted over all threads."""
    from bench.cpu_per_step import context_switches, cpu_seconds

    user0, system0 = cpu_seconds(os.getpid())
    sum(i * i for i in range(2_000_000))
    user1, system1 = cpu_seconds(os.getpid())
    assert user1 + system1 > user0 + system0
    assert context_switches(os.getpid()) >= 0


def test_cpu_per_step_prints_both_runtimes_per_task():
    """Our tasks and TensorFlow's, one client: CPU per step of worker 0 and 1, ratios."""
    pytest.importorskip("tensorflow")
    cmd = [sys.executable, "-m", "bench.cpu_per_step", "--clients", "1", "--seconds", "0.5"]
    cmd.append("--vs-tensorflow")
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["steps_per_s_1_clients"] > 0
    for task in ("worker0", "worker1"):
        for prefix in ("", "tf_"):
            assert result[f"{prefix}cpu_us_per_step_{task}_1_clients"] > 0
        assert f"ratio_cpu_us_per_step_{task}_1_clients" in result
        assert f"context_switches_per_step_{task}_1_clients" in result
