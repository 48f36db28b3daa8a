"""Input validation TensorFlow's kernels do and ours must match: ConcatOffset's shape
checks and a reduction axis named twice (same code, same message as tf.raw_ops)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from common.errors import InvalidArgumentError

from . import run1
from .kernel_harness import run


def _tf_message(fn) -> str:
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        fn(tf)
    # Eager errors read "{{function_node ...}} MESSAGE [Op:NAME] name: ": the message.
    return re.sub(r" \[Op:\w+\].*$", "", e.value.message.split("}} ", 1)[-1])


def test_concat_offset_refuses_mismatched_dimensions_as_tensorflow():
    shapes = [np.array([2, 3], np.int32), np.array([3, 3], np.int32)]
    want = _tf_message(lambda tf: tf.raw_ops.ConcatOffset(concat_dim=1, shape=shapes))
    with pytest.raises(InvalidArgumentError) as e:
        run("ConcatOffset", [np.int32(1), *shapes])
    assert str(e.value) == want
    ok = run("ConcatOffset", [np.int32(0), *shapes])
    assert [o.tolist() for o in ok] == [[0, 0], [2, 0]]


@pytest.mark.parametrize("axes", [[0, 0], [1, -1]])
def test_repeated_reduction_axes_are_refused_as_tensorflow(axes):
    x = np.ones((2, 3), np.float32)
    idx = np.array(axes, np.int32)
    want = _tf_message(lambda tf: tf.raw_ops.Sum(input=x, axis=idx))
    with pytest.raises(InvalidArgumentError) as e:
        run1("Sum", x, idx)
    assert str(e.value) == want
