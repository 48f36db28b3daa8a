"""Tests (ops stage): TensorArrays, stacks and queues — exact semantics per op, TF's error
codes and messages, async queue attempts (enqueue wakes a parked dequeue, close, timeout,
step abort), and signatures against TensorFlow's."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from common.dtypes import DataType
from common.errors import (
    AbortedError,
    CancelledError,
    DeadlineExceededError,
    InvalidArgumentError,
    OutOfRangeError,
)
from common.executor.step import StepState
from common.ops import registry
from common.ops.data_flow_ops import Stack
from common.ops.registry import OpKernelContext
from common.resource_mgr import ResourceMgr
from tests.common.ops.kernel_harness import DEVICE, construction, op_def_mismatches

F32, I32 = DataType.DT_FLOAT, DataType.DT_INT32
FLOW = np.float32(0)

OPS = [
    "TensorArrayV3",
    "TensorArrayReadV3",
    "TensorArrayWriteV3",
    "TensorArrayGatherV3",
    "TensorArrayScatterV3",
    "TensorArrayConcatV3",
    "TensorArraySplitV3",
    "TensorArraySizeV3",
    "TensorArrayCloseV3",
    "TensorArrayGradV3",
    "TensorArrayGradWithShape",
    "StackV2",
    "StackPushV2",
    "StackPopV2",
    "StackCloseV2",
    "Stack",
    "StackPush",
    "StackPop",
    "StackClose",
    "FIFOQueueV2",
    "PaddingFIFOQueueV2",
    "RandomShuffleQueueV2",
    "QueueEnqueueV2",
    "QueueEnqueueManyV2",
    "QueueDequeueV2",
    "QueueDequeueManyV2",
    "QueueDequeueUpToV2",
    "QueueCloseV2",
    "QueueSizeV2",
    "QueueIsClosedV2",
]


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name: str) -> None:
    pytest.importorskip("tensorflow")
    assert op_def_mismatches(name) == []


class Runner:
    """Runs kernels on one device with one StepState, as an executor would."""

    def __init__(self, step: StepState | None = None) -> None:
        self.step = step or StepState(step_id=1, device=DEVICE, resource_mgr=ResourceMgr())

    def compute(self, op: str, inputs: list, attrs: dict, node: str):
        k = construction(op, inputs, attrs, node)
        kdef = registry.lookup_kernel(op, "CPU", "", node)
        return kdef, kdef.factory(k), OpKernelContext(self.step, (0, 0), node)

    def run(self, op: str, *inputs, node: str | None = None, **attrs) -> list:
        kdef, compute, ctx = self.compute(op, list(inputs), attrs, node or op)
        assert not kdef.is_async
        return compute(ctx, list(inputs))

    def start(self, op: str, *inputs, node: str | None = None, **attrs) -> Pending:
        kdef, compute, ctx = self.compute(op, list(inputs), attrs, node or op)
        assert kdef.is_async
        pending = Pending()
        compute(ctx, list(inputs), pending.done)
        return pending


class Pending:
    """The outcome of an async kernel: set exactly once."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.calls: list[tuple] = []

    def done(self, outputs, error) -> None:
        self.calls.append((outputs, error))
        self.event.set()

    @property
    def finished(self) -> bool:
        return self.event.is_set()

    def result(self) -> list:
        assert self.event.wait(10)
        assert len(self.calls) == 1
        outputs, error = self.calls[0]
        if error is not None:
            raise error
        return outputs


# ---------------------------------------------------------------------------------------
# TensorArray
# ---------------------------------------------------------------------------------------


def _ta(r: Runner, size: int, **attrs) -> np.ndarray:
    handle, flow = r.run("TensorArrayV3", np.int32(size), dtype=F32, **attrs)
    assert flow == 0.0 and flow.dtype == np.float32
    return handle


def test_tensor_array_write_read_size_in_step_container() -> None:
    r = Runner()
    h = _ta(r, 3)
    assert h.item().container == r.step.step_container
    r.run("TensorArrayWriteV3", h, np.int32(1), np.array([1.0, 2.0], np.float32), FLOW)
    assert r.run("TensorArraySizeV3", h, FLOW)[0] == 3
    np.testing.assert_array_equal(r.run("TensorArrayReadV3", h, np.int32(1), FLOW, dtype=F32)[0],
                                  [1.0, 2.0])  # fmt: skip
    r.step.cleanup()
    assert r.step.resource_mgr.containers() == []


def test_tensor_array_read_errors_like_tensorflow() -> None:
    r = Runner()
    h = _ta(r, 2)
    r.run("TensorArrayWriteV3", h, np.int32(0), np.float32(5), FLOW)
    assert r.run("TensorArrayReadV3", h, np.int32(0), FLOW, dtype=F32)[0] == 5
    with pytest.raises(InvalidArgumentError, match="Could not read index 0 twice because it "
                       "was cleared after a previous read"):  # fmt: skip
        r.run("TensorArrayReadV3", h, np.int32(0), FLOW, dtype=F32)
    with pytest.raises(InvalidArgumentError, match="Could not read from TensorArray index 1"):
        r.run("TensorArrayReadV3", h, np.int32(1), FLOW, dtype=F32)
    with pytest.raises(InvalidArgumentError, match="Tried to read from index 2 but array size "
                       "is: 2"):  # fmt: skip
        r.run("TensorArrayReadV3", h, np.int32(2), FLOW, dtype=F32)
    with pytest.raises(InvalidArgumentError, match="TensorArray dtype is float but Op "
                       "requested dtype int32"):  # fmt: skip
        r.run("TensorArrayReadV3", h, np.int32(0), FLOW, dtype=I32)


def test_tensor_array_unwritten_read_with_full_shape_is_zeros() -> None:
    r = Runner()
    h = _ta(r, 2, element_shape=(2, 1))
    out = r.run("TensorArrayReadV3", h, np.int32(1), FLOW, dtype=F32)[0]
    np.testing.assert_array_equal(out, np.zeros((2, 1), np.float32))


def test_tensor_array_write_errors_like_tensorflow() -> None:
    r = Runner()
    h = _ta(r, 2, element_shape=(2,))
    r.run("TensorArrayWriteV3", h, np.int32(0), np.zeros(2, np.float32), FLOW)
    with pytest.raises(InvalidArgumentError, match="index 0 because it has already been "
                       "written to"):  # fmt: skip
        r.run("TensorArrayWriteV3", h, np.int32(0), np.zeros(2, np.float32), FLOW)
    with pytest.raises(InvalidArgumentError, match=r"array is not resizeable and size is: 2"):
        r.run("TensorArrayWriteV3", h, np.int32(2), np.zeros(2, np.float32), FLOW)
    with pytest.raises(InvalidArgumentError, match=r"value shape is \[3\] which is "
                       r"incompatible with the TensorArray's inferred element shape: \[2\]"):  # fmt: skip
        r.run("TensorArrayWriteV3", h, np.int32(1), np.zeros(3, np.float32), FLOW)
    with pytest.raises(InvalidArgumentError, match="trying to write dtype int32"):
        r.run("TensorArrayWriteV3", h, np.int32(1), np.zeros(2, np.int32), FLOW)


def test_tensor_array_dynamic_size_grows() -> None:
    r = Runner()
    h = _ta(r, 0, dynamic_size=True)
    r.run("TensorArrayWriteV3", h, np.int32(4), np.float32(1), FLOW)
    assert r.run("TensorArraySizeV3", h, FLOW)[0] == 5


def test_tensor_array_scatter_gather_concat_split() -> None:
    r = Runner()
    h = _ta(r, 3, clear_after_read=False)
    value = np.arange(6, dtype=np.float32).reshape(3, 2)
    r.run("TensorArrayScatterV3", h, np.array([2, 0, 1], np.int32), value, FLOW)
    gathered = r.run("TensorArrayGatherV3", h, np.array([0, 1, 2], np.int32), FLOW, dtype=F32)
    np.testing.assert_array_equal(gathered[0], value[[1, 2, 0]])
    concat, lengths = r.run("TensorArrayConcatV3", h, FLOW, dtype=F32)
    np.testing.assert_array_equal(concat, value[[1, 2, 0]].reshape(-1))
    assert lengths.tolist() == [2, 2, 2] and lengths.dtype == np.int64

    h2 = _ta(r, 2)
    r.run("TensorArraySplitV3", h2, np.arange(5, dtype=np.float32), np.array([2, 3]), FLOW)
    np.testing.assert_array_equal(r.run("TensorArrayReadV3", h2, np.int32(1), FLOW,
                                        dtype=F32)[0], [2, 3, 4])  # fmt: skip
    with pytest.raises(InvalidArgumentError, match=r"size of lengths \(2 vs. 1\)"):
        r.run("TensorArraySplitV3", _ta(r, 2), np.zeros(2, np.float32), np.array([2]), FLOW)


def test_tensor_array_scatter_keeps_its_own_copy() -> None:
    # Scatter copies the value once and stores its rows: a later change to the input
    # array (a forwarded buffer) does not reach the array's elements.
    r = Runner()
    h = _ta(r, 3)
    value = np.arange(6, dtype=np.float32).reshape(3, 2)
    r.run("TensorArrayScatterV3", h, np.array([2, 0, 1], np.int32), value, FLOW)
    value[:] = -1
    read = r.run("TensorArrayReadV3", h, np.int32(0), FLOW, dtype=F32)[0]
    np.testing.assert_array_equal(read, [2, 3])
    assert read.dtype == np.float32


def test_tensor_array_gather_of_empty_uses_element_shape() -> None:
    r = Runner()
    h = _ta(r, 0)
    out = r.run("TensorArrayGatherV3", h, np.zeros(0, np.int32), FLOW, dtype=F32,
                element_shape=(3,))[0]  # fmt: skip
    assert out.shape == (0, 3)
    with pytest.raises(InvalidArgumentError, match="is not fully defined"):
        r.run("TensorArrayGatherV3", h, np.zeros(0, np.int32), FLOW, dtype=F32)


def test_tensor_array_grad_shares_size_and_aggregates() -> None:
    r = Runner()
    h = _ta(r, 2, element_shape=(2,))
    g1, _ = r.run("TensorArrayGradV3", h, FLOW, source="gradients")
    g2, _ = r.run("TensorArrayGradV3", h, FLOW, source="gradients")
    assert g1.item() == g2.item() and g1.item().name.endswith("@gradients")
    assert r.run("TensorArraySizeV3", g1, FLOW)[0] == 2
    for v in (1.0, 2.5):
        r.run("TensorArrayWriteV3", g1, np.int32(0), np.full(2, v, np.float32), FLOW)
    np.testing.assert_array_equal(r.run("TensorArrayReadV3", g2, np.int32(0), FLOW,
                                        dtype=F32)[0], [3.5, 3.5])  # fmt: skip
    # Index 1 was never written: zeros of the element shape (TF's gradient behaviour).
    np.testing.assert_array_equal(r.run("TensorArrayReadV3", g1, np.int32(1), FLOW,
                                        dtype=F32)[0], [0, 0])  # fmt: skip
    gs, _ = r.run("TensorArrayGradWithShape", h, FLOW, np.array([4], np.int32), source="s")
    out = r.run("TensorArrayReadV3", gs, np.int32(0), FLOW, dtype=F32)[0]
    assert out.shape == (4, 2)


def test_tensor_array_close() -> None:
    r = Runner()
    h = _ta(r, 1)
    r.run("TensorArrayCloseV3", h)
    with pytest.raises(InvalidArgumentError, match="has already been closed"):
        r.run("TensorArraySizeV3", h, FLOW)


# ---------------------------------------------------------------------------------------
# Stacks
# ---------------------------------------------------------------------------------------


def test_stack_v2_push_pop_lifo_and_errors() -> None:
    r = Runner()
    (h,) = r.run("StackV2", np.int32(2), elem_type=F32, stack_name="s")
    assert h.item().container == r.step.step_container
    assert r.run("StackPushV2", h, np.float32(1))[0] == 1
    r.run("StackPushV2", h, np.float32(2))
    with pytest.raises(InvalidArgumentError, match=r"overflowed its max_size \(2\)"):
        r.run("StackPushV2", h, np.float32(3))
    with pytest.raises(InvalidArgumentError, match="Must have type float but got int32"):
        r.run("StackPopV2", h, elem_type=I32)
    assert [r.run("StackPopV2", h, elem_type=F32)[0] for _ in range(2)] == [2, 1]
    with pytest.raises(InvalidArgumentError, match=r"Stack\[.*\] is empty."):
        r.run("StackPopV2", h, elem_type=F32)
    r.run("StackCloseV2", h)
    with pytest.raises(InvalidArgumentError, match="has already been closed"):
        r.run("StackPushV2", h, np.float32(1))


def test_stack_v1_ref_handle_carries_the_stack() -> None:
    r = Runner()
    (stack,) = r.run("Stack", elem_type=I32)
    assert isinstance(stack, Stack)
    r.run("StackPush", stack, np.int32(7), T=I32)
    assert r.run("StackPop", stack, elem_type=I32)[0] == 7


# ---------------------------------------------------------------------------------------
# Queues
# ---------------------------------------------------------------------------------------


def _fifo(r: Runner, node: str = "fifo", **attrs) -> np.ndarray:
    attrs.setdefault("component_types", [F32])
    return r.run("FIFOQueueV2", node=node, **attrs)[0]


def test_queue_is_named_like_tensorflow_and_persists_across_steps() -> None:
    rm = ResourceMgr()
    first, second = (
        Runner(StepState(1, DEVICE, resource_mgr=rm)),
        Runner(StepState(2, DEVICE, resource_mgr=rm)),
    )
    h = _fifo(first)
    assert (h.item().container, h.item().name) == ("localhost", "_0_fifo")
    assert _fifo(second).item() == h.item()  # another executor of the same node
    assert _fifo(first, shared_name="q").item().name == "q"
    first.start("QueueEnqueueV2", h, np.float32(3), Tcomponents=[F32]).result()
    first.step.cleanup()
    assert second.start("QueueDequeueV2", h, component_types=[F32]).result()[0] == 3


def test_dequeue_on_empty_is_parked_until_enqueue() -> None:
    r = Runner()
    h = _fifo(r)
    pending = r.start("QueueDequeueV2", h, component_types=[F32])
    assert not pending.finished
    r.start("QueueEnqueueV2", h, np.float32(4), Tcomponents=[F32]).result()
    assert pending.result()[0] == 4
    assert r.run("QueueSizeV2", h)[0] == 0


def test_close_fails_parked_dequeue_with_out_of_range() -> None:
    r = Runner()
    h = _fifo(r)
    pending = r.start("QueueDequeueV2", h, component_types=[F32])
    r.run("QueueCloseV2", h)
    with pytest.raises(OutOfRangeError) as e:
        pending.result()
    assert str(e.value) == (
        "FIFOQueue '_0_fifo' is closed and has insufficient elements (requested 1, current size 0)"
    )
    assert r.run("QueueIsClosedV2", h)[0]
    with pytest.raises(CancelledError, match="FIFOQueue '_0_fifo' is closed."):
        r.start("QueueEnqueueV2", h, np.float32(1), Tcomponents=[F32]).result()


def test_step_abort_fails_parked_dequeue_with_the_step_error() -> None:
    r = Runner()
    h = _fifo(r)
    pending = r.start("QueueDequeueV2", h, component_types=[F32])
    r.step.abort(AbortedError("step 1 cancelled"))
    with pytest.raises(AbortedError, match="step 1 cancelled"):
        pending.result()
    # The attempt left the queue: a later element stays for the next dequeue.
    other = Runner(StepState(2, DEVICE, resource_mgr=r.step.resource_mgr))
    other.start("QueueEnqueueV2", h, np.float32(1), Tcomponents=[F32]).result()
    assert other.run("QueueSizeV2", h)[0] == 1


def test_timeout_ms_fails_with_deadline_exceeded() -> None:
    r = Runner()
    h = _fifo(r)
    pending = r.start("QueueDequeueV2", h, component_types=[F32], timeout_ms=10)
    with pytest.raises(DeadlineExceededError):
        pending.result()


def test_enqueue_waits_for_capacity() -> None:
    r = Runner()
    h = _fifo(r, capacity=1, component_types=[I32])
    r.start("QueueEnqueueV2", h, np.int32(1), Tcomponents=[I32]).result()
    blocked = r.start("QueueEnqueueV2", h, np.int32(2), Tcomponents=[I32])
    assert not blocked.finished
    assert r.start("QueueDequeueV2", h, component_types=[I32]).result()[0] == 1
    assert blocked.result() == []
    assert r.start("QueueDequeueV2", h, component_types=[I32]).result()[0] == 2


def test_dequeue_many_and_up_to() -> None:
    r = Runner()
    h = _fifo(r, component_types=[F32, I32], shapes=[(2,), ()])
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    r.start("QueueEnqueueManyV2", h, x, np.arange(3, dtype=np.int32),
            Tcomponents=[F32, I32]).result()  # fmt: skip
    a, b = r.start("QueueDequeueManyV2", h, np.int32(2), component_types=[F32, I32]).result()
    np.testing.assert_array_equal(a, x[:2])
    assert b.tolist() == [0, 1]
    pending = r.start("QueueDequeueUpToV2", h, np.int32(5), component_types=[F32, I32])
    assert not pending.finished  # up_to returns fewer only once the queue is closed
    r.run("QueueCloseV2", h)
    a, b = pending.result()
    assert a.shape == (1, 2) and b.tolist() == [2]
    with pytest.raises(InvalidArgumentError, match=r"Shape mismatch in tuple component 0. "
                       r"Expected \[2\], got \[3\]"):  # fmt: skip
        r.start("QueueEnqueueV2", _fifo(r, "q2", shapes=[(2,)]), np.zeros(3, np.float32),
                Tcomponents=[F32])  # fmt: skip


def test_dequeue_many_edge_cases_as_tensorflow() -> None:
    r = Runner()
    h = _fifo(r, shapes=[()])
    r.start("QueueEnqueueManyV2", h, np.ones(2, np.float32), Tcomponents=[F32]).result()
    (none,) = r.start("QueueDequeueManyV2", h, np.int32(0), component_types=[F32]).result()
    assert none.shape == (0,) and r.run("QueueSizeV2", h)[0] == 2  # n=0 takes nothing
    (shuffled,) = r.run("RandomShuffleQueueV2", node="rs", component_types=[F32],
                        shapes=[()], min_after_dequeue=5)  # fmt: skip
    (none,) = r.start("QueueDequeueUpToV2", shuffled, np.int32(0), component_types=[F32]).result()
    assert none.shape == (0,)  # does not wait for min_after_dequeue
    unshaped = _fifo(r, "unshaped")
    r.start("QueueEnqueueV2", unshaped, np.float32(1), Tcomponents=[F32]).result()
    for op in ("QueueDequeueManyV2", "QueueDequeueUpToV2"):
        with pytest.raises(InvalidArgumentError, match="FIFOQueue's DequeueMany and DequeueUpTo "
                           "require the components to have specified shapes."):  # fmt: skip
            r.start(op, unshaped, np.int32(1), component_types=[F32]).result()


@pytest.mark.parametrize(
    "first,second,message",
    [
        ({"capacity": 10}, {"capacity": 15},
         "Shared queue 'sq' has capacity 10 but requested capacity was 15"),
        ({"capacity": -1}, {"capacity": 3},
         "Shared queue 'sq' has capacity 2147483647 but requested capacity was 3"),
        ({"component_types": [F32, I32]}, {"component_types": [F32, DataType.DT_INT64]},
         "Shared queue 'sq' has component types float, int32 but requested component types "
         "were float, int64"),
        ({"shapes": [()]}, {"shapes": [(3,)]},
         r"Shared queue 'sq' has component shapes \[\[\]\] but requested component shapes "
         r"were \[\[3\]\]"),
    ],
)  # fmt: skip
def test_shared_queue_attributes_must_match(first, second, message) -> None:
    r = Runner()
    _fifo(r, "a", shared_name="sq", **first)
    with pytest.raises(InvalidArgumentError, match=message):
        _fifo(r, "b", shared_name="sq", **second)


def test_shared_random_shuffle_queue_attributes_must_match() -> None:
    r = Runner()

    def make(node: str, **attrs):
        return r.run("RandomShuffleQueueV2", node=node, component_types=[F32], shared_name="s",
                     **attrs)  # fmt: skip

    make("a", min_after_dequeue=2, seed=1)
    with pytest.raises(InvalidArgumentError, match="has min_after_dequeue 2 but requested "
                       "min_after_dequeue was 3."):  # fmt: skip
        make("b", min_after_dequeue=3, seed=1)
    with pytest.raises(InvalidArgumentError, match=r"has random seeds \(1, 0\) but requested "
                       r"seeds are \(2, 0\)."):  # fmt: skip
        make("c", min_after_dequeue=2, seed=2)
    with pytest.raises(
        InvalidArgumentError, match="Expected RandomShuffleQueue, found FIFOQueueV2"
    ):
        _fifo(r, "d", shared_name="s")


def test_padding_queue_pads_batches() -> None:
    r = Runner()
    (h,) = r.run("PaddingFIFOQueueV2", component_types=[I32], shapes=[(None,)])
    for v in ([1, 2, 3], [4]):
        r.start("QueueEnqueueV2", h, np.array(v, np.int32), Tcomponents=[I32]).result()
    (out,) = r.start("QueueDequeueManyV2", h, np.int32(2), component_types=[I32]).result()
    assert out.tolist() == [[1, 2, 3], [4, 0, 0]]


def test_random_shuffle_queue_returns_every_element_once() -> None:
    r = Runner()
    (h,) = r.run("RandomShuffleQueueV2", component_types=[I32], min_after_dequeue=2, seed=3)
    r.start("QueueEnqueueManyV2", h, np.arange(5, dtype=np.int32), Tcomponents=[I32]).result()
    got = [r.start("QueueDequeueV2", h, component_types=[I32]).result()[0] for _ in range(3)]
    pending = r.start("QueueDequeueV2", h, component_types=[I32])
    assert not pending.finished  # two must stay until the queue closes
    r.run("QueueCloseV2", h)
    got.append(pending.result()[0])
    got.append(r.start("QueueDequeueV2", h, component_types=[I32]).result()[0])
    assert sorted(int(g) for g in got) == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------------------------------
# In a Session: a parked dequeue never holds a thread past its step
# ---------------------------------------------------------------------------------------


def _queue_graph() -> bytes:
    tf = pytest.importorskip("tensorflow.compat.v1")
    graph = tf.Graph()
    with graph.as_default():
        q = tf.FIFOQueue(3, [tf.float32], shapes=[[]], name="fifo")
        x = tf.placeholder(tf.float32, [], name="x")
        q.enqueue([x], name="enqueue")
        q.dequeue(name="dequeue")
        q.close(name="close")
    return graph.as_graph_def().SerializeToString()


def test_session_step_timeout_frees_a_parked_dequeue() -> None:
    from common.session import Session

    session = Session(_queue_graph())
    with pytest.raises(DeadlineExceededError):
        session.run(["dequeue:0"], timeout_s=0.2)
    session.run([], {"x:0": np.float32(6)}, targets=["enqueue"])
    assert session.run(["dequeue:0"])[0] == 6  # the aborted attempt took nothing
    session.run([], targets=["close"])
    with pytest.raises(OutOfRangeError, match="FIFOQueue '_0_fifo' is closed and has "
                       r"insufficient elements \(requested 1, current size 0\)"):  # fmt: skip
        session.run(["dequeue:0"])
