"""A kernel's work follows its input's size in numpy passes, not in Python steps per
element: a hostile feed of many tiny rows cannot hold a worker thread for minutes (a
kernel cannot be interrupted, so the step timeout would not free it). No sockets."""

from __future__ import annotations

import time

import numpy as np

import common.ops  # noqa: F401 - registers the kernels
from common.ops.ragged_array_ops import ragged_range

# A million rows took about 100 s with one Python step per row, and takes about 1 s now;
# the bound leaves room for a loaded machine.
ROWS = 10**6
BOUND_S = 30.0


def test_ragged_range_of_a_million_short_rows_is_one_numpy_pass() -> None:
    starts = np.zeros(ROWS, np.int64)
    limits = np.arange(ROWS, dtype=np.int64) % 3
    began = time.perf_counter()
    splits, values = ragged_range(None, starts, limits, np.array(1, np.int64), np.dtype(np.int64))
    assert time.perf_counter() - began < BOUND_S
    lengths = np.arange(ROWS) % 3
    np.testing.assert_array_equal(splits, np.concatenate([[0], np.cumsum(lengths)]))
    assert values.tolist()[:6] == [0, 0, 1, 0, 0, 1]
