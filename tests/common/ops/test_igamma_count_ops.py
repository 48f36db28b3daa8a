"""The incomplete gamma family (Igamma, Igammac, IgammaGradA, RandomGammaGrad), CountUpTo /
ResourceCountUpTo and RefIdentity: signatures and values against TensorFlow's kernels."""

from __future__ import annotations

import numpy as np
import pytest

from common.dtypes import DataType
from common.errors import OutOfRangeError
from common.ops.state_ops import Var
from common.resource_mgr import ResourceMgr

from .kernel_harness import fake_step, run, run1
from .signatures import assert_signature_matches_tensorflow

OPS = ["Igamma", "Igammac", "IgammaGradA", "RandomGammaGrad", "CountUpTo", "ResourceCountUpTo"]
OPS += ["RefIdentity"]

A = np.array([0.5, 1.0, 2.0, 2.0, 5.0, 10.0, 30.0, 0.1, 3.0, 7.5])
X = np.array([0.3, 1.0, 0.5, 8.0, 5.0, 25.0, 28.0, 2.0, 0.0, 1e-3])


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name):
    assert_signature_matches_tensorflow(name)


@pytest.mark.parametrize("op", ["Igamma", "Igammac", "IgammaGradA", "RandomGammaGrad"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_against_tensorflow(op, dtype):
    tf = pytest.importorskip("tensorflow")
    a, x = A.astype(dtype), X.astype(dtype)
    names = ("alpha", "sample") if op == "RandomGammaGrad" else ("a", "x")
    want = getattr(tf.raw_ops, op)(**dict(zip(names, (a, x)))).numpy()
    got = run1(op, a, x)
    assert got.dtype == dtype
    rtol = 2e-5 if dtype == np.float32 else 1e-9
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-30)


def test_domain_and_broadcasting_as_tensorflow():
    tf = pytest.importorskip("tensorflow")
    a = np.array([[0.0], [-1.0], [2.0]], np.float32)
    x = np.array([-1.0, 0.0, 1.0, np.inf], np.float32)
    for op in ("Igamma", "Igammac", "IgammaGradA"):
        want = getattr(tf.raw_ops, op)(a=a, x=x).numpy()
        np.testing.assert_allclose(run1(op, a, x), want, rtol=2e-5, err_msg=op)
    want = tf.raw_ops.RandomGammaGrad(alpha=a, sample=x).numpy()
    np.testing.assert_allclose(run1("RandomGammaGrad", a, x), want, rtol=2e-5)


def _ref(value) -> Var:
    v = Var(DataType.DT_INT32, (), "counter")
    v.set(np.int32(value))
    return v


def test_count_up_to_returns_old_value_then_out_of_range():
    var = _ref(1)
    assert run1("CountUpTo", var, limit=3) == 1
    assert run1("CountUpTo", var, limit=3) == 2
    with pytest.raises(OutOfRangeError, match="Reached limit of 3"):
        run1("CountUpTo", var, limit=3)
    assert var.value == 3


def test_resource_count_up_to():
    step = fake_step(ResourceMgr())
    handle = run(
        "VarHandleOp",
        [],
        {"dtype": DataType.DT_INT64, "shape": (), "shared_name": "c"},
        step=step,
    )[0]
    run("AssignVariableOp", [handle, np.int64(0)], step=step)
    attrs = {"T": DataType.DT_INT64, "limit": 2}
    got = [run("ResourceCountUpTo", [handle], attrs, step=step)[0] for _ in range(2)]
    assert got == [0, 1]
    with pytest.raises(OutOfRangeError, match="Reached limit of 2"):
        run("ResourceCountUpTo", [handle], attrs, step=step)


def test_ref_identity_forwards_the_variable():
    var = _ref(4)
    assert run1("RefIdentity", var, T=DataType.DT_INT32) is var
