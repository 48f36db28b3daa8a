"""Kernels whose sizes come from input values check them before allocating, not after:
under a node's allocation cap a hostile input fails RESOURCE_EXHAUSTED naming the node,
and the kernel's own peak allocation (numpy reports its buffers to tracemalloc) stays
a small multiple of its inputs. No sockets: the kernels are called as the executor
calls them."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import common.ops  # noqa: F401 - registers the kernels
from common.dtypes import DataType
from common.errors import ResourceExhaustedError
from common.ops.registry import KernelConstruction, find_kernel

CAP = 64 * 2**20  # the node's allocation cap, as constant folding sets one
NODE = "hostile"


def _kernel(op: str, attrs: dict[str, Any], inputs: list[DataType], out: list[DataType]) -> Any:
    kc = KernelConstruction(
        NODE, op, attrs, tuple(inputs), tuple(out), "/job:worker/replica:0/task:1/device:CPU:0"
    )
    kc.allocation_limit = CAP
    kernel = find_kernel(op, "CPU")
    assert kernel is not None
    return kernel.factory(kc)


def _peak_bytes(run: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        with pytest.raises(ResourceExhaustedError) as caught:
            run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        assert caught.value.node_name == NODE


def test_ragged_gather_sizes_an_inner_level_before_making_it() -> None:
    # One outer row of 2**16 inner rows, gathered 2**10 times: 2**26 inner rows out,
    # 512 MB for each int64 array of their positions.
    i64, f32 = DataType.DT_INT64, DataType.DT_FLOAT
    attrs = {"Tvalues": f32, "Tindices": i64, "Tsplits": i64}
    compute = _kernel(
        "RaggedGather",
        {**attrs, "PARAMS_RAGGED_RANK": 2, "OUTPUT_RAGGED_RANK": 2},
        [i64, i64, f32, i64],
        [i64, i64, f32],
    )
    n = 2**16
    inputs = [
        np.array([0, n], np.int64),
        np.arange(n + 1, dtype=np.int64),
        np.ones(n, np.float32),
        np.zeros(2**10, np.int64),
    ]
    assert _peak_bytes(lambda: compute(None, inputs)) < CAP


def test_einsum_sizes_its_output_before_computing_it() -> None:
    f32 = DataType.DT_FLOAT
    compute = _kernel("Einsum", {"equation": "i,j->ij", "N": 2, "T": f32}, [f32, f32], [f32])
    x = np.ones(2**14, np.float32)  # a 1 GB product
    assert _peak_bytes(lambda: compute(None, [x, x])) < CAP
