"""Tests (ops stage): stack and TensorArray handles are resolved once per step and handle
tensor (common.ops.data_flow_ops.lookup_per_step), and a lookup still fails as before."""

from __future__ import annotations

import numpy as np
import pytest

from common.dtypes import DataType
from common.errors import NotFoundError
from common.executor.step import StepState
from common.resource_mgr import ResourceMgr
from tests.common.ops.kernel_harness import DEVICE
from tests.common.ops.test_data_flow_ops import Runner

F32 = DataType.DT_FLOAT


class CountingMgr(ResourceMgr):
    """A ResourceMgr that counts table lookups."""

    def __init__(self) -> None:
        super().__init__()
        self.finds = 0

    def find(self, container: str, name: str):
        self.finds += 1
        return super().find(container, name)


def test_stack_handle_is_looked_up_once_per_step() -> None:
    rm = CountingMgr()
    r = Runner(StepState(1, DEVICE, resource_mgr=rm))
    (h,) = r.run("StackV2", np.int32(-1), elem_type=F32)
    for k in range(5):
        r.run("StackPushV2", h, np.float32(k), T=F32)
    assert [float(r.run("StackPopV2", h, elem_type=F32)[0]) for _ in range(5)] == [4, 3, 2, 1, 0]
    assert rm.finds == 1
    with pytest.raises(Exception, match="empty"):
        r.run("StackPopV2", h, elem_type=F32)


def test_tensor_array_handle_is_looked_up_once_per_step() -> None:
    rm = CountingMgr()
    r = Runner(StepState(1, DEVICE, resource_mgr=rm))
    h, flow = r.run("TensorArrayV3", np.int32(3), dtype=F32)
    for k in range(3):
        flow = r.run("TensorArrayWriteV3", h, np.int32(k), np.float32(k + 1), flow, T=F32)[0]
    got = r.run("TensorArrayGatherV3", h, np.arange(3, dtype=np.int32), flow, dtype=F32)[0]
    np.testing.assert_array_equal(got, [1, 2, 3])
    assert rm.finds == 1


def test_each_step_resolves_its_own_handles() -> None:
    """A new step (a new StepState) looks the handle up again: after the first step's
    container is dropped the resource is gone, and the lookup says so."""
    rm = CountingMgr()
    first = Runner(StepState(1, DEVICE, resource_mgr=rm))
    (h,) = first.run("StackV2", np.int32(-1), elem_type=F32)
    first.run("StackPushV2", h, np.float32(1), T=F32)
    first.step.cleanup()
    second = Runner(StepState(1, DEVICE, resource_mgr=rm))
    with pytest.raises(NotFoundError, match="Could not find resource"):
        second.run("StackPushV2", h, np.float32(1), T=F32)
    assert rm.finds == 2


def test_a_missing_resource_is_not_remembered() -> None:
    """A handle that named nothing at its first use is looked up again at the next."""
    rm = CountingMgr()
    r = Runner(StepState(1, DEVICE, resource_mgr=rm))
    (h,) = r.run("StackV2", np.int32(-1), elem_type=F32)
    container, name = r.step.step_container, h.item().name
    stack = rm.find(container, name)
    rm.delete(container, name)
    with pytest.raises(NotFoundError):
        r.run("StackPushV2", h, np.float32(1), T=F32)
    rm.create(container, name, stack)
    r.run("StackPushV2", h, np.float32(2), T=F32)
    assert float(r.run("StackPopV2", h, elem_type=F32)[0]) == 2


def test_gradient_array_handle_is_one_tensor_per_step_and_source() -> None:
    """TensorArrayGradV3 asked again for the same forward handle and source answers the
    same handle tensor (so ops using it find the array once); another source gets
    another array, and values written through either handle land in one array."""
    rm = CountingMgr()
    r = Runner(StepState(1, DEVICE, resource_mgr=rm))
    h, flow = r.run("TensorArrayV3", np.int32(2), dtype=F32)
    g1, _ = r.run("TensorArrayGradV3", h, flow, source="gradients")
    g2, _ = r.run("TensorArrayGradV3", h, flow, source="gradients")
    other, _ = r.run("TensorArrayGradV3", h, flow, source="gradients_1")
    assert g1 is g2 and other is not g1
    assert g1.item().name != other.item().name
    r.run("TensorArrayWriteV3", g1, np.int32(0), np.float32(1), flow, T=F32)
    r.run("TensorArrayWriteV3", g2, np.int32(0), np.float32(2), flow, T=F32)  # aggregates
    assert float(r.run("TensorArrayReadV3", g1, np.int32(0), flow, dtype=F32)[0]) == 3
