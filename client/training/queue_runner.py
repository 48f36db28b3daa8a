"""Client, training: tf.train.QueueRunner, add_queue_runner and start_queue_runners —
threads that run a queue's enqueue ops in a session until the input ends, then close the
queue (TF's queue_runner_impl).

A QueueRunner is thread-safe: its threads share one lock for the per-session count of
live enqueue loops; the last loop to end runs the close op, and a coordinator's stop
request runs the cancel op (closing the queue with pending enqueues cancelled)."""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any

from client import errors
from client.framework import ops as _ops

_LOG = logging.getLogger(__name__)


class QueueRunner:
    def __init__(
        self,
        queue: Any = None,
        enqueue_ops: Any = None,
        close_op: Any = None,
        cancel_op: Any = None,
        queue_closed_exception_types: Any = None,
        queue_runner_def: Any = None,
        import_scope: str | None = None,
    ) -> None:
        if queue_runner_def is not None:
            raise NotImplementedError(
                "QueueRunner(queue_runner_def=...): this client neither exports nor imports "
                "queue runners in meta graphs (it has no QueueRunnerDef); build the QueueRunner "
                "from the imported queue and enqueue ops instead"
            )
        if not queue or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = (
            cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        )
        self._queue_closed_exception_types = tuple(
            queue_closed_exception_types or (errors.OutOfRangeError,)
        )
        self._lock = threading.Lock()
        # Per session: live enqueue loops, and the exceptions the threads hit.
        self._runs_per_session: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        self._exceptions_raised: list[BaseException] = []

    queue = property(lambda self: self._queue)
    enqueue_ops = property(lambda self: self._enqueue_ops)
    close_op = property(lambda self: self._close_op)
    cancel_op = property(lambda self: self._cancel_op)
    queue_closed_exception_types = property(lambda self: self._queue_closed_exception_types)
    name = property(lambda self: self._queue.name)

    @property
    def exceptions_raised(self) -> list[BaseException]:
        return list(self._exceptions_raised)

    def _run(self, sess: Any, enqueue_op: Any, coord: Any) -> None:
        decremented = False
        try:
            while True:
                if coord and coord.should_stop():
                    break
                try:
                    sess.run(enqueue_op)
                except self._queue_closed_exception_types:
                    # The input ended (or the queue closed): the last loop closes it.
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        if self._runs_per_session[sess] == 0:
                            try:
                                sess.run(self._close_op)
                            except Exception as e:  # noqa: BLE001  (TF logs and goes on)
                                _LOG.info("Ignored exception: %s", e)
                    return
        except Exception as e:  # noqa: BLE001  (reported to the coordinator, as TF's)
            if coord:
                coord.request_stop(e)
            else:
                _LOG.error("Exception in QueueRunner: %s", e)
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess: Any, cancel_op: Any, coord: Any) -> None:
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception as e:  # noqa: BLE001  (the session may be closing: TF ignores it)
            _LOG.debug("Ignored exception: %s", e)

    def create_threads(
        self, sess: Any, coord: Any = None, daemon: bool = False, start: bool = False
    ) -> list[threading.Thread]:
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []  # already running in this session
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [
            threading.Thread(target=self._run, args=(sess, op, coord), name=f"QueueRunner-{i}")
            for i, op in enumerate(self._enqueue_ops)
        ]
        if coord:
            threads.append(
                threading.Thread(
                    target=self._close_on_stop,
                    args=(sess, self._cancel_op, coord),
                    name="QueueRunner-close",
                )
            )
        for t in threads:
            if coord:
                coord.register_thread(t)
            t.daemon = daemon
            if start:
                t.start()
        return threads


def add_queue_runner(qr: QueueRunner, collection: str = _ops.GraphKeys.QUEUE_RUNNERS) -> None:
    _ops.add_to_collection(collection, qr)


def start_queue_runners(
    sess: Any = None,
    coord: Any = None,
    daemon: bool = True,
    start: bool = True,
    collection: str = _ops.GraphKeys.QUEUE_RUNNERS,
) -> list[threading.Thread]:
    """Start the threads of every QueueRunner in the graph's `collection`."""
    if sess is None:
        from client.session import get_default_session

        sess = get_default_session()
        if not sess:
            raise ValueError(
                "Cannot start queue runners: No default session is registered. Use "
                "`with sess.as_default()` or pass an explicit session to "
                "tf.start_queue_runners(sess=sess)"
            )
    with sess.graph.as_default():
        threads: list[threading.Thread] = []
        for qr in _ops.get_collection(collection):
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
