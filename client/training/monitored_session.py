"""Client, training: tf.train.MonitoredTrainingSession, MonitoredSession, Scaffold and the
session creators (chief: restore or initialize; worker: wait until the chief has
initialized the shared variables).

A MonitoredSession owns a Session, a Coordinator and its queue-runner threads, and the
hooks: each run() merges the hooks' fetches and feeds into one Session.run and hands
them their results. OutOfRange ends a `with` block cleanly, as in TensorFlow. One thread
drives a MonitoredSession; its queue runners run in their own threads."""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from client import errors, summary
from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import constant
from client.ops import array_ops, control_flow_ops, math_ops
from client.ops import variables as _variables
from client.training import basic_session_run_hooks as _hooks
from client.training.checkpoint_management import latest_checkpoint
from client.training.coordinator import Coordinator
from client.training.queue_runner import start_queue_runners
from client.training.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunValues,
)

_LOG = logging.getLogger("tensorflow")
USE_DEFAULT = object()
_WORKER_POLL_SECS = 0.5  # TF waits 30 s between readiness checks; tests want less


def report_uninitialized_variables(
    var_list: Any = None, name: str = "report_uninitialized_variables"
) -> Any:
    """The names of the variables in var_list (default: global and local) that are not
    initialized, as a 1-D string tensor."""
    if var_list is None:
        var_list = _variables.global_variables() + _variables.local_variables()
    with _ops.name_scope(name):
        init_vars = [_variables.is_variable_initialized(v) for v in var_list]
        # As TF: the report itself runs on the CPU of wherever the graph's device
        # functions put it (a worker under replica_device_setter), not on the ps.
        local_device = os.environ.get("TF_DEVICE_FOR_UNINITIALIZED_VARIABLE_REPORTING", "/cpu:0")
        with _ops.device(local_device):
            if not var_list:
                return constant([], dtype=dtypes.string)
            mask = math_ops.logical_not(array_ops.stack(init_vars))
            names = constant([v.op.name for v in var_list])
            return array_ops.boolean_mask(names, mask)


class Scaffold:
    """The ops a MonitoredSession needs (init, readiness, local init, summaries, saver);
    those not given are made, or taken from their graph collections, by finalize()."""

    def __init__(
        self,
        init_op: Any = None,
        init_feed_dict: Any = None,
        init_fn: Any = None,
        ready_op: Any = None,
        ready_for_local_init_op: Any = None,
        local_init_op: Any = None,
        summary_op: Any = None,
        saver: Any = None,
        copy_from_scaffold: Any = None,
        local_init_feed_dict: Any = None,
    ) -> None:
        self._init_op, self._init_feed_dict, self._init_fn = init_op, init_feed_dict, init_fn
        self._ready_op, self._ready_for_local_init_op = ready_op, ready_for_local_init_op
        self._local_init_op, self._local_init_feed_dict = local_init_op, local_init_feed_dict
        self._summary_op, self._saver = summary_op, saver
        self._finalized = False

    @staticmethod
    def get_or_default(arg_name: str, collection_key: str, default_constructor: Any) -> Any:
        elements = _ops.get_collection(collection_key)
        if elements:
            if len(elements) > 1:
                raise RuntimeError(
                    f'More than one item in the collection "{collection_key}". Please '
                    f"indicate which one to use by passing it to the tf.Scaffold constructor "
                    f"as:  tf.Scaffold({arg_name}=item to use)"
                )
            return elements[0]
        op = default_constructor()
        if op is not None:
            _ops.add_to_collection(collection_key, op)
        return op

    def finalize(self) -> Scaffold:
        if self._finalized:
            return self
        keys = _ops.GraphKeys
        if self._init_op is None:
            self._init_op = Scaffold.get_or_default(
                "init_op",
                keys.INIT_OP,
                lambda: control_flow_ops.group(_variables.global_variables_initializer()),
            )
        if self._ready_op is None:
            self._ready_op = Scaffold.get_or_default(
                "ready_op", keys.READY_OP, report_uninitialized_variables
            )
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op",
                keys.READY_FOR_LOCAL_INIT_OP,
                lambda: report_uninitialized_variables(_variables.global_variables()),
            )
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default(
                "local_init_op",
                keys.LOCAL_INIT_OP,
                lambda: control_flow_ops.group(_variables.local_variables_initializer()),
            )
        if self._summary_op is None:
            self._summary_op = Scaffold.get_or_default(
                "summary_op", keys.SUMMARY_OP, summary.merge_all
            )
        if self._saver is None:
            from client.training.saver import Saver

            self._saver = Scaffold.get_or_default(
                "saver", "savers", lambda: Saver(max_to_keep=5, allow_empty=True)
            )
        self._finalized = True
        return self

    init_op = property(lambda self: self._init_op)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    local_init_op = property(lambda self: self._local_init_op)
    summary_op = property(lambda self: self._summary_op)
    saver = property(lambda self: self._saver)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    init_fn = property(lambda self: self._init_fn)


def _not_ready(sess: Any, op: Any) -> list[str]:
    if op is None:
        return []
    return [n.decode() if isinstance(n, bytes) else str(n) for n in sess.run(op)]


class ChiefSessionCreator:
    """Restores the latest checkpoint of checkpoint_dir, else runs the init op; then the
    local init op."""

    def __init__(
        self,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: Any = None,
        checkpoint_dir: str | None = None,
        checkpoint_filename_with_path: str | None = None,
    ) -> None:
        self._scaffold = scaffold or Scaffold()
        self._master, self._config = master, config
        self._checkpoint_dir, self._checkpoint_path = checkpoint_dir, checkpoint_filename_with_path

    def create_session(self) -> Any:
        from client.session import Session

        s = self._scaffold.finalize()
        sess = Session(self._master, graph=_ops.get_default_graph(), config=self._config)
        path = self._checkpoint_path or (
            latest_checkpoint(self._checkpoint_dir) if self._checkpoint_dir else None
        )
        if path:
            s.saver.restore(sess, path)
        else:
            if s.init_op is not None:
                sess.run(s.init_op, feed_dict=s.init_feed_dict)
            if s.init_fn:
                s.init_fn(s, sess)
        if s.local_init_op is not None:
            sess.run(s.local_init_op)
        not_ready = _not_ready(sess, s.ready_op)
        if not_ready:
            sess.close()
            raise RuntimeError(
                f"Init operations did not make model ready.  Init op: {s.init_op.name}, "
                f"init fn: {s.init_fn}, error: Variables not initialized: {', '.join(not_ready)}"
            )
        return sess


class WorkerSessionCreator:
    """Waits (up to max_wait_secs) for the chief to initialize the shared variables, then
    runs the local init op."""

    def __init__(
        self,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: Any = None,
        max_wait_secs: float = 30 * 60,
    ) -> None:
        self._scaffold = scaffold or Scaffold()
        self._master, self._config, self._max_wait_secs = master, config, max_wait_secs

    def create_session(self) -> Any:
        from client.session import Session

        s = self._scaffold.finalize()
        sess = Session(self._master, graph=_ops.get_default_graph(), config=self._config)
        deadline = time.monotonic() + self._max_wait_secs
        while True:
            not_ready = _not_ready(sess, s.ready_for_local_init_op)
            if not not_ready:
                if s.local_init_op is not None:
                    sess.run(s.local_init_op)
                if not _not_ready(sess, s.ready_op):
                    return sess
            if time.monotonic() >= deadline:
                sess.close()
                raise errors.DeadlineExceededError(
                    f"Session was not ready after waiting {self._max_wait_secs} secs: "
                    f"variables not initialized: {', '.join(not_ready)}"
                )
            _LOG.info("Waiting for model to be ready.  Ready_for_local_init_op:  %s", not_ready)
            time.sleep(_WORKER_POLL_SECS)


class MonitoredSession:
    def __init__(
        self, session_creator: Any = None, hooks: Any = None, stop_grace_period_secs: float = 120
    ) -> None:
        self._hooks = list(hooks or [])
        for h in self._hooks:
            h.begin()
        self._session_creator = session_creator or ChiefSessionCreator()
        self._stop_grace_period_secs = stop_grace_period_secs
        self._sess = self._session_creator.create_session()
        self._coord = Coordinator()
        self._threads = start_queue_runners(self._sess, coord=self._coord)
        for h in self._hooks:
            h.after_create_session(self._sess, self._coord)
        self._stop_requested = False
        self._closed = False

    @property
    def graph(self) -> Any:
        return self._sess.graph

    def should_stop(self) -> bool:
        return self._closed or self._stop_requested or self._coord.should_stop()

    def run(
        self, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None
    ) -> Any:
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        run_context = SessionRunContext(SessionRunArgs(fetches, feed_dict, options), self._sess)
        all_fetches: dict[Any, Any] = {"caller": fetches}
        feeds = dict(feed_dict or {})
        for i, h in enumerate(self._hooks):
            request = h.before_run(run_context)
            if request is None:
                continue
            if request.fetches is not None:
                all_fetches[i] = request.fetches
            for k, v in (request.feed_dict or {}).items():
                if k in feeds:
                    raise RuntimeError("Same tensor is fed by two hooks.")
                feeds[k] = v
        results = self._sess.run(
            all_fetches, feed_dict=feeds or None, options=options, run_metadata=run_metadata
        )
        for i, h in enumerate(self._hooks):
            h.after_run(run_context, SessionRunValues(results.get(i), options, run_metadata))
        if run_context.stop_requested:
            self._stop_requested = True
            self._coord.request_stop()
        return results["caller"]

    def close(self) -> None:
        self._close(call_end=True)

    def _close(self, call_end: bool) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if call_end:
                for h in self._hooks:
                    h.end(self._sess)
        finally:
            try:
                self._coord.request_stop()
                self._coord.join(
                    self._threads,
                    stop_grace_period_secs=self._stop_grace_period_secs,
                    ignore_live_threads=True,
                )
            except errors.OpError as e:
                _LOG.debug("queue runner stopped with %s", e)
            finally:
                self._sess.close()

    def __enter__(self) -> MonitoredSession:
        return self

    def __exit__(self, exception_type: Any, exception_value: Any, traceback: Any) -> bool:
        if exception_type in (errors.OutOfRangeError, StopIteration):
            exception_type = None
        self._close(call_end=exception_type is None)
        return exception_type is None


class SingularMonitoredSession(MonitoredSession):
    def __init__(
        self,
        hooks: Any = None,
        scaffold: Any = None,
        master: str = "",
        config: Any = None,
        checkpoint_dir: str | None = None,
        stop_grace_period_secs: float = 120,
    ) -> None:
        creator = ChiefSessionCreator(scaffold, master, config, checkpoint_dir)
        super().__init__(creator, hooks, stop_grace_period_secs)

    def raw_session(self) -> Any:
        return self._sess


def MonitoredTrainingSession(  # noqa: N802  (TensorFlow's name)
    master: str = "",
    is_chief: bool = True,
    checkpoint_dir: str | None = None,
    scaffold: Scaffold | None = None,
    hooks: Any = None,
    chief_only_hooks: Any = None,
    save_checkpoint_secs: Any = USE_DEFAULT,
    save_summaries_steps: Any = USE_DEFAULT,
    save_summaries_secs: Any = USE_DEFAULT,
    config: Any = None,
    stop_grace_period_secs: float = 120,
    log_step_count_steps: int = 100,
    max_wait_secs: float = 7200,
    save_checkpoint_steps: Any = USE_DEFAULT,
    summary_dir: str | None = None,
    save_graph_def: bool = True,
) -> MonitoredSession:
    """A MonitoredSession for training: the chief initializes or restores and runs the
    checkpoint, summary and step-counter hooks; other workers wait for the chief."""
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    else:
        save_summaries_steps = None if save_summaries_steps is USE_DEFAULT else save_summaries_steps
        save_summaries_secs = None if save_summaries_secs is USE_DEFAULT else save_summaries_secs
    if save_checkpoint_secs is USE_DEFAULT and save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    else:
        save_checkpoint_secs = None if save_checkpoint_secs is USE_DEFAULT else save_checkpoint_secs
        save_checkpoint_steps = (
            None if save_checkpoint_steps is USE_DEFAULT else save_checkpoint_steps
        )
    scaffold = scaffold or Scaffold()
    if not is_chief:
        worker = WorkerSessionCreator(scaffold, master, config, max_wait_secs)
        return MonitoredSession(worker, hooks or [], stop_grace_period_secs)
    all_hooks = list(chief_only_hooks or []) + list(hooks or [])
    creator = ChiefSessionCreator(scaffold, master, config, checkpoint_dir)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(
                _hooks.StepCounterHook(output_dir=summary_dir, every_n_steps=log_step_count_steps)
            )
        if (save_summaries_steps and save_summaries_steps > 0) or (
            save_summaries_secs and save_summaries_secs > 0
        ):
            all_hooks.append(
                _hooks.SummarySaverHook(
                    scaffold=scaffold,
                    save_steps=save_summaries_steps,
                    save_secs=save_summaries_secs,
                    output_dir=summary_dir,
                )
            )
    if checkpoint_dir and (
        (save_checkpoint_secs and save_checkpoint_secs > 0)
        or (save_checkpoint_steps and save_checkpoint_steps > 0)
    ):
        os.makedirs(checkpoint_dir, exist_ok=True)
        all_hooks.append(
            _hooks.CheckpointSaverHook(
                checkpoint_dir,
                save_steps=save_checkpoint_steps,
                save_secs=save_checkpoint_secs,
                scaffold=scaffold,
                save_graph_def=save_graph_def,
            )
        )
    return MonitoredSession(creator, all_hooks, stop_grace_period_secs)
