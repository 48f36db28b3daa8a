"""Client, training: TF1's queue-based input pipeline (tf.train.limit_epochs,
input_producer, string_input_producer, range_input_producer, slice_input_producer,
batch, batch_join, shuffle_batch, shuffle_batch_join), built as tensorflow.compat.v1's
training/input.py builds them: a queue, its enqueue ops in a QueueRunner, a
fill-fraction summary, and a DequeueMany (or DequeueUpTo) named after the scope."""

from __future__ import annotations

from typing import Any

from client import summary
from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.framework.tensor_shape import as_shape
from client.ops import array_ops, math_ops, random_ops
from client.ops.queues import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
from client.ops.variables import Variable
from client.training.queue_runner import QueueRunner, add_queue_runner


def limit_epochs(tensor: Any, num_epochs: int | None = None, name: str | None = None) -> Any:
    """`tensor`, failing with OutOfRange after it has been evaluated num_epochs times (a
    local `epochs` counter and CountUpTo)."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    with _ops.name_scope(name, "limit_epochs", [tensor]) as scope:
        zero64 = constant(0, dtype=dtypes.int64)
        epochs = Variable(
            zero64,
            name="epochs",
            trainable=False,
            collections=[_ops.GraphKeys.LOCAL_VARIABLES],
        )
        counter = apply_op(
            "ResourceCountUpTo",
            [epochs.handle],
            {"limit": num_epochs, "T": dtypes.int64},
        ).outputs[0]
        with _ops.control_dependencies([counter]):
            return array_ops.identity(tensor, name=scope)


def input_producer(
    input_tensor: Any,
    element_shape: Any = None,
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    summary_name: str | None = None,
    name: str | None = None,
    cancel_op: Any = None,
) -> FIFOQueue:
    """A queue filled with the rows of `input_tensor` (shuffled per epoch) by a
    QueueRunner."""
    with _ops.name_scope(name, "input_producer", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.shape[1:].merge_with(as_shape(element_shape))
        if not element_shape.is_fully_defined():
            raise ValueError(
                "Either `input_tensor` must have a fully defined shape "
                "or `element_shape` must be specified"
            )
        if shuffle:
            input_tensor = random_ops.random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        q = FIFOQueue(
            capacity=capacity,
            dtypes=[input_tensor.dtype.base_dtype],
            shapes=[element_shape],
            shared_name=shared_name,
            name=name or "fifo_queue",
        )
        enq = q.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(q, [enq], cancel_op=cancel_op))
        if summary_name is not None:
            summary.scalar(summary_name, math_ops.cast(q.size(), dtypes.float32) * (1.0 / capacity))
        return q


def string_input_producer(
    string_tensor: Any,
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
    cancel_op: Any = None,
) -> FIFOQueue:
    """A queue of strings (file names): input_producer with an Assert that the list is not
    empty."""
    not_null_err = "string_input_producer requires a non-null input tensor"
    if not isinstance(string_tensor, _ops.Tensor) and not len(string_tensor):
        raise ValueError(not_null_err)
    with _ops.name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=dtypes.string)
        condition = math_ops.greater(array_ops.size(string_tensor), 0)
        with _ops.name_scope(None, "Assert"):
            # As TF's Assert: the data converted once for its dtype check ("Const"), and
            # again by the op ("Assert/data_0").
            constant(not_null_err)
            check = apply_op("Assert", [condition, [not_null_err]], {"summarize": 3}, "Assert")
        with _ops.control_dependencies([check]):
            string_tensor = array_ops.identity(string_tensor)
        return input_producer(
            input_tensor=string_tensor,
            element_shape=[],
            num_epochs=num_epochs,
            shuffle=shuffle,
            seed=seed,
            capacity=capacity,
            shared_name=shared_name,
            name=scope,
            summary_name=f"fraction_of_{capacity}_full",
            cancel_op=cancel_op,
        )


def range_input_producer(
    limit: Any,
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
) -> FIFOQueue:
    with _ops.name_scope(name, "input_producer", [limit]) as scope:
        range_tensor = math_ops.range(limit)
        return input_producer(
            range_tensor,
            [],
            num_epochs,
            shuffle,
            seed,
            capacity,
            shared_name,
            f"fraction_of_{capacity}_full",
            scope,
        )


def slice_input_producer(
    tensor_list: Any,
    num_epochs: int | None = None,
    shuffle: bool = True,
    seed: int | None = None,
    capacity: int = 32,
    shared_name: str | None = None,
    name: str | None = None,
) -> list[Any]:
    """One row of every tensor in `tensor_list` per dequeue (the same row index)."""
    with _ops.name_scope(name, "input_producer", tensor_list):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        range_size = array_ops.shape(tensor_list[0])[0]
        queue = range_input_producer(
            range_size,
            num_epochs=num_epochs,
            shuffle=shuffle,
            seed=seed,
            capacity=capacity,
            shared_name=shared_name,
        )
        index = queue.dequeue()
        return [array_ops.gather(t, index) for t in tensor_list]


# ---------------------------------------------------------------------------------------
# Batching
# ---------------------------------------------------------------------------------------


def _as_tensor_list(tensors: Any) -> list[Any]:
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors)]
    return list(tensors)


def _as_original_type(original: Any, dequeued: Any) -> Any:
    if isinstance(original, dict):
        if len(original) == 1:
            dequeued = [dequeued]  # a one-component dequeue returns a bare tensor
        return {k: dequeued[i] for i, k in enumerate(sorted(original))}
    return dequeued


def _validate(tensor_list: list[Any], what: str = "batch") -> list[Any]:
    tensor_list = [convert_to_tensor(t) for t in tensor_list]
    if not tensor_list:
        raise ValueError(f"Expected at least one tensor in {what}().")
    return tensor_list


def _shapes(tensor_list_list: list[list[Any]], shapes: Any, enqueue_many: bool) -> list[Any]:
    if shapes is not None:
        return shapes
    n = len(tensor_list_list[0])
    out = []
    for i in range(n):
        merged = None
        for tl in tensor_list_list:
            shape = tl[i].shape
            if shape.ndims is None:
                raise ValueError(f"Cannot infer Tensor's rank: {tl[i]}")
            if enqueue_many:
                shape = shape.with_rank_at_least(1)[1:]
            merged = shape if merged is None else merged.merge_with(shape)
        out.append(merged)
    return out


def _enqueue(queue: Any, tensor_list_list: list[list[Any]], threads: int, many: bool) -> None:
    """One QueueRunner: `threads` copies of the enqueue op for one input list (batch),
    or one enqueue op per input list (batch_join)."""
    fn = queue.enqueue_many if many else queue.enqueue
    if len(tensor_list_list) == 1:
        ops = [fn(tensor_list_list[0])] * threads
    else:
        ops = [fn(tl) for tl in tensor_list_list]
    add_queue_runner(QueueRunner(queue, ops))


def _dequeue(queue: Any, batch_size: Any, allow_smaller: bool, name: str) -> Any:
    if allow_smaller:
        return queue.dequeue_up_to(batch_size, name=name)
    return queue.dequeue_many(batch_size, name=name)


def _batch(
    tensors_list: list[Any],
    original: Any,
    batch_size: Any,
    num_threads: int,
    capacity: int,
    enqueue_many: bool,
    shapes: Any,
    dynamic_pad: bool,
    allow_smaller_final_batch: bool,
    shared_name: str | None,
    name: str | None,
    default: str,
) -> Any:
    lists = [_as_tensor_list(t) for t in tensors_list]
    with _ops.name_scope(name, default, [t for tl in lists for t in tl]) as scope:
        lists = [_validate(tl) for tl in lists]
        convert_to_tensor(True)  # TF's keep_input (always True here), named as TF's
        types = [t.dtype.base_dtype for t in lists[0]]
        shapes = _shapes(lists, shapes, enqueue_many)
        cls = PaddingFIFOQueue if dynamic_pad else FIFOQueue
        queue = cls(capacity=capacity, dtypes=types, shapes=shapes, shared_name=shared_name)
        _enqueue(queue, lists, num_threads, enqueue_many)
        summary.scalar(
            f"fraction_of_{capacity}_full",
            math_ops.cast(queue.size(), dtypes.float32) * (1.0 / capacity),
        )
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(original, dequeued)


def _shuffle_batch(
    tensors_list: list[Any],
    original: Any,
    batch_size: Any,
    capacity: int,
    min_after_dequeue: int,
    num_threads: int,
    seed: int | None,
    enqueue_many: bool,
    shapes: Any,
    allow_smaller_final_batch: bool,
    shared_name: str | None,
    name: str | None,
    default: str,
) -> Any:
    lists = [_as_tensor_list(t) for t in tensors_list]
    with _ops.name_scope(name, default, [t for tl in lists for t in tl]) as scope:
        if capacity <= min_after_dequeue:
            raise ValueError(
                f"capacity {capacity} must be bigger than min_after_dequeue {min_after_dequeue}."
            )
        lists = [_validate(tl) for tl in lists]
        convert_to_tensor(True)  # TF's keep_input
        types = [t.dtype.base_dtype for t in lists[0]]
        shapes = _shapes(lists, shapes, enqueue_many)
        queue = RandomShuffleQueue(
            capacity=capacity,
            min_after_dequeue=min_after_dequeue,
            seed=seed,
            dtypes=types,
            shapes=shapes,
            shared_name=shared_name,
        )
        _enqueue(queue, lists, num_threads, enqueue_many)
        full = math_ops.cast(
            math_ops.maximum(0, queue.size() - min_after_dequeue), dtypes.float32
        ) * (1.0 / (capacity - min_after_dequeue))
        summary.scalar(
            f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full", full
        )
        dequeued = _dequeue(queue, batch_size, allow_smaller_final_batch, scope)
        return _as_original_type(original, dequeued)


def batch(
    tensors: Any,
    batch_size: Any,
    num_threads: int = 1,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    return _batch(
        [tensors],
        tensors,
        batch_size,
        num_threads,
        capacity,
        enqueue_many,
        shapes,
        dynamic_pad,
        allow_smaller_final_batch,
        shared_name,
        name,
        "batch",
    )


def batch_join(
    tensors_list: Any,
    batch_size: Any,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes: Any = None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    return _batch(
        list(tensors_list),
        tensors_list[0],
        batch_size,
        1,
        capacity,
        enqueue_many,
        shapes,
        dynamic_pad,
        allow_smaller_final_batch,
        shared_name,
        name,
        "batch_join",
    )


def shuffle_batch(
    tensors: Any,
    batch_size: Any,
    capacity: int,
    min_after_dequeue: int,
    num_threads: int = 1,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    return _shuffle_batch(
        [tensors],
        tensors,
        batch_size,
        capacity,
        min_after_dequeue,
        num_threads,
        seed,
        enqueue_many,
        shapes,
        allow_smaller_final_batch,
        shared_name,
        name,
        "shuffle_batch",
    )


def shuffle_batch_join(
    tensors_list: Any,
    batch_size: Any,
    capacity: int,
    min_after_dequeue: int,
    seed: int | None = None,
    enqueue_many: bool = False,
    shapes: Any = None,
    allow_smaller_final_batch: bool = False,
    shared_name: str | None = None,
    name: str | None = None,
) -> Any:
    return _shuffle_batch(
        list(tensors_list),
        tensors_list[0],
        batch_size,
        capacity,
        min_after_dequeue,
        1,
        seed,
        enqueue_many,
        shapes,
        allow_smaller_final_batch,
        shared_name,
        name,
        "shuffle_batch_join",
    )
