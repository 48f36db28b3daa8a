"""Client, training: tf.train.Supervisor — TF1's older training-loop manager. It builds
the init, readiness, local-init, summary and saver ops it was not given, finalizes the
graph, and in managed_session() prepares the session (the chief restores the latest
checkpoint of logdir or initializes; other workers wait for the chief's variables),
starts the queue runners and, for the chief with a logdir, the services that save a
checkpoint every save_model_secs and summaries every save_summaries_secs (each also
once at the start, as TensorFlow's looper threads do). One thread drives it."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

from client import summary as _summary
from client.framework import ops as _ops
from client.ops import control_flow_ops
from client.ops import variables as _variables
from client.training import training_util
from client.training.coordinator import Coordinator
from client.training.monitored_session import (
    ChiefSessionCreator,
    Scaffold,
    WorkerSessionCreator,
    report_uninitialized_variables,
)
from client.training.queue_runner import start_queue_runners

USE_DEFAULT = 0


class _Looper(threading.Thread):
    """Runs `fn` now and then every `secs` until the coordinator stops (TF's
    LooperThread with a timer)."""

    def __init__(self, coord: Coordinator, secs: float, fn: Any, name: str) -> None:
        super().__init__(name=name, daemon=True)
        self._coord, self._secs, self._fn = coord, secs, fn

    def run(self) -> None:
        with self._coord.stop_on_exception():
            while True:
                self._fn()
                if self._coord.wait_for_stop(self._secs):
                    return


class Supervisor:
    USE_DEFAULT = USE_DEFAULT

    def __init__(
        self,
        graph: Any = None,
        ready_op: Any = USE_DEFAULT,
        ready_for_local_init_op: Any = USE_DEFAULT,
        is_chief: bool = True,
        init_op: Any = USE_DEFAULT,
        init_feed_dict: Any = None,
        local_init_op: Any = USE_DEFAULT,
        logdir: str | None = None,
        summary_op: Any = USE_DEFAULT,
        saver: Any = USE_DEFAULT,
        global_step: Any = USE_DEFAULT,
        save_summaries_secs: float = 120,
        save_model_secs: float = 600,
        recovery_wait_secs: float = 30,
        stop_grace_secs: float = 120,
        checkpoint_basename: str = "model.ckpt",
        session_manager: Any = None,
        summary_writer: Any = USE_DEFAULT,
        init_fn: Any = None,
        local_init_run_options: Any = None,
    ) -> None:
        self._graph = graph or _ops.get_default_graph()
        self._is_chief, self._logdir = is_chief, logdir
        self._save_summaries_secs, self._save_model_secs = save_summaries_secs, save_model_secs
        self._stop_grace_secs = stop_grace_secs
        self._save_path = os.path.join(logdir, checkpoint_basename) if logdir else None
        self._coord = Coordinator()
        self._started_threads: list[threading.Thread] = []
        with self._graph.as_default():
            self._init_op = (
                control_flow_ops.group(_variables.global_variables_initializer())
                if init_op is USE_DEFAULT
                else init_op
            )
            self._ready_op = (
                report_uninitialized_variables() if ready_op is USE_DEFAULT else ready_op
            )
            self._ready_for_local_init_op = (
                report_uninitialized_variables(_variables.global_variables())
                if ready_for_local_init_op is USE_DEFAULT
                else ready_for_local_init_op
            )
            self._local_init_op = (
                control_flow_ops.group(_variables.local_variables_initializer())
                if local_init_op is USE_DEFAULT
                else local_init_op
            )
            self._summary_op = _summary.merge_all() if summary_op is USE_DEFAULT else summary_op
            if saver is USE_DEFAULT:
                from client.training.saver import Saver

                # As TF's: a Saver only when there is something to save.
                saver = Saver() if _variables.global_variables() else None
            self._saver = saver
            self._global_step = (
                training_util.get_global_step() if global_step is USE_DEFAULT else global_step
            )
        self._summary_writer = None
        if is_chief and logdir:
            if summary_writer is USE_DEFAULT:
                summary_writer = _summary.FileWriter(logdir)
            self._summary_writer = summary_writer
        self._scaffold = Scaffold(
            init_op=self._init_op,
            init_feed_dict=init_feed_dict,
            init_fn=(lambda scaffold, sess: init_fn(sess)) if init_fn else None,
            ready_op=self._ready_op,
            ready_for_local_init_op=self._ready_for_local_init_op,
            local_init_op=self._local_init_op,
            summary_op=self._summary_op,
            saver=self._saver,
        )
        self._graph.finalize()

    # -- properties ------------------------------------------------------------------------
    coord = property(lambda self: self._coord)
    is_chief = property(lambda self: self._is_chief)
    saver = property(lambda self: self._saver)
    global_step = property(lambda self: self._global_step)
    summary_writer = property(lambda self: self._summary_writer)
    summary_op = property(lambda self: self._summary_op)
    init_op = property(lambda self: self._init_op)
    ready_op = property(lambda self: self._ready_op)
    save_path = property(lambda self: self._save_path)

    # -- sessions --------------------------------------------------------------------------
    def prepare_or_wait_for_session(
        self,
        master: str = "",
        config: Any = None,
        wait_for_checkpoint: bool = False,
        max_wait_secs: float = 7200,
        start_standard_services: bool = True,
    ) -> Any:
        self._coord.clear_stop()
        with self._graph.as_default():
            if self._is_chief:
                creator: Any = ChiefSessionCreator(self._scaffold, master, config, self._logdir)
            else:
                creator = WorkerSessionCreator(self._scaffold, master, config, max_wait_secs)
            sess = creator.create_session()
        if start_standard_services:
            self.start_standard_services(sess)
        self._started_threads.extend(self.start_queue_runners(sess))
        return sess

    def start_standard_services(self, sess: Any) -> list[threading.Thread]:
        """For the chief with a logdir: the checkpoint and summary loops."""
        if not (self._is_chief and self._logdir):
            return []
        threads: list[threading.Thread] = []
        if self._save_model_secs and self._saver is not None:
            threads.append(
                _Looper(self._coord, self._save_model_secs, lambda: self._save(sess), "SVCkpt")
            )
        if self._save_summaries_secs and self._summary_op is not None and self._summary_writer:
            threads.append(
                _Looper(
                    self._coord,
                    self._save_summaries_secs,
                    lambda: self._write_summary(sess),
                    "SVSummary",
                )
            )
        for t in threads:
            t.start()
        self._started_threads.extend(threads)
        return threads

    def _step(self, sess: Any) -> int | None:
        return None if self._global_step is None else int(sess.run(self._global_step))

    def _save(self, sess: Any) -> None:
        self._saver.save(sess, self._save_path, global_step=self._step(sess))

    def _write_summary(self, sess: Any) -> None:
        assert self._summary_writer is not None
        self._summary_writer.add_summary(sess.run(self._summary_op), self._step(sess))

    def start_queue_runners(self, sess: Any, queue_runners: Any = None) -> list[threading.Thread]:
        if queue_runners is None:
            with self._graph.as_default():
                return start_queue_runners(sess, coord=self._coord)
        threads: list[threading.Thread] = []
        for qr in queue_runners:
            threads.extend(qr.create_threads(sess, coord=self._coord, daemon=True, start=True))
        return threads

    def summary_computed(self, sess: Any, summary: Any, global_step: Any = None) -> None:
        if self._summary_writer is None:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self._global_step is not None:
            global_step = self._step(sess)
        self._summary_writer.add_summary(summary, global_step)

    # -- stopping --------------------------------------------------------------------------
    def should_stop(self) -> bool:
        return self._coord.should_stop()

    def request_stop(self, ex: Any = None) -> None:
        self._coord.request_stop(ex=ex)

    def stop_on_exception(self) -> Any:
        return self._coord.stop_on_exception()

    def wait_for_stop(self) -> None:
        self._coord.wait_for_stop()

    def stop(
        self,
        threads: Any = None,
        close_summary_writer: bool = True,
        ignore_live_threads: bool = False,
    ) -> None:
        """Stop the services and queue runners and wait for them; re-raises an exception
        reported through request_stop (not OutOfRange)."""
        self._coord.request_stop()
        try:
            self._coord.join(
                list(self._started_threads) + list(threads or []),
                stop_grace_period_secs=self._stop_grace_secs,
                ignore_live_threads=ignore_live_threads,
            )
        finally:
            self._started_threads = []
            if close_summary_writer and self._summary_writer is not None:
                self._summary_writer.close()

    def loop(
        self, timer_interval_secs: float, target: Any, args: Any = None, kwargs: Any = None
    ) -> threading.Thread:
        thread = _Looper(
            self._coord,
            timer_interval_secs,
            lambda: target(*(args or ()), **(kwargs or {})),
            "SVLoop",
        )
        thread.start()
        self._started_threads.append(thread)
        return thread

    @contextlib.contextmanager
    def managed_session(
        self,
        master: str = "",
        config: Any = None,
        start_standard_services: bool = True,
        close_summary_writer: bool = True,
    ) -> Iterator[Any]:
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(
                master, config, start_standard_services=start_standard_services
            )
            yield sess
        except Exception as e:  # noqa: BLE001  (reported, re-raised by stop() unless clean)
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                if sess is not None:
                    with contextlib.suppress(Exception):
                        sess.close()
