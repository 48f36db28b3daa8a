"""NextAfter against TensorFlow 2.21: signature, values bit for bit with broadcasting,
subnormals, infinities, NaN and empty inputs, and TF's error on incompatible shapes.
Skipped without TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

from .kernel_harness import assert_same_as_tf
from .signatures import assert_signature_matches_tensorflow

pytest.importorskip("tensorflow")

_SPECIAL = [0.0, -0.0, 1.0, -1.0, 1e-45, 5e-324, np.inf, -np.inf, np.nan, 3.5, 1e38]


def test_signature_matches_tensorflow():
    assert_signature_matches_tensorflow("NextAfter")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_pair_of_special_values(dtype):
    with np.errstate(over="ignore"):
        values = np.array(_SPECIAL, dtype)
    assert_same_as_tf("NextAfter", {"x1": values[:, None], "x2": values[None, :]})


@pytest.mark.parametrize(
    "s1,s2", [((2, 3), (3,)), ((4, 1), (1, 5)), ((), (2,)), ((0, 3), (1, 3)), ((2,), (3,))]
)
def test_broadcasting_and_errors(s1, s2):
    rng = np.random.default_rng(3)
    x1 = rng.normal(size=s1).astype(np.float32)
    x2 = rng.normal(size=s2).astype(np.float32)
    assert_same_as_tf("NextAfter", {"x1": x1, "x2": x2})
