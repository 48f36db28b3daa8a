"""Hostile inputs for the kernels added in the last round, one table per op family
(hostile_cases_nn, hostile_cases_array, hostile_cases_state, hostile_cases_ragged,
hostile_cases_sparse register theirs here).

A case builds its graph with TensorFlow's own client (tf.raw_ops, graph mode): every
hostile value arrives through a placeholder, so no shape function refuses the graph at
build time and the kernel itself meets the bad input at run time, as a worker does when
a client sends it. The op under test is named "hostile"; the runner
(test_hostile_kernels) runs each case on TensorFlow in-process and on our cluster, and
compares outcome for outcome.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

# Feeds a numpy value through a placeholder of its dtype and unknown shape.
Feed = Callable[[Any], Any]
NAME = "hostile"
HUGE = 2**31 - 1  # largest int32 size: a kernel that allocates it whole blows memory up


@dataclass(frozen=True)
class Case:
    """`build(tf, feed)` returns the fetches. `tf_unsafe`: TensorFlow 2.21 aborts its
    process, reads past a buffer or allocates what the hostile size asks for (tens of GB)
    on this input, so it is no oracle: ours must fail cleanly naming the node, or answer
    without allocating what was asked (a dense hash table's buckets are not
    preallocated here)."""

    family: str
    name: str
    build: Callable[[Any, Feed], Any]
    tf_unsafe: bool = False


def f32(*values: Any) -> np.ndarray:
    return np.array(values, np.float32)


def i32(*values: Any) -> np.ndarray:
    return np.array(values, np.int32)


def i64(*values: Any) -> np.ndarray:
    return np.array(values, np.int64)


CASES: list[Case] = []


def case(family: str, name: str, tf_unsafe: bool = False) -> Callable[..., Case]:
    """Adds the decorated builder to CASES."""

    def wrap(build: Callable[[Any, Feed], Any]) -> Case:
        made = Case(family, name, build, tf_unsafe)
        CASES.append(made)
        return made

    return wrap


def _load_tables() -> None:
    """The tables register themselves in CASES when imported (after `case` exists)."""
    from . import (  # noqa: F401
        hostile_cases_array,
        hostile_cases_nn,
        hostile_cases_ragged,
        hostile_cases_sparse,
        hostile_cases_state,
    )


_load_tables()
